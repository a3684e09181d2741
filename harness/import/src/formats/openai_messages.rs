//! OpenAI-style message transcripts in one JSON document:
//! - SWE-agent trajectories (`.traj`, SWE-agent/SWE-agent): `history` of
//!   chat messages. The function-calling generation has `tool_calls` and
//!   `tool` messages with `tool_call_ids`; the older generation has no
//!   `tool_calls`, the command is the assistant message's `action` and its
//!   observation the next user message: each becomes a `bash` call and its
//!   result.
//! - OpenHands event lists (All-Hands-AI/OpenHands): agent actions carry
//!   `tool_call_metadata.model_response`, a full `chat.completion`; several
//!   actions of one response share it and become one turn; observations
//!   answer by `tool_call_metadata.tool_call_id`.
//!
//! The accounting unit is a message (SWE-agent) or an event (OpenHands).

use reloop_wire::ToolSpec;
use serde_json::Value;

use super::{content_text, str_at, u64_at};
use crate::session::{Arguments, AssistantTurn, Compaction, Exit, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// Reads a SWE-agent trajectory or an OpenHands event list.
pub fn parse(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "openai-messages", ..Default::default() };
    let Some(document) = super::whole_document(text, &mut session) else {
        return session;
    };
    match &document {
        Value::Array(events) => openhands(&mut session, events),
        Value::Object(object) if object.get("events").is_some_and(Value::is_array) => {
            openhands(&mut session, document["events"].as_array().expect("checked"));
        }
        Value::Object(object) if object.get("history").is_some_and(Value::is_array) => swe_agent(&mut session, &document),
        _ => {
            session.lines.read = 1;
            session.lines.skip(1, "neither a `history` trajectory nor an event list: nothing imported");
        }
    }
    session
}

fn swe_agent(session: &mut ImportedSession, document: &Value) {
    let history = document["history"].as_array().expect("checked by the caller");
    session.model = replay_model(document);
    session.declared_tools = replay_tools(document);
    let mut pending_action: Option<String> = None;
    for (index, message) in history.iter().enumerate() {
        let unit = index + 1;
        session.lines.read += 1;
        let text = content_text(message.get("content").unwrap_or(&Value::Null));
        match str_at(message, "role") {
            Some("system") => {
                session.lines.used += 1;
                session.system = Some(text);
            }
            Some("user") if pending_action.is_some() => {
                session.lines.used += 1;
                let call_id = pending_action.take().expect("checked");
                session.items.push(Item::ToolResult(ToolResult { call_id, output: text, is_error: false, line: unit }));
            }
            Some("user") => {
                session.lines.used += 1;
                session.items.push(Item::User { text, line: unit });
            }
            Some("assistant") => {
                session.lines.used += 1;
                let mut turn = AssistantTurn { text, line: unit, ..Default::default() };
                turn.tool_calls = chat_tool_calls(message);
                if let Some(thought) = str_at(message, "thought").filter(|t| !t.is_empty() && turn.text.is_empty()) {
                    turn.text = thought.to_owned();
                }
                if turn.tool_calls.is_empty()
                    && let Some(action) = str_at(message, "action").filter(|a| !a.trim().is_empty())
                {
                    let id = format!("action-{unit}");
                    turn.tool_calls.push(ToolCall { id: id.clone(), name: "bash".into(), arguments: Arguments::Json(serde_json::json!({ "command": action })) });
                    pending_action = Some(id);
                    session.lines.warn(unit, "assistant message without tool_calls (SWE-agent before function calling): its `action` becomes a `bash` call, the next user message its result");
                }
                session.items.push(Item::Assistant(turn));
            }
            Some("tool") => {
                session.lines.used += 1;
                let ids: Vec<String> = message.get("tool_call_ids").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
                let ids = if ids.is_empty() { str_at(message, "tool_call_id").map(str::to_owned).into_iter().collect() } else { ids };
                for call_id in ids {
                    session.items.push(Item::ToolResult(ToolResult { call_id, output: text.clone(), is_error: false, line: unit }));
                }
            }
            other => session.lines.skip(unit, format!("message with role {other:?}: skipped")),
        }
    }
    session.submit_tools = &["submit"];
    session.exit = document.pointer("/info/exit_status").and_then(Value::as_str).and_then(|status| swe_agent_exit(status, history.len()));
    if let Some(stats) = document.get("info").and_then(|i| i.get("model_stats")) {
        session.lines.warn(0, format!(
            "usage only as totals (tokens_sent {}, tokens_received {}, api_calls {}): not attributed per exchange",
            u64_at(stats, "tokens_sent"),
            u64_at(stats, "tokens_received"),
            u64_at(stats, "api_calls")
        ));
    }
}

/// The ending an `info.exit_status` states: `submitted` (also `submitted
/// (exit_cost)` and the like, an autosubmission) and `exit_context`. The
/// others (`exit_cost`, `exit_error`, `exit_format`) are SWE-agent's own
/// limits: the log stops there.
fn swe_agent_exit(status: &str, last_unit: usize) -> Option<Exit> {
    if status.starts_with("submitted") {
        Some(Exit::Submitted)
    } else if status == "exit_context" {
        Some(Exit::Failed(ProviderError { message: "SWE-agent exit_context: the context window was exceeded".into(), status: None, context_overflow: true, line: last_unit }))
    } else {
        None
    }
}

/// The model of a trajectory's `replay_config` (a JSON string or object).
fn replay_model(document: &Value) -> Option<String> {
    let config = replay_config(document)?;
    config.pointer("/agent/model/name").and_then(Value::as_str).map(str::to_owned)
}

