//! `reloop mcp-replay` and `reloop mcp-record`: an agent's stdio MCP
//! server answered from a recording, or recorded into one
//! (`reloop_eval::black_box::mcp`). Both are started by the agent, with
//! stdin and stdout its MCP channel: everything reloop says goes to stderr.

use reloop_eval::black_box::mcp::{record, replay};
use reloop_files::{validate_settings, yaml};
use reloop_recording::Recording;

use crate::app::{McpRecordArgs, McpReplayArgs};
use crate::exit_code;

/// Serves the recorded server until the client closes stdin, asking the
/// live server after `--` what the recording lacks: exit 0, or 1 when a
/// request went unanswered, 2 for a bad recording or server name.
pub fn replay(args: &McpReplayArgs) -> anyhow::Result<i32> {
    let recording: Recording = match yaml::load_checked(&args.recording, validate_settings::check_recording) {
        Ok(recording) => recording,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    let Some(server) = recording.mcp.iter().find(|server| server.name == args.server) else {
        let names: Vec<&str> = recording.mcp.iter().map(|server| server.name.as_str()).collect();
        eprintln!("error: {}: mcp: has no server `{}` (it has: {})", args.recording.display(), args.server, names.join(", "));
        return Ok(exit_code::BAD_INPUT);
    };
    let diverged = replay::serve(server, args.live.clone(), std::io::stdin().lock(), std::io::stdout().lock(), args.log.as_deref())?;
    Ok(if diverged == 0 { exit_code::SUCCESS } else { exit_code::EXPECTATIONS_FAILED })
}

/// Runs the server, recording it; its exit code, or 2 when `--out` is not
/// a recording or the server cannot start.
pub fn record(args: &McpRecordArgs) -> anyhow::Result<i32> {
    match record::record(&args.command, &args.server, &args.out, &args.redact_body) {
        Ok(code) => Ok(code),
        Err(error) => {
            eprintln!("error: {error}");
            Ok(exit_code::BAD_INPUT)
        }
    }
}
