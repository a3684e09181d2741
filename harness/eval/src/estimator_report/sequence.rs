//! The runtime calibration replayed over a realistic run: an agent reads the
//! files one per step, moving between kinds of text as a task does (the
//! files are interleaved across their directories), while Layer 0 clears
//! every result but the newest [`RETAIN_RECENT`]. Each request is estimated
//! as the loop does, counted as the mock server does, and fed to a
//! [`Calibration`] in order, so that request n is judged with what the
//! calibration learned from requests 1 to n − 1.

use std::path::{Path, PathBuf};

use reloop_agent::context::microcompact::{CLEARED_PLACEHOLDER, RETAIN_RECENT};
use reloop_agent::estimate::{Calibration, estimate_prompt};
use reloop_agent::tool_schema::FrozenToolSchema;
use reloop_agent::{LlmRequest, Message, ToolSpec, client::to_prompt};
use reloop_mock::TokenCounter;
use reloop_wire::{Format, ToolCall};

use super::{mean, relative_error};

/// The replayed run's system prompt (written for this replay).
const SYSTEM_PROMPT: &str = "You are a careful software engineering agent working in a repository. \
Read files before you change them, keep changes small, run the tests after each change, and explain \
what you found in a few sentences when you are done. Use the tools; do not guess file contents.";
/// The replayed run's task.
const TASK: &str = "Read through the project files one by one and summarize what each of them is for.";
/// Model name sent (the count does not depend on it).
const MODEL: &str = "gpt-4o";
/// Output slot sent (nor on this).
const MAX_OUTPUT_TOKENS: u32 = 4096;

/// How the calibration fared.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationRun {
    /// Requests replayed (one per file).
    pub requests: usize,
    /// MAPE of the uncalibrated estimate over requests 2 and later.
    pub uncalibrated_mape: f64,
    /// MAPE of the calibrated estimate over the same requests.
    pub calibrated_mape: f64,
}

/// Replays one read per file of `texts` (path, content).
pub fn replay_calibration(texts: &[(PathBuf, String)]) -> CalibrationRun {
    let order = interleave(texts);
    let tools = FrozenToolSchema::freeze(vec![read_file_spec()], Format::OpenaiChat, &Default::default());
    let tools_json = serde_json::to_string(tools.specs()).expect("tool specs are plain JSON");
    let counter = TokenCounter::new();
    let mut calibration = Calibration::new();
    let (mut raw_errors, mut calibrated_errors) = (Vec::new(), Vec::new());
    for step in 0..order.len() {
        let view = view(&order[..=step]);
        let raw = estimate_prompt(SYSTEM_PROMPT, &view, &tools_json);
        let request =
            LlmRequest { system: SYSTEM_PROMPT, messages: &view, tools: &tools, forbid_tools: false, max_output_tokens: MAX_OUTPUT_TOKENS, stream: true };
        let real = counter.count_prompt(&to_prompt(MODEL, &request)).total;
        if step > 0 {
            raw_errors.push(relative_error(raw, real).abs());
            calibrated_errors.push(relative_error(calibration.apply(raw), real).abs());
        }
        calibration.observe(raw, real);
    }
    CalibrationRun { requests: order.len(), uncalibrated_mape: mean(raw_errors.into_iter()), calibrated_mape: mean(calibrated_errors.into_iter()) }
}

/// A file read in the replay: its path and contents.
type Read<'a> = (&'a Path, &'a str);

/// Round robin over the files' directories, each directory in its order.
fn interleave(texts: &[(PathBuf, String)]) -> Vec<Read<'_>> {
    let mut dirs: Vec<Option<&Path>> = Vec::new();
    let mut queues: Vec<Vec<Read<'_>>> = Vec::new();
    for (path, text) in texts {
        let slot = dirs.iter().position(|dir| *dir == path.parent()).unwrap_or_else(|| {
            dirs.push(path.parent());
            queues.push(Vec::new());
            queues.len() - 1
        });
        queues[slot].push((path, text));
    }
    let longest = queues.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest).flat_map(|i| queues.iter().filter_map(move |queue| queue.get(i).copied())).collect()
}

/// The messages sent after reading `files`: the task, then a call and its
/// result per file, all but the newest results cleared.
fn view(files: &[Read<'_>]) -> Vec<Message> {
    let mut messages = vec![Message::user(TASK)];
    for (index, (path, text)) in files.iter().enumerate() {
        let call_id = format!("call_{index:03}");
        let arguments = serde_json::json!({ "path": path.display().to_string() }).to_string();
        let call = ToolCall { id: call_id.as_str().into(), name: "read_file".into(), arguments: arguments.into() };
        messages.push(Message::assistant(String::new(), vec![call]));
        let cleared = index + RETAIN_RECENT < files.len() && text.len() > CLEARED_PLACEHOLDER.len();
        let content = if cleared { CLEARED_PLACEHOLDER } else { text };
        messages.push(Message::ToolResult { call_id: call_id.into(), tool_name: "read_file".into(), content: content.into(), is_error: false });
    }
    messages
}

fn read_file_spec() -> ToolSpec {
    ToolSpec {
        name: "read_file".to_owned(),
        description: "Read a text file of the workspace and return its contents.".to_owned(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": { "path": { "type": "string", "description": "Path relative to the workspace root" } },
            "required": ["path"]
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(names: &[&str]) -> Vec<(PathBuf, String)> {
        names.iter().map(|n| (PathBuf::from(n), format!("contents of {n}, long enough to be cleared later on"))).collect()
    }

    #[test]
    fn files_interleave_across_directories() {
        let texts = texts(&["a/1", "a/2", "a/3", "b/1", "c/1", "c/2"]);
        let order: Vec<String> = interleave(&texts).iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(order, ["a/1", "b/1", "c/1", "a/2", "c/2", "a/3"]);
    }

    #[test]
    fn only_the_newest_results_stay() {
        let texts = texts(&["a", "b", "c", "d", "e"]);
        let order = interleave(&texts);
        let messages = view(&order);
        let contents: Vec<&str> = messages
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult { content, .. } => Some(content.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(&contents[..2], [CLEARED_PLACEHOLDER, CLEARED_PLACEHOLDER]);
        assert!(contents[2..].iter().all(|c| c.starts_with("contents of")), "{contents:?}");
    }

    #[test]
    fn calibration_does_not_make_a_steady_run_worse() {
        let texts: Vec<(PathBuf, String)> = (0..12).map(|i| (PathBuf::from(format!("d/{i}")), "fn step(x: u32) -> u32 { x + 1 }\n".repeat(20 + i))).collect();
        let run = replay_calibration(&texts);
        assert_eq!(run.requests, 12);
        assert!(run.calibrated_mape <= run.uncalibrated_mape + 1e-9, "{run:?}");
    }
}
