//! What a run's model calls said, as the current GenAI conventions carry it
//! on a `chat` span: `gen_ai.system_instructions` and `gen_ai.input.messages`
//! (the system prompt and the task) on the run's first main-agent call, and
//! `gen_ai.output.messages` (the call's text and its tool calls, with their
//! arguments) on every main-agent call that answered. The tools' results
//! ride on the `execute_tool` spans. Enough for `reloop import --format
//! otlp` to rebuild the run as a scenario (`docs/export.md`).
//!
//! A sub-agent's calls carry none (the report keeps only the main agent's
//! text), nor the loop's own compaction calls, nor a failed attempt.

use serde_json::{Value, json};

use super::super::atif::Opening;
use super::super::{RunTrace, Step};
use super::text;

/// The content attributes of `step`'s `chat` span; `opening` is taken by the
/// first main-agent call.
pub(super) fn chat(run: &RunTrace, step: &Step, opening: &mut Option<&Opening>) -> Vec<Value> {
    if step.agent_depth > 0 || step.purpose == "compaction" || step.error.is_some() {
        return Vec::new();
    }
    let mut attributes = Vec::new();
    if let Some(opening) = opening.take() {
        if !opening.system.is_empty() {
            attributes.push(text("gen_ai.system_instructions", &json!([{"type": "text", "content": opening.system}]).to_string()));
        }
        let task = json!([{"role": "user", "parts": [{"type": "text", "content": opening.task}]}]);
        attributes.push(text("gen_ai.input.messages", &task.to_string()));
    }
    let mut parts = Vec::new();
    if let Some(said) = run.texts.get(&step.step).filter(|said| !said.is_empty()) {
        parts.push(json!({"type": "text", "content": said}));
    }
    let calls = run.events.iter().filter(|e| e.agent_depth == 0 && e.step == step.step && matches!(e.kind.as_str(), "tool_start" | "tool_denied"));
    for call in calls {
        let raw = call.text("arguments").unwrap_or("{}");
        // The conventions' arguments are an object; text that is not JSON is kept as the string it was.
        let arguments = serde_json::from_str::<Value>(raw).unwrap_or_else(|_| Value::String(raw.to_owned()));
        parts.push(json!({"type": "tool_call", "id": call.text("call_id"), "name": call.text("tool"), "arguments": arguments}));
    }
    let mut message = json!({"role": "assistant", "parts": parts});
    if let Some(reason) = &step.finish_reason {
        message["finish_reason"] = json!(reason);
    }
    attributes.push(text("gen_ai.output.messages", &json!([message]).to_string()));
    attributes
}
