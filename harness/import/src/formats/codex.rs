//! Codex CLI rollouts (openai/codex, `codex-rs/protocol` `RolloutItem` and
//! `codex-rs/core/src/rollout`): JSONL of `{timestamp, type, payload}` with
//! `session_meta`, `response_item`, `turn_context`, `event_msg` and
//! `compacted` (0.169 adds `world_state` and `token_usage_record`).
//! Rollouts before the wrapper (2025 spring) hold a bare header
//! `{id, timestamp, instructions}` and bare response items, plus
//! `record_type: state` lines; both are read.
//!
//! One model response is the run of consecutive assistant-side items
//! (reasoning, assistant message, function/custom/local-shell calls); a user
//! message, a tool output or a `token_count` event ends it, and the
//! `token_count`'s `last_token_usage` is its usage.

use serde_json::Value;

use super::{content_text, str_at, u64_at};
use crate::jsonl::{Record, records};
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// Prefixes of user-role messages that Codex injects as context, not prompts.
const CONTEXT_PREFIXES: [&str; 5] =
    ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>", "<permissions instructions>"];

/// Reads a Codex rollout.
pub fn parse(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "codex", agent: Some("codex"), ..Default::default() };
    let mut reader = Reader { session: &mut session, open: None, context: Vec::new(), pending_usage: None, last_total: None, compaction_output: false };
    for record in records(text, &mut reader.session.lines) {
        reader.record(&record);
    }
    reader.close();
    let context = std::mem::take(&mut reader.context);
    if !context.is_empty() {
        let base = session.system.take().unwrap_or_default();
        session.system = Some(std::iter::once(base).chain(context).filter(|part| !part.is_empty()).collect::<Vec<_>>().join("\n\n"));
    }
    session
}

struct Reader<'s> {
    session: &'s mut ImportedSession,
    /// The response being assembled.
    open: Option<AssistantTurn>,
    /// Developer and injected user context, appended to the system prompt.
    context: Vec<String>,
    /// A count that came before its response (Codex 0.4x writes the event first).
    pending_usage: Option<RecordedUsage>,
    /// The previous count's running total: an equal one is a repeat.
    last_total: Option<Value>,
    /// A local compaction's summary turn was just read: the next count is
    /// its usage, not a turn's.
    compaction_output: bool,
}

