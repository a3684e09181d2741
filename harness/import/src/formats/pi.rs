//! pi coding-agent sessions (badlogic/pi-mono,
//! `packages/coding-agent/src/core/session-manager.ts`): JSONL with a
//! `session` header. v1 files are linear; v2 and v3 entries carry
//! `id`/`parentId` and form a tree whose active branch runs from the last
//! entry back to the root. Also a bare `AssistantMessage` JSON object (as
//! pi's own test fixtures hold).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{content_text, str_at, u64_at};
use crate::jsonl::{Record, records};
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// Reads a pi session file (JSONL, or one bare assistant message).
pub fn parse(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "pi", agent: Some("pi"), ..Default::default() };
    let all = records(text, &mut session.lines);
    if all.is_empty() && !text.trim().is_empty() {
        return bare_message(text);
    }
    let branch = active_branch(&all);
    for record in &all {
        if !branch.contains(&record_key(record)) {
            session.lines.ignore_record(record, "off the active branch");
            continue;
        }
        entry(&mut session, record);
    }
    session
}

/// A pretty-printed single `AssistantMessage` (not a session): one turn.
fn bare_message(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "pi", agent: Some("pi"), ..Default::default() };
    session.lines.read = text.lines().count();
    match serde_json::from_str::<Value>(text) {
        Ok(value) if str_at(&value, "role") == Some("assistant") => {
            session.lines.used = session.lines.read;
            session.model = str_at(&value, "model").map(str::to_owned);
            session.items.push(Item::Assistant(assistant(&value, 1)));
        }
        Ok(_) => session.lines.skip(1, "a JSON document that is neither a session nor an assistant message: skipped"),
        Err(error) => session.lines.skip(error.line(), format!("not JSON ({error}): skipped")),
    }
    session
}

/// Identity of a record within the file (line and position among glued values).
fn record_key(record: &Record) -> (usize, Option<String>) {
    (record.line, str_at(&record.value, "id").map(str::to_owned))
}

/// The records on the active branch: for tree files, walk `parentId` from
/// the last entry with an id; linear (v1) files keep everything.
fn active_branch(all: &[Record]) -> HashSet<(usize, Option<String>)> {
    let is_tree = all.iter().any(|r| r.value.get("parentId").is_some());
    if !is_tree {
        return all.iter().map(record_key).collect();
    }
    let by_id: HashMap<&str, &Record> = all.iter().filter_map(|r| Some((str_at(&r.value, "id")?, r))).collect();
    let mut keep: HashSet<(usize, Option<String>)> = all.iter().filter(|r| str_at(&r.value, "type") == Some("session")).map(record_key).collect();
    let leaf = all.iter().rev().find(|r| str_at(&r.value, "type") != Some("session") && str_at(&r.value, "id").is_some());
    let mut cursor = leaf;
    while let Some(record) = cursor {
        keep.insert(record_key(record));
        cursor = str_at(&record.value, "parentId").and_then(|parent| by_id.get(parent).copied());
    }
    keep
}

/// One entry of the active branch.
fn entry(session: &mut ImportedSession, record: &Record) {
    let value = &record.value;
    match str_at(value, "type") {
        Some("session") => {
            session.lines.use_record(record);
            session.cwd = str_at(value, "cwd").map(str::to_owned);
            session.model = str_at(value, "modelId").map(str::to_owned).or(session.model.take());
        }
        Some("model_change") => {
            session.lines.use_record(record);
            session.model = str_at(value, "modelId").map(str::to_owned);
        }
        Some("message") => message(session, record),
        Some("compaction") | Some("branch_summary") => {
            session.lines.use_record(record);
            let summary = str_at(value, "summary").unwrap_or_default().to_owned();
            let tokens_before = value.get("tokensBefore").and_then(Value::as_u64);
            session.items.push(Item::Compaction(Compaction { tokens_before, ..Compaction::summary(summary, record.line) }));
        }
        Some(kind @ ("thinking_level_change" | "session_info" | "label" | "custom")) => session.lines.ignore_record(record, kind),
        Some("custom_message") => user(session, record, content_text(value.get("content").unwrap_or(&Value::Null))),
        other => session.lines.skip_record(record, format!("unknown entry type {other:?}: skipped")),
    }
}

