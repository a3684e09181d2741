//! ATIF trajectories (Harbor's Agent Trajectory Interchange Format, v1.0 to
//! v1.8, `harbor/models/trajectories/`): one JSON document whose `steps`
//! come from the `system`, the `user` or the `agent`. Harbor converts
//! Claude Code, Codex, Gemini CLI, OpenHands, mini-swe-agent and more into
//! it, and `reloop export --atif` writes it, so any of them replays here.
//!
//! - `agent` steps are model calls: `message` (text, or content parts whose
//!   text is kept), `reasoning_content`, `tool_calls`, `metrics`
//!   (`prompt_tokens` includes the cached ones, as reloop counts;
//!   `metrics.extra.cache_write_tokens` or Anthropic's
//!   `cache_creation_input_tokens` are the cache writes), `model_name`; the
//!   step's `observation.results` answer its calls by `source_call_id`.
//! - `user` steps are user messages; the first `system` step before any
//!   agent step is the system prompt; a `system` step marked
//!   `extra.context_management` of `type` `compaction` is a compaction whose
//!   summary is its message (other types, such as `reloop export`'s
//!   `clearing` of old tool results, are counted as ignored). `reloop export`'s end step of a run whose model call failed
//!   for good (`extra.reloop.outcome` `llm_error`, `context_exceeded`) is
//!   that failed call. Other system steps (notes, the end step of other
//!   runs) are counted as ignored.
//! - Steps copied from an earlier trajectory (`is_copied_context`) were not
//!   calls of this run: ignored. `subagent_trajectories` are counted as
//!   ignored: the parent's observation holds what the sub-agent returned,
//!   which is what the replay serves.
//!
//! The accounting unit is a step (`line` N is step N).

use reloop_wire::ToolSpec;
use serde_json::Value;

use super::{content_text, str_at, u64_at};
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// The versions Harbor's validator accepts.
const VERSIONS: [&str; 9] = ["ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4", "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7", "ATIF-v1.8"];

/// The outcomes of `reloop export`'s end step that are a failed model call.
const FAILED_CALL_ENDS: [&str; 2] = ["llm_error", "context_exceeded"];

/// Agents Harbor names that have a reloop tool preset.
const PRESET_AGENTS: [(&str, &str); 4] = [("claude-code", "claude-code"), ("codex", "codex"), ("pi", "pi"), ("opencode", "opencode")];

/// Whether a JSON document is an ATIF trajectory (for `--format auto`).
pub fn is_atif(document: &Value) -> bool {
    str_at(document, "schema_version").is_some_and(|v| v.starts_with("ATIF-")) && document.get("steps").is_some_and(Value::is_array)
}

/// Reads an ATIF trajectory.
pub fn parse(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "atif", ..Default::default() };
    let Some(document) = super::whole_document(text, &mut session) else {
        return session;
    };
    let version = str_at(&document, "schema_version").unwrap_or_default();
    let Some(steps) = document.get("steps").and_then(Value::as_array).filter(|_| VERSIONS.contains(&version)) else {
        session.lines.read = 1;
        session.lines.skip(1, format!("schema_version {version:?} with `steps`: expected ATIF-v1.0 to ATIF-v1.8; nothing imported"));
        return session;
    };
    let agent = document.get("agent").unwrap_or(&Value::Null);
    let agent_name = str_at(agent, "name").unwrap_or_default();
    session.agent = PRESET_AGENTS.iter().find(|(name, _)| *name == agent_name).map(|(_, preset)| *preset);
    session.model = str_at(agent, "model_name").map(str::to_owned);
    session.declared_tools = agent.get("tool_definitions").and_then(Value::as_array).into_iter().flatten().filter_map(tool_spec).collect();
    for (index, step) in steps.iter().enumerate() {
        step_item(&mut session, step, index + 1);
    }
    let subagents = document.get("subagent_trajectories").and_then(Value::as_array).map_or(0, Vec::len);
    for _ in 0..subagents {
        session.lines.read += 1;
        session.lines.ignore("subagent_trajectories (their result is the parent's observation)");
    }
    session
}