fn replay_config(document: &Value) -> Option<Value> {
    match document.get("replay_config")? {
        Value::String(text) => serde_json::from_str(text).ok(),
        other => Some(other.clone()),
    }
}

/// Tools declared in `replay_config.agent.tools` (commands with signatures
/// and arguments), when present: a JSON Schema per command.
fn replay_tools(document: &Value) -> Vec<ToolSpec> {
    let Some(config) = replay_config(document) else { return Vec::new() };
    let Some(bundles) = config.pointer("/agent/tools/bundles").and_then(Value::as_array) else { return Vec::new() };
    let mut tools = Vec::new();
    for command in bundles.iter().filter_map(|b| b.pointer("/config/commands").and_then(Value::as_array)).flatten() {
        let Some(name) = str_at(command, "name") else { continue };
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for argument in command.get("arguments").and_then(Value::as_array).into_iter().flatten() {
            let Some(argument_name) = str_at(argument, "name") else { continue };
            properties.insert(argument_name.to_owned(), serde_json::json!({ "type": str_at(argument, "type").unwrap_or("string"), "description": str_at(argument, "description").unwrap_or_default() }));
            if argument.get("required").and_then(Value::as_bool) == Some(true) {
                required.push(argument_name.to_owned());
            }
        }
        tools.push(ToolSpec {
            name: name.to_owned(),
            description: str_at(command, "docstring").unwrap_or_default().to_owned(),
            parameters: serde_json::json!({ "type": "object", "properties": properties, "required": required }),
        });
    }
    tools
}

/// `tool_calls` of an OpenAI chat message, arguments parsed where they parse.
fn chat_tool_calls(message: &Value) -> Vec<ToolCall> {
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|call| {
            let function = call.get("function").unwrap_or(&Value::Null);
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => Arguments::from_text(text),
                Some(value) => Arguments::Json(value.clone()),
                None => Arguments::Json(Value::Object(Default::default())),
            };
            ToolCall { id: str_at(call, "id").unwrap_or_default().to_owned(), name: str_at(function, "name").unwrap_or_default().to_owned(), arguments }
        })
        .collect()
}

fn openhands(session: &mut ImportedSession, events: &[Value]) {
    session.submit_tools = &["finish"];
    let mut last_response: Option<String> = None;
    for (index, event) in events.iter().enumerate() {
        let unit = index + 1;
        session.lines.read += 1;
        let metadata = event.get("tool_call_metadata").filter(|m| !m.is_null());
        if let Some(observation) = str_at(event, "observation") {
            match metadata.and_then(|m| str_at(m, "tool_call_id")) {
                Some(call_id) => {
                    session.lines.used += 1;
                    let output = str_at(event, "content").unwrap_or_default().to_owned();
                    session.items.push(Item::ToolResult(ToolResult { call_id: call_id.to_owned(), output, is_error: observation == "error", line: unit }));
                }
                None => session.lines.ignore(&format!("observation {observation} without a tool call")),
            }
            continue;
        }
        match (str_at(event, "source"), metadata) {
            // OpenHands' `CondensationAction`: the condenser forgot events and
            // may have written a summary of them.
            (_, _) if str_at(event, "action") == Some("condensation") => {
                session.lines.used += 1;
                let summary = event.pointer("/args/summary").and_then(Value::as_str).unwrap_or_default();
                session.items.push(Item::Compaction(Compaction::summary(summary.to_owned(), unit)));
            }
            (Some("user"), _) if str_at(event, "action") == Some("message") => {
                session.lines.used += 1;
                let text = event.pointer("/args/content").and_then(Value::as_str).or(str_at(event, "message")).unwrap_or_default();
                session.items.push(Item::User { text: text.to_owned(), line: unit });
            }
            (Some("agent"), Some(metadata)) => {
                let Some(response) = metadata.get("model_response") else {
                    session.lines.skip(unit, "agent action without `model_response`: skipped");
                    continue;
                };
                let id = str_at(response, "id").map(str::to_owned);
                if id.is_some() && id == last_response {
                    session.lines.join(unit, "another action of the same model response: joined");
                    continue;
                }
                last_response = id;
                session.lines.used += 1;
                session.items.push(Item::Assistant(completion_turn(response, unit)));
                if let Some(model) = str_at(response, "model") {
                    session.model = Some(model.to_owned());
                }
            }
            (source, _) => session.lines.ignore(&format!("{} event {}", source.unwrap_or("unknown"), str_at(event, "action").unwrap_or("?"))),
        }
    }
}

/// One turn from a `chat.completion`: its first choice and its usage.
fn completion_turn(response: &Value, unit: usize) -> AssistantTurn {
    let message = response.pointer("/choices/0/message").unwrap_or(&Value::Null);
    let mut turn = AssistantTurn { line: unit, text: content_text(message.get("content").unwrap_or(&Value::Null)), ..Default::default() };
    turn.tool_calls = chat_tool_calls(message);
    turn.stop_reason = response.pointer("/choices/0/finish_reason").and_then(Value::as_str).map(str::to_owned);
    turn.model = str_at(response, "model").map(str::to_owned);
    if let Some(usage) = response.get("usage") {
        let cached = usage.pointer("/prompt_tokens_details/cached_tokens").and_then(Value::as_u64).unwrap_or_else(|| u64_at(usage, "cache_read_input_tokens"));
        turn.usage = Some(RecordedUsage {
            input_tokens: u64_at(usage, "prompt_tokens"),
            output_tokens: u64_at(usage, "completion_tokens"),
            cache_read_tokens: cached,
            cache_write_tokens: u64_at(usage, "cache_creation_input_tokens"),
            ..RecordedUsage::default()
        });
    }
    turn
}