impl Reader<'_> {
    fn record(&mut self, record: &Record) {
        let value = &record.value;
        if value.get("record_type").is_some() {
            return self.session.lines.ignore_record(record, "record_type state");
        }
        let (kind, payload) = match (str_at(value, "type"), value.get("payload")) {
            (Some(kind), Some(payload)) => (kind, payload),
            // Pre-wrapper rollouts: the header, then bare response items.
            (None, None) if value.get("instructions").is_some() || value.get("id").is_some() => ("session_meta", value),
            (Some(_), None) => ("response_item", value),
            _ => return self.session.lines.skip_record(record, "neither a rollout line nor a response item: skipped"),
        };
        match kind {
            "session_meta" => {
                self.session.lines.use_record(record);
                let meta = payload.get("meta").unwrap_or(payload);
                self.session.cwd = str_at(meta, "cwd").map(str::to_owned);
                let base = meta.get("base_instructions").and_then(|b| str_at(b, "text").or(b.as_str()));
                self.session.system = base.or(str_at(meta, "instructions")).map(str::to_owned);
            }
            "turn_context" => {
                self.session.lines.use_record(record);
                if let Some(model) = str_at(payload, "model") {
                    self.session.model = Some(model.to_owned());
                }
            }
            // Codex 0.169's local compaction: its summary turn, the
            // compaction's own model call.
            "response_item" if value.pointer("/metadata/compaction_output") == Some(&Value::Bool(true)) => {
                self.compaction_output = true;
                self.session.lines.ignore_record(record, "compaction output");
            }
            "response_item" => self.item(record, payload),
            "event_msg" => self.event(record, payload),
            "compacted" => {
                self.close();
                self.session.lines.use_record(record);
                let summary = str_at(payload, "message").unwrap_or_default().to_owned();
                // Codex 0.169 keeps the compaction request's own usage: its
                // prompt is the history the agent compacted.
                let before = payload.get("latest_token_usage_record").and_then(|r| r.get("usage")).and_then(|u| u.get("input_tokens")).and_then(Value::as_u64);
                self.session.items.push(Item::Compaction(Compaction { tokens_before: before, ..Compaction::summary(summary, record.line) }));
            }
            // Codex 0.169's resume state and per-response usage records: the
            // `token_count` events carry the same usage.
            kind @ ("world_state" | "token_usage_record") => self.session.lines.ignore_record(record, kind),
            other => self.session.lines.skip_record(record, format!("unknown rollout line type `{other}`: skipped")),
        }
    }

    fn item(&mut self, record: &Record, item: &Value) {
        let line = record.line;
        match (str_at(item, "type"), str_at(item, "role")) {
            (Some("message"), Some("assistant")) => {
                self.session.lines.use_record(record);
                let turn = self.turn(line);
                let text = content_text(item.get("content").unwrap_or(&Value::Null));
                turn.text = if turn.text.is_empty() { text } else { format!("{}\n\n{text}", turn.text) };
            }
            (Some("message"), Some("developer" | "system")) => {
                self.session.lines.use_record(record);
                self.context.push(content_text(item.get("content").unwrap_or(&Value::Null)));
            }
            (Some("message"), Some("user")) => {
                self.close();
                self.session.lines.use_record(record);
                let text = content_text(item.get("content").unwrap_or(&Value::Null));
                if CONTEXT_PREFIXES.iter().any(|prefix| text.trim_start().starts_with(prefix)) {
                    self.context.push(text);
                } else {
                    self.session.items.push(Item::User { text, line });
                }
            }
            (Some("reasoning"), _) => {
                self.session.lines.use_record(record);
                let summary: Vec<String> =
                    item.get("summary").and_then(Value::as_array).into_iter().flatten().filter_map(|s| str_at(s, "text")).map(str::to_owned).collect();
                self.turn(line).reasoning.extend(summary);
            }
            (Some("function_call"), _) => {
                self.session.lines.use_record(record);
                let arguments = Arguments::from_text(str_at(item, "arguments").unwrap_or("{}"));
                if let Arguments::Raw(raw) = &arguments {
                    self.session.lines.warn(
                        line,
                        format!(
                            "`arguments` is not valid JSON ({} bytes): kept as raw text, replayed byte for byte; the loop answers it with an argument error",
                            raw.len()
                        ),
                    );
                }
                self.call(line, item, arguments);
            }
            (Some("custom_tool_call"), _) => {
                self.session.lines.use_record(record);
                let input = str_at(item, "input").unwrap_or_default();
                self.call(line, item, Arguments::Json(serde_json::json!({ "input": input })));
            }
            (Some("local_shell_call"), _) => {
                self.session.lines.use_record(record);
                let action = item.get("action").cloned().unwrap_or(Value::Null);
                let mut arguments = serde_json::json!({ "command": action.get("command").cloned().unwrap_or(Value::Null) });
                for key in ["workdir", "timeout_ms"] {
                    if let Some(value) = action.get(key).filter(|v| !v.is_null()) {
                        arguments[key] = value.clone();
                    }
                }
                let id = str_at(item, "call_id").or(str_at(item, "id")).unwrap_or_default().to_owned();
                self.turn(line).tool_calls.push(ToolCall { id, name: "shell".into(), arguments: Arguments::Json(arguments) });
            }
            (Some(kind @ ("function_call_output" | "custom_tool_call_output" | "local_shell_call_output")), _) => {
                let _ = kind;
                self.close();
                self.session.lines.use_record(record);
                let output = match item.get("output") {
                    Some(Value::String(text)) => text.clone(),
                    Some(Value::Object(object)) => {
                        object.get("content").and_then(Value::as_str).map_or_else(|| Value::Object(object.clone()).to_string(), str::to_owned)
                    }
                    Some(other) => content_text(other),
                    None => String::new(),
                };
                let is_error = item.get("output").and_then(|o| o.get("success")).and_then(Value::as_bool) == Some(false);
                self.session.items.push(Item::ToolResult(ToolResult {
                    call_id: str_at(item, "call_id").unwrap_or_default().to_owned(),
                    output,
                    is_error,
                    line,
                }));
            }
            (Some(kind @ ("ghost_snapshot" | "web_search_call" | "other")), _) => self.session.lines.ignore_record(record, kind),
            (kind, role) => self.session.lines.skip_record(record, format!("unknown response item {kind:?} (role {role:?}): skipped")),
        }
    }

    fn call(&mut self, line: usize, item: &Value, arguments: Arguments) {
        let id = str_at(item, "call_id").unwrap_or_default().to_owned();
        let name = str_at(item, "name").unwrap_or_default().to_owned();
        self.turn(line).tool_calls.push(ToolCall { id, name, arguments });
    }

    fn event(&mut self, record: &Record, event: &Value) {
        match str_at(event, "type") {
            Some("token_count") => {
                let info = event.get("info").filter(|info| !info.is_null());
                let Some(last) = info.and_then(|info| info.get("last_token_usage")) else {
                    return self.session.lines.ignore_record(record, "token_count without usage");
                };
                let total = info.and_then(|info| info.get("total_token_usage")).cloned();
                if total.is_some() && total == self.last_total {
                    return self.session.lines.ignore_record(record, "token_count repeated");
                }
                self.last_total = total;
                if std::mem::take(&mut self.compaction_output) {
                    return self.session.lines.ignore_record(record, "compaction output");
                }
                self.session.lines.use_record(record);
                if let Some(window) = info.and_then(|info| info.get("model_context_window")).and_then(Value::as_u64) {
                    self.session.context_window = Some(window);
                }
                let usage = RecordedUsage {
                    input_tokens: u64_at(last, "input_tokens"),
                    output_tokens: u64_at(last, "output_tokens"),
                    cache_read_tokens: u64_at(last, "cached_input_tokens"),
                    ..RecordedUsage::default()
                };
                // The count follows its response (newer Codex, often after the
                // tool outputs) or comes just before it (0.4x).
                let latest = match self.open.as_mut() {
                    Some(turn) => Some(turn),
                    None => latest_response(&mut self.session.items),
                };
                match latest {
                    Some(turn) if turn.usage.is_none() => turn.usage = Some(usage),
                    _ => self.pending_usage = Some(usage),
                }
                self.close();
            }
            Some("turn_aborted") => {
                self.close();
                self.session.lines.use_record(record);
                self.session.items.push(Item::Interrupted { text: None, line: record.line });
            }
            Some("error") => {
                self.close();
                self.session.lines.use_record(record);
                let message = str_at(event, "message").unwrap_or_default();
                self.session.items.push(Item::ProviderError(ProviderError::from_message(message, None, record.line)));
            }
            Some(kind) => self.session.lines.ignore_record(record, &format!("event_msg {kind}")),
            None => self.session.lines.skip_record(record, "event_msg without a type: skipped"),
        }
    }

    /// The open response, started at `line` if none is.
    fn turn(&mut self, line: usize) -> &mut AssistantTurn {
        let pending = &mut self.pending_usage;
        self.open.get_or_insert_with(|| AssistantTurn { line, usage: pending.take(), ..Default::default() })
    }

    /// Ends the open response.
    fn close(&mut self) {
        if let Some(turn) = self.open.take() {
            if turn.usage.is_none() && self.pending_usage.is_some() {
                self.session.lines.warn(turn.line, "a token_count was left unattributed before this response");
            }
            self.session.items.push(Item::Assistant(turn));
        }
    }
}