/// A `message` entry: user, assistant, toolResult, bashExecution, custom.
fn message(session: &mut ImportedSession, record: &Record) {
    let Some(message) = record.value.get("message") else {
        return session.lines.skip_record(record, "message entry without `message`: skipped");
    };
    match str_at(message, "role") {
        Some("user" | "custom" | "hookMessage" | "branchSummary" | "compactionSummary") => {
            user(session, record, content_text(message.get("content").unwrap_or(&Value::Null)));
        }
        Some("assistant") if transcript_only(message) => {
            session.lines.ignore_record(record, "transcript-only assistant row (written by openclaw, not the model)");
        }
        Some("assistant") if str_at(message, "stopReason") == Some("aborted") => {
            // The user stopped it: results of its calls have no call.
            session.lines.use_record(record);
            session.items.push(Item::Interrupted { text: None, line: record.line });
        }
        Some("assistant") if str_at(message, "stopReason") == Some("error") => {
            session.lines.use_record(record);
            session.model = str_at(message, "model").map(str::to_owned).or(session.model.take());
            let text = str_at(message, "errorMessage").unwrap_or_default();
            session.items.push(Item::ProviderError(ProviderError::from_message(text, None, record.line)));
        }
        Some("assistant") => {
            session.lines.use_record(record);
            let turn = assistant(message, record.line);
            session.model = turn.model.clone().or(session.model.take());
            session.items.push(Item::Assistant(turn));
        }
        Some("toolResult") => {
            session.lines.use_record(record);
            session.items.push(Item::ToolResult(ToolResult {
                call_id: str_at(message, "toolCallId").unwrap_or_default().to_owned(),
                output: content_text(message.get("content").unwrap_or(&Value::Null)),
                is_error: message.get("isError").and_then(Value::as_bool).unwrap_or(false),
                line: record.line,
            }));
        }
        Some("bashExecution") if message.get("excludeFromContext").and_then(Value::as_bool) == Some(true) => {
            session.lines.ignore_record(record, "bashExecution excluded from context (`!!`): never sent to the model");
        }
        Some("bashExecution") => {
            let command = str_at(message, "command").unwrap_or_default();
            let output = str_at(message, "output").unwrap_or_default();
            user(session, record, format!("Ran `{command}`\n```\n{output}\n```"));
        }
        other => session.lines.skip_record(record, format!("message with unknown role {other:?}: skipped")),
    }
}

/// openclaw, a gateway built on pi, appends assistant rows that no model
/// wrote: `provider: openclaw` with `model: gateway-injected` (a notice such
/// as "Agent failed before reply") or `delivery-mirror` (a reply delivered
/// to a channel, copied back). Its own `isTranscriptOnlyOpenclawAssistant`
/// skips them; they are no model call.
fn transcript_only(message: &Value) -> bool {
    str_at(message, "provider") == Some("openclaw") && matches!(str_at(message, "model"), Some("gateway-injected" | "delivery-mirror"))
}

fn user(session: &mut ImportedSession, record: &Record, text: String) {
    session.lines.use_record(record);
    session.items.push(Item::User { text, line: record.line });
}

