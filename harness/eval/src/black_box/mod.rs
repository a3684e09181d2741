//! Black-box runs: a scenario's `agent:` process is the system under test.
//! The run's mock server (faults and divergence as for the built-in loop)
//! listens on loopback; the agent gets its base URLs and dummy keys in the
//! environment and a fresh workspace; the report is built from what the
//! server saw ([`server_view`]) plus the process's exit code and output.

pub mod keeper;
pub mod mcp;
pub mod placeholders;
pub use reloop_files::agent_presets as presets;
pub mod process;
pub(crate) mod server_view;
pub mod tool_side;
pub mod workspace;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use reloop_agent::{Clock, Outcome, SharedClock, VirtualClock};

use crate::expect::{RunFacts, check};
use crate::result::{EventRow, RunReport};
use crate::run_metrics::{self, MetricFacts};
use crate::run_mock::start_mock;
use crate::scenario::Scenario;
use crate::scenario::agent::AgentSpec;
use mcp::McpLaunch;
use placeholders::Placeholders;
pub use process::kill_live_agents;
use process::{Ending, Launch};
use reloop_files::scenario::agent::ToolSideMode;
use tool_side::{ShellSetup, Shims};

/// The key both dummy API-key variables hold; the mock accepts any key.
const DUMMY_API_KEY: &str = "sk-reloop-black-box";

