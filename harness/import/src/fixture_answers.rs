//! The fixture tools an import writes: each declared tool (from the
//! session, a preset, `--tools`, or generated from the calls) answering the
//! recorded calls with the recorded results. The scenario itself is the one
//! scenario type, `reloop_files::scenario::spec::ScenarioSpec`, so what an
//! import writes is what `reloop run` reads.

use reloop_files::presets::PresetTool;
use reloop_files::scenario::spec::{FixtureResult, ToolFixture};

/// The error of a call that the session never answered.
const NO_RESULT: &str = "no result was recorded for this call (the session ended or was interrupted)";

/// A fixture for `tool` with no answers yet.
pub fn declared(tool: PresetTool) -> ToolFixture {
    ToolFixture {
        description: tool.description,
        parameters: tool.parameters,
        latency_ms: 0,
        parallel_safe: tool.parallel_safe,
        risk: tool.risk,
        results: Vec::new(),
    }
}

/// Adds the recorded answer to one call: matched by its exact arguments
/// and used once, so a repeated call gets the next recorded answer.
/// `result` is the output or error text (`true`: an error); `None` when
/// nothing answered the call. Arguments that are not a JSON object cannot
/// be matched, and add nothing.
pub fn push_recorded(tool: &mut ToolFixture, arguments: &serde_json::Value, result: Option<(String, bool)>) {
    let serde_json::Value::Object(arguments) = arguments else {
        return;
    };
    let (output, error) = match result {
        Some((text, false)) => (Some(text), None),
        Some((text, true)) => (None, Some(text)),
        None => (None, Some(NO_RESULT.to_owned())),
    };
    tool.results.push(FixtureResult { when: Some(arguments.clone()), output, error, once: true, latency_ms: None });
}

/// Closes the fixture list: a call that matches no recorded answer gets an
/// error, not a made-up result.
pub fn push_unmatched(tool: &mut ToolFixture) {
    let error = Some("no recorded result matches these arguments".into());
    tool.results.push(FixtureResult { when: None, output: None, error, once: false, latency_ms: None });
}