/// An `AssistantMessage`: text, thinking and toolCall blocks, usage, cost.
fn assistant(message: &Value, line: usize) -> AssistantTurn {
    let mut turn = AssistantTurn { line, ..Default::default() };
    let mut texts = Vec::new();
    for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
        match str_at(block, "type") {
            Some("text") => texts.push(str_at(block, "text").unwrap_or_default().to_owned()),
            Some("thinking") => turn.reasoning.push(str_at(block, "thinking").unwrap_or_default().to_owned()),
            Some("toolCall") => turn.tool_calls.push(ToolCall {
                id: str_at(block, "id").unwrap_or_default().to_owned(),
                name: str_at(block, "name").unwrap_or_default().to_owned(),
                arguments: match block.get("arguments") {
                    Some(Value::String(text)) => Arguments::from_text(text),
                    Some(value) => Arguments::Json(value.clone()),
                    None => Arguments::Json(Value::Object(Default::default())),
                },
            }),
            _ => {}
        }
    }
    turn.text = texts.join("\n\n");
    if let Some(usage) = message.get("usage") {
        turn.usage =
            Some(RecordedUsage::from_anthropic(u64_at(usage, "input"), u64_at(usage, "output"), u64_at(usage, "cacheRead"), u64_at(usage, "cacheWrite")));
        turn.cost_usd = usage.get("cost").and_then(|cost| cost.get("total")).and_then(Value::as_f64);
    }
    turn.stop_reason = str_at(message, "stopReason").map(str::to_owned);
    turn.model = str_at(message, "model").map(str::to_owned);
    turn
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real openclaw session (a pi-based gateway) opens with an assistant
    /// row its gateway wrote (`provider: openclaw`, `model:
    /// gateway-injected`, zero usage) before any user message: it was read
    /// as the first model call, so the replay answered the task with it and
    /// ended as a final answer instead of on the failed call that follows.
    #[test]
    fn an_assistant_row_openclaw_wrote_in_the_models_place_is_no_model_call() {
        let text = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:15:35.580Z","cwd":"/w"}"#,
            r#"{"type":"message","id":"g","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"Agent failed before reply"}],"stopReason":"stop","api":"openai-responses","provider":"openclaw","model":"gateway-injected"}}"#,
            r#"{"type":"message","id":"u","parentId":"g","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"type":"message","id":"e","parentId":"u","message":{"role":"assistant","content":[],"stopReason":"error","provider":"ollama","model":"qwen3.5:9b","errorMessage":"fetch failed"}}"#,
        ]
        .join("\n");
        let session = parse(&text);
        assert!(matches!(session.items.as_slice(), [Item::User { .. }, Item::ProviderError(_)]), "{:?}", session.items);
        assert_eq!(session.lines.ignored.get("transcript-only assistant row (written by openclaw, not the model)"), Some(&1), "{:?}", session.lines.ignored);
        assert_eq!(session.model.as_deref(), Some("qwen3.5:9b"), "the failed call names the model");
    }

    /// The session file real pi 0.73.1 wrote against reloop's mock when the
    /// mock's context window refused its second request: the failed call is
    /// an assistant row with `stopReason: "error"`, empty content, zero
    /// usage and the HTTP status and Anthropic's body in `errorMessage`.
    #[test]
    fn a_real_pi_session_ending_on_anthropics_prompt_too_long_is_a_context_overflow() {
        let session = parse(include_str!("../../tests/fixtures/sessions/pi/pi-context-overflow-against-reloop-mock.jsonl"));
        let Some(Item::ProviderError(error)) = session.items.last() else { panic!("{:?}", session.items) };
        assert_eq!((error.status, error.context_overflow, error.line), (Some(400), true, 7), "{error:?}");
        assert!(error.message.contains("prompt is too long: 1166 tokens > 1150 maximum"), "{}", error.message);
    }

    /// pi's `!!command` runs a shell command for the user alone: its
    /// `bashExecution` message has `excludeFromContext: true` and pi's
    /// `convertToLlm` never sends it (`messages.ts`); a `!command` one is
    /// sent as a user message. The first was delivered as a user turn the
    /// model never saw.
    #[test]
    fn a_bash_execution_excluded_from_context_is_no_user_turn() {
        let text = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:15:35.580Z","cwd":"/w"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"bashExecution","command":"git status","output":"clean","excludeFromContext":true}}"#,
            r#"{"type":"message","id":"b","parentId":"a","message":{"role":"bashExecution","command":"ls","output":"a.txt"}}"#,
        ]
        .join("\n");
        let session = parse(&text);
        assert!(matches!(session.items.as_slice(), [Item::User { line: 3, .. }]), "{:?}", session.items);
        assert_eq!(session.lines.ignored.get("bashExecution excluded from context (`!!`): never sent to the model"), Some(&1));
    }
}