fn step_item(session: &mut ImportedSession, step: &Value, unit: usize) {
    session.lines.read += 1;
    if step.get("is_copied_context").and_then(Value::as_bool) == Some(true) {
        return session.lines.ignore("is_copied_context");
    }
    let message = content_text(step.get("message").unwrap_or(&Value::Null));
    match str_at(step, "source") {
        Some("system") if step.pointer("/extra/context_management").is_some_and(|m| matches!(str_at(m, "type"), Some("compaction") | None)) => {
            session.lines.used += 1;
            session.items.push(Item::Compaction(Compaction::summary(message, unit)));
        }
        Some("system") if session.system.is_none() && !session.items.iter().any(|i| matches!(i, Item::Assistant(_))) => {
            session.lines.used += 1;
            session.system = Some(message);
        }
        Some("system") if FAILED_CALL_ENDS.contains(&step.pointer("/extra/reloop/outcome").and_then(Value::as_str).unwrap_or_default()) => {
            // `reloop export`'s last step of a run whose model call failed
            // for good: the replay ends on the same error.
            session.lines.used += 1;
            let error = step.pointer("/extra/reloop/error").and_then(Value::as_str).unwrap_or(&message);
            session.items.push(Item::ProviderError(ProviderError::from_message(error, None, unit)));
        }
        Some("system") if step.pointer("/extra/context_management").is_some() => session.lines.ignore("context_management other than compaction"),
        Some("system") => session.lines.ignore("system step"),
        Some("user") => {
            session.lines.used += 1;
            session.items.push(Item::User { text: message, line: unit });
        }
        Some("agent") => {
            session.lines.used += 1;
            let turn = agent_turn(step, message, unit);
            session.model = session.model.take().or_else(|| turn.model.clone());
            session.items.push(Item::Assistant(turn));
            for result in step.pointer("/observation/results").and_then(Value::as_array).into_iter().flatten() {
                match str_at(result, "source_call_id") {
                    Some(call_id) => session.items.push(Item::ToolResult(ToolResult {
                        call_id: call_id.to_owned(),
                        output: content_text(result.get("content").unwrap_or(&Value::Null)),
                        is_error: result.pointer("/extra/is_error").and_then(Value::as_bool).unwrap_or(false),
                        line: unit,
                    })),
                    None => session.lines.warn(unit, "an observation result without source_call_id answers no call: dropped"),
                }
            }
        }
        other => session.lines.skip(unit, format!("step with source {other:?}: skipped")),
    }
}

fn agent_turn(step: &Value, text: String, unit: usize) -> AssistantTurn {
    let mut turn = AssistantTurn { text, line: unit, ..Default::default() };
    turn.reasoning.extend(str_at(step, "reasoning_content").map(str::to_owned));
    turn.model = str_at(step, "model_name").map(str::to_owned);
    turn.tool_calls = step
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|call| ToolCall {
            id: str_at(call, "tool_call_id").unwrap_or_default().to_owned(),
            name: str_at(call, "function_name").unwrap_or_default().to_owned(),
            // `reloop export` keeps arguments that are not a JSON object
            // (truncated, redacted) as text under `extra.raw_arguments`.
            arguments: match (call.pointer("/extra/raw_arguments"), call.get("arguments")) {
                (Some(Value::String(raw)), _) => Arguments::Raw(raw.clone()),
                (_, Some(Value::String(text))) => Arguments::from_text(text),
                (_, Some(value)) => Arguments::Json(value.clone()),
                (_, None) => Arguments::Json(Value::Object(Default::default())),
            },
        })
        .collect();
    if let Some(metrics) = step.get("metrics").filter(|m| m.is_object()) {
        let extra = metrics.get("extra").unwrap_or(&Value::Null);
        let cache_write = extra.get("cache_write_tokens").or_else(|| extra.get("cache_creation_input_tokens")).and_then(Value::as_u64).unwrap_or(0);
        turn.usage = Some(RecordedUsage {
            input_tokens: u64_at(metrics, "prompt_tokens"),
            output_tokens: u64_at(metrics, "completion_tokens"),
            cache_read_tokens: u64_at(metrics, "cached_tokens"),
            cache_write_tokens: cache_write,
            // Harbor's Claude Code converter keeps Anthropic's usage under `extra`.
            cache_write_1h_tokens: extra.pointer("/cache_creation/ephemeral_1h_input_tokens").and_then(Value::as_u64).unwrap_or(0).min(cache_write),
        });
        turn.cost_usd = metrics.get("cost_usd").and_then(Value::as_f64);
    }
    turn.stop_reason = step.pointer("/extra/reloop/finish_reason").and_then(Value::as_str).map(str::to_owned);
    turn
}