/// Runs `scenario`'s agent against a fresh mock session to its report;
/// `Err` is a harness error (no loopback, no workspace, no program).
pub async fn run(scenario: &Scenario, agent: &AgentSpec, cancel: &AtomicBool, wall: Instant) -> Result<RunReport, String> {
    let clock = VirtualClock::new();
    let shared: SharedClock = Arc::new(clock.clone());
    let (server, session) = start_mock(scenario, &shared).await?;

    let scratch = tempfile::Builder::new().prefix("reloop-agent-").tempdir().map_err(|e| format!("cannot make a workspace: {e}"))?;
    let workspace = scratch.path().join("workspace");
    let base_url = server.session_base_url("run");
    let workspace_text = workspace.display().to_string();
    let scenario_dir = std::path::absolute(scenario.file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new(".")))
        .map_err(|e| format!("cannot resolve the scenario's directory: {e}"))?;
    let scenario_dir = scenario_dir.display().to_string();
    let mut placeholders = Placeholders {
        task: &scenario.spec.task,
        workspace: &workspace_text,
        scenario_dir: &scenario_dir,
        base_url: &base_url,
        port: server.addr().port(),
        model: &scenario.spec.model,
        mcp: &[],
    };
    let recording_file = std::path::Path::new(&scenario_dir).join(&scenario.spec.recording);
    let mcp_log = scratch.path().join("mcp.jsonl");
    let mcp_servers = McpLaunch::of(agent, |text| placeholders.expand(text), &recording_file, &mcp_log)?;
    placeholders.mcp = &mcp_servers;
    let tools = tool_side::mode_of(agent.tools, scenario.live.as_deref());
    // The recorded workspace, under a replay: the run starts from its first snapshot.
    let recorded_workspace = scenario.recording.workspace.as_ref().filter(|_| matches!(tools, ToolSideMode::Replay | ToolSideMode::ReplayOrLive));
    if let Some(record) = recorded_workspace {
        std::fs::create_dir_all(&workspace).map_err(|e| format!("cannot make the workspace: {e}"))?;
        workspace::restore(&workspace, record)?;
    }
    write_files(&workspace, agent, &placeholders)?;
    if matches!(tools, ToolSideMode::Replay | ToolSideMode::ReplayOrLive) {
        tool_side::make_recorded_folders(&workspace, &scenario.recording.tool_side)?;
    }
    let argv: Vec<String> = agent.command.iter().map(|arg| placeholders.expand(arg)).collect();
    let mut env = environment(agent, &placeholders, scratch.path(), |name| std::env::var(name).ok());
    if let Some(missing) = process::missing_program(&argv, &env) {
        return Ok(skipped(scenario, &missing));
    }
    let setup = ShellSetup { interception: agent.shell_interception(), shell: agent.shell() };
    let snapshots = (tools == ToolSideMode::Record || recorded_workspace.is_some())
        .then(|| workspace::Snapshots::new(&workspace, recorded_workspace.map_or(workspace::MAX_FILE_BYTES, |record| record.max_file_bytes)));
    if let Some(snapshots) = &snapshots {
        snapshots.take(None);
        snapshots.watch(&session);
    }
    let shims = Shims::install((tools, setup), &scenario.recording.tool_side, (scratch.path(), &workspace), &env, &session)?;
    env.extend(shims.iter().flat_map(|shims| shims.env.iter().cloned()));
    let argv = match &shims {
        Some(shims) => shims.launch_argv(argv)?,
        None => argv,
    };
    let launch =
        Launch { argv: &argv, env, workspace: &workspace, scratch: scratch.path(), output_dir: scratch.path(), timeout: Duration::from_secs(agent.timeout_s) };
    let finished = process::spawn(&launch)?.finish(cancel, scratch.path()).await;

    if let Some(snapshots) = &snapshots {
        // The last turn ends as the agent does.
        snapshots.take(session.last_served());
    }
    let workspace_divergences = match (&snapshots, recorded_workspace) {
        (Some(snapshots), Some(recorded)) => workspace::divergences(&snapshots.record(), recorded),
        _ => Vec::new(),
    };
    let shells = shims.as_ref().map(Shims::read_log).unwrap_or_default();
    let mcp_requests = mcp::read_log(&mcp_log);
    let counts = shims.as_ref().map(|_| tool_side::ToolSideCounts::of(&shells).with_mcp(&mcp_requests));
    let view = server_view::server_view(scenario, &session, counts);
    let divergences = session.divergences();
    let log = session.log();
    let shell_divergences: Vec<String> =
        tool_side::divergences(&shells, &scenario.recording.tool_side).into_iter().chain(mcp::divergences(&mcp_requests)).collect();
    let outcome = server_view::outcome(&finished.ending, divergences.len() + shell_divergences.len(), &view);
    let shell_events: Vec<_> = shells
        .iter()
        .map(|line| tool_side::event(line, &scenario.recording.tool_side, (&log, &view.steps), clock.now_ms()))
        .chain(mcp_requests.iter().map(|line| EventRow {
            at_ms: clock.now_ms(),
            kind: mcp::EVENT_KIND.to_owned(),
            payload: mcp::event_payload(line).to_string(),
            ..EventRow::default()
        }))
        .chain(workspace_divergences.iter().map(|divergence| workspace::event(divergence, &view.steps, clock.now_ms())))
        .collect();
    let exit_code = match finished.ending {
        Ending::Exited(code) => code,
        Ending::TimedOut | Ending::Cancelled => None,
    };
    let metrics = run_metrics::build(MetricFacts {
        scenario,
        steps: &view.steps,
        log: &log,
        divergences: &divergences,
        retention: &view.retention,
        virtual_ms: clock.now_ms(),
        wall_ms: u64::try_from(wall.elapsed().as_millis()).unwrap_or(u64::MAX),
        kind: view.kind,
    });
    let failed_expectations = check(
        &scenario.spec.expect,
        &RunFacts {
            outcome,
            steps_used: metrics.steps_used,
            final_answer: view.final_answer.as_deref(),
            tool_calls: view.tool_calls.iter().map(String::as_str).collect(),
            doom_loop_detected: metrics.doom_loop_detected,
            doom_loop_kinds: view.doom_loop_kinds.clone(),
            cache_breaks: metrics.cache_breaks,
            llm_retries: metrics.llm_retries,
            cache_read_tokens: metrics.cache_read_tokens,
            cache_write_tokens: metrics.cache_write_tokens,
            exit_code,
        },
    );
    let error = match outcome {
        Outcome::AgentError | Outcome::AgentTimeout | Outcome::LlmError => Some(agent_output(&finished)),
        // The shell's divergence first: the request after it diverges because of it.
        Outcome::Divergence => shell_divergences
            .first()
            .cloned()
            .or_else(|| metrics.first_divergence.as_ref().map(ToString::to_string))
            .map(|divergence| format!("{divergence}\n{}", agent_output(&finished))),
        _ => None,
    };
    let mut report = RunReport {
        passed: failed_expectations.is_empty(),
        failed_expectations,
        final_answer: view.final_answer,
        error,
        agent_exit_code: exit_code,
        metrics,
        steps: view.steps,
        events: numbered(view.retention.events.into_iter().chain(shell_events).chain([exit_event(&finished, exit_code, clock.now_ms())])),
        divergences,
        ..RunReport::of(scenario, outcome)
    };
    report.metrics.workspace_diverged_at = workspace_divergences.first().map(|divergence| divergence.path.clone());
    let world = (tools == ToolSideMode::Record).then(|| crate::live_run::WorldSide {
        tool_side: tool_side::recorded(&shells, &session),
        workspace: snapshots.as_ref().map(|snapshots| snapshots.rerecorded(&session)),
    });
    crate::live_run::finish(scenario, &session, &mut report, world);
    Ok(report)
}