/// The last model response, looking back over tool outputs only.
fn latest_response(items: &mut [Item]) -> Option<&mut AssistantTurn> {
    for item in items.iter_mut().rev() {
        match item {
            Item::Assistant(turn) => return Some(turn),
            Item::ToolResult(_) => {}
            Item::User { .. } | Item::Compaction(_) | Item::Interrupted { .. } | Item::ProviderError(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codex 0.169 writes `world_state` and `token_usage_record` lines beside
    /// the `token_count` events, and its `compacted` line carries the usage of
    /// the compaction request itself (`latest_token_usage_record`): the
    /// prompt the agent compacted, the size before. Lines cut from the real
    /// rollout bundled as `codex-0.169-remote-compaction-rollout`.
    #[test]
    fn a_0_169_compacted_line_states_the_prompt_it_compacted_and_its_new_lines_are_known() {
        let text = [
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Print the numbers"}]}}"#,
            r#"{"timestamp":"t","type":"world_state","payload":{"full":true,"state":{}}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"seq 1 1200\"}","call_id":"call_000_0"}}"#,
            r#"{"timestamp":"t","type":"token_usage_record","payload":{"response_id":"resp_1","usage":{"input_tokens":5893,"cached_input_tokens":0,"output_tokens":16}}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_000_0","output":"1\n2"}}"#,
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5893},"last_token_usage":{"input_tokens":5893,"cached_input_tokens":0,"output_tokens":16}}}}"#,
            r#"{"timestamp":"t","type":"compacted","payload":{"message":"","replacement_history":[],"compaction_response_id":"resp_2","latest_token_usage_record":{"response_id":"resp_2","usage":{"input_tokens":8558,"cached_input_tokens":5888,"output_tokens":194}}}}"#,
        ]
        .join("\n");
        let session = parse(&text);
        assert!(session.lines.skipped.is_empty(), "{:?}", session.lines.skipped);
        assert_eq!((session.lines.ignored.get("world_state"), session.lines.ignored.get("token_usage_record")), (Some(&1), Some(&1)));
        let Some(Item::Compaction(compaction)) = session.items.last() else { panic!("{:?}", session.items) };
        assert_eq!((compaction.tokens_before, compaction.tokens_after, compaction.line), (Some(8_558), None, 7));
    }

    /// Codex 0.169's local compaction writes its summary turn as an
    /// assistant message marked `metadata.compaction_output`, then its
    /// `token_count`: that call is the compaction's, not one of the
    /// session's turns, and its count is not the next turn's usage.
    #[test]
    fn a_0_169_local_compaction_output_and_its_count_are_not_a_turn() {
        let count = |input: u64, total: u64| {
            format!(
                r#"{{"type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total}}},"last_token_usage":{{"input_tokens":{input},"output_tokens":1}}}}}}}}"#
            )
        };
        let text = [
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Print the numbers"}]}}"#.to_owned(),
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c0"}}"#.to_owned(),
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c0","output":"1"}}"#.to_owned(),
            count(5883, 5883),
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Handoff summary"}]},"metadata":{"compaction_output":true}}"#.to_owned(),
            count(7179, 13_062),
            r#"{"type":"compacted","payload":{"message":"Another language model started. Handoff summary","latest_token_usage_record":{"usage":{"input_tokens":7179}}}}"#.to_owned(),
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}"#.to_owned(),
            count(5981, 19_043),
        ]
        .join("\n");
        let session = parse(&text);
        let turns: Vec<(&str, Option<u64>)> = session
            .items
            .iter()
            .filter_map(|i| if let Item::Assistant(t) = i { Some((t.text.as_str(), t.usage.map(|u| u.input_tokens))) } else { None })
            .collect();
        assert_eq!(turns, [("", Some(5883)), ("Done.", Some(5981))]);
        assert_eq!(session.lines.ignored.get("compaction output"), Some(&2));
    }
}