/// A tool definition in OpenAI's function-calling shape
/// (`{type: function, function: {name, description, parameters}}`) or
/// bare (`{name, description, parameters}`).
fn tool_spec(definition: &Value) -> Option<ToolSpec> {
    let function = definition.get("function").unwrap_or(definition);
    Some(ToolSpec {
        name: str_at(function, "name")?.to_owned(),
        description: str_at(function, "description").unwrap_or_default().to_owned(),
        parameters: function.get("parameters").cloned().unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_become_the_conversation_with_usage_and_compactions() {
        let text = serde_json::json!({
            "schema_version": "ATIF-v1.6",
            "session_id": "s",
            "agent": {"name": "claude-code", "version": "2", "model_name": "claude-sonnet-4-5",
                      "tool_definitions": [{"type": "function", "function": {"name": "Bash", "description": "run", "parameters": {"type": "object"}}}]},
            "steps": [
                {"step_id": 1, "source": "system", "message": "You are careful."},
                {"step_id": 2, "source": "user", "message": [{"type": "text", "text": "Fix it."}]},
                {"step_id": 3, "source": "agent", "message": "Looking.", "reasoning_content": "think",
                 "tool_calls": [{"tool_call_id": "t1", "function_name": "Bash", "arguments": {"command": "ls"}}],
                 "observation": {"results": [{"source_call_id": "t1", "content": "a.rs"}, {"content": "stray"}]},
                 "metrics": {"prompt_tokens": 100, "completion_tokens": 7, "cached_tokens": 60, "cost_usd": 0.01, "extra": {"cache_creation_input_tokens": 40}}},
                {"step_id": 4, "source": "system", "message": "Summary so far.", "extra": {"context_management": {"type": "compaction", "boundary": "replace"}}},
                {"step_id": 5, "source": "user", "message": "old", "is_copied_context": true},
                {"step_id": 6, "source": "agent", "message": "Done."},
                {"step_id": 7, "source": "system", "message": "Run ended."}
            ],
            "subagent_trajectories": [{"schema_version": "ATIF-v1.8", "trajectory_id": "x", "agent": {"name": "a", "version": "1"}, "steps": []}]
        })
        .to_string();
        let session = parse(&text);
        assert_eq!(
            (session.agent, session.model.as_deref(), session.system.as_deref()),
            (Some("claude-code"), Some("claude-sonnet-4-5"), Some("You are careful."))
        );
        assert_eq!(session.declared_tools[0].name, "Bash");
        let Item::Assistant(turn) = &session.items[1] else { panic!("{:?}", session.items) };
        assert_eq!(
            turn.usage,
            Some(RecordedUsage { input_tokens: 100, output_tokens: 7, cache_read_tokens: 60, cache_write_tokens: 40, cache_write_1h_tokens: 0 })
        );
        assert_eq!((turn.reasoning.clone(), turn.cost_usd), (vec!["think".to_owned()], Some(0.01)));
        assert!(matches!(&session.items[2], Item::ToolResult(r) if r.call_id == "t1" && r.output == "a.rs"));
        assert!(matches!(&session.items[3], Item::Compaction(c) if c.summary == "Summary so far." && c.line == 4));
        assert!(matches!(&session.items[4], Item::Assistant(t) if t.text == "Done."));
        assert_eq!(session.items.len(), 5);
        assert_eq!((session.lines.read, session.lines.accounted()), (8, 8));
        assert_eq!(session.lines.warnings.len(), 1, "the stray result is reported");
    }

    #[test]
    fn an_unknown_version_is_refused_with_the_reason() {
        let session = parse(r#"{"schema_version": "ATIF-v2.0", "steps": []}"#);
        assert!(session.items.is_empty());
        assert!(session.lines.skipped[0].reason.contains("ATIF-v1.0 to ATIF-v1.8"), "{:?}", session.lines.skipped);
    }
}