/// The report of a run whose program is not installed: `skipped`, with
/// what is missing and where to read how to install it.
fn skipped(scenario: &Scenario, program: &str) -> RunReport {
    RunReport {
        passed: true,
        error: Some(format!("skipped: `{program}` is not installed here (not on PATH); docs/black-box.md says how to install it")),
        ..RunReport::of(scenario, Outcome::Skipped)
    }
}

/// Variables of reloop's environment that every agent gets: the program
/// search path, the locale and the terminal type. Nothing else of the
/// user's environment (tokens, cloud keys, `HOME`) reaches an agent
/// unless its scenario or preset names it in `pass_env`.
const PASSED: [&str; 4] = ["PATH", "LANG", "LANGUAGE", "TERM"];

/// The agent's whole environment, an allowlist: [`PASSED`] and the
/// locale's `LC_*` from reloop's (`user` looks one up), then `HOME` and
/// `TMPDIR` in the run's scratch folder (`HOME` is the workspace),
/// `PWD`, the base URLs and dummy keys, the variables the scenario or
/// preset passes on (`pass_env`), and last its own `env:` (which wins).
/// `PWD` is the workspace: some agents (opencode) take their project
/// directory from it rather than from the real one.
fn environment(agent: &AgentSpec, placeholders: &Placeholders<'_>, scratch: &std::path::Path, user: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let locale = std::env::vars().map(|(name, _)| name).filter(|name| name.starts_with("LC_"));
    let passed = PASSED.iter().map(|name| (*name).to_owned()).chain(locale).chain(agent.pass_env.iter().cloned());
    let mut env: Vec<(String, String)> = passed.filter_map(|name| user(&name).map(|value| (name, value))).collect();
    let anthropic_base = placeholders.anthropic_base_url().to_owned();
    env.extend([
        ("HOME".to_owned(), placeholders.workspace.to_owned()),
        ("TMPDIR".to_owned(), scratch.join("tmp").display().to_string()),
        ("PWD".to_owned(), placeholders.workspace.to_owned()),
        ("RELOOP_BASE_URL".to_owned(), placeholders.base_url.to_owned()),
        ("OPENAI_BASE_URL".to_owned(), placeholders.base_url.to_owned()),
        ("OPENAI_API_KEY".to_owned(), DUMMY_API_KEY.to_owned()),
        ("ANTHROPIC_BASE_URL".to_owned(), anthropic_base),
        ("ANTHROPIC_API_KEY".to_owned(), DUMMY_API_KEY.to_owned()),
    ]);
    env.extend(agent.env.iter().map(|(key, value)| (key.clone(), placeholders.expand(value))));
    env
}

/// Makes the workspace and writes the scenario's files into it (paths were
/// checked to stay inside when the scenario was loaded).
fn write_files(workspace: &std::path::Path, agent: &AgentSpec, placeholders: &Placeholders<'_>) -> Result<(), String> {
    std::fs::create_dir_all(workspace).map_err(|e| format!("cannot make the workspace: {e}"))?;
    // The agent's TMPDIR, beside the workspace in the scratch folder.
    if let Some(scratch) = workspace.parent() {
        std::fs::create_dir_all(scratch.join("tmp")).map_err(|e| format!("cannot make the agent's TMPDIR: {e}"))?;
    }
    for (relative, contents) in &agent.files {
        let path = workspace.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, placeholders.expand(contents)).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// The agent's end as the run's one event: exit code and output.
fn exit_event(finished: &process::Finished, exit_code: Option<i32>, at_ms: u64) -> EventRow {
    let ending = match finished.ending {
        Ending::Exited(_) => "exited",
        Ending::TimedOut => "timed_out",
        Ending::Cancelled => "cancelled",
    };
    let payload = serde_json::json!({ "ending": ending, "exit_code": exit_code, "stdout": finished.stdout, "stderr": finished.stderr });
    EventRow { seq: 0, step: 0, at_ms, kind: "agent_exit".to_owned(), payload: payload.to_string(), ..EventRow::default() }
}

/// `rows` in order, numbered.
fn numbered(rows: impl Iterator<Item = EventRow>) -> Vec<EventRow> {
    rows.enumerate().map(|(seq, row)| EventRow { seq: seq as u64, ..row }).collect()
}

/// The end of the agent's standard error and standard output, for the
/// report's `error` and the terminal: the cause of a failure may be in
/// either (Claude Code reports its errors on stdout, as a JSON result).
fn agent_output(finished: &process::Finished) -> String {
    let streams = [("stderr", &finished.stderr), ("stdout", &finished.stdout)];
    let ends = streams.iter().map(|(name, text)| (name, tail(text))).filter(|(_, end)| !end.is_empty());
    ends.map(|(name, end)| format!("[{name}]\n{end}")).collect::<Vec<_>>().join("\n")
}

/// The last lines of an output (at most 12 lines of its last 1500 bytes),
/// so both streams of a failed run stay readable in a terminal.
fn tail(text: &str) -> String {
    const TAIL_BYTES: usize = 1500;
    const TAIL_LINES: usize = 12;
    let start = text.len().saturating_sub(TAIL_BYTES);
    let start = (start..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
    let lines: Vec<&str> = text[start..].trim().lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placeholders() -> Placeholders<'static> {
        Placeholders { task: "t", workspace: "/tmp/w", scenario_dir: "/s", base_url: "http://127.0.0.1:9/s/run/v1", port: 9, model: "m", mcp: &[] }
    }

    /// Regression: opencode took reloop's inherited `PWD` as its project
    /// directory and failed ("Unexpected server error") outside the workspace.
    #[test]
    fn the_agent_environment_sets_pwd_to_the_workspace_and_the_block_wins() {
        let agent: AgentSpec = serde_json::from_value(serde_json::json!({ "command": ["a"], "env": { "OPENAI_API_KEY": "mine" } })).unwrap();
        let env = environment(&agent, &placeholders(), std::path::Path::new("/tmp"), |_| None);
        let last = |key: &str| env.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!(last("PWD"), Some("/tmp/w"));
        assert_eq!(last("ANTHROPIC_BASE_URL"), Some("http://127.0.0.1:9/s/run"));
        assert_eq!(last("OPENAI_API_KEY"), Some("mine"));
    }

    /// Regression (issue 28): the agent got reloop's whole environment but
    /// two API keys, so `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
    /// `GEMINI_API_KEY` and the real `HOME` reached it.
    #[test]
    fn only_the_allowlist_and_what_the_scenario_passes_reach_the_agent() {
        let user = |name: &str| -> Option<String> {
            let planted = [
                ("PATH", "/usr/bin"),
                ("LANG", "C.UTF-8"),
                ("HOME", "/home/me"),
                ("GITHUB_TOKEN", "ghp_x"),
                ("AWS_SECRET_ACCESS_KEY", "aws"),
                ("GEMINI_API_KEY", "g"),
                ("MY_PROXY", "p"),
            ];
            planted.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        let agent: AgentSpec = serde_json::from_value(serde_json::json!({ "command": ["a"], "pass_env": ["MY_PROXY", "UNSET"] })).unwrap();
        let env = environment(&agent, &placeholders(), std::path::Path::new("/tmp/scratch"), user);
        let names: std::collections::BTreeSet<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        let expected = [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "HOME",
            "LANG",
            "MY_PROXY",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "PATH",
            "PWD",
            "RELOOP_BASE_URL",
            "TMPDIR",
        ];
        assert_eq!(names, expected.into_iter().collect());
        let value = |key: &str| env.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!((value("HOME"), value("TMPDIR"), value("PATH")), (Some("/tmp/w"), Some("/tmp/scratch/tmp"), Some("/usr/bin")));
    }
}
