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
//! - OpenHands SDK (V1) conversation folders (OpenHands/software-agent-sdk):
//!   one event per file, told by `kind`; the usage of each LLM call is not in
//!   its events but in `base_state.json`'s `stats.usage_to_metrics.*.token_usages`,
//!   by `response_id`, which `ActionEvent`s name as `llm_response_id`.
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
                    turn.tool_calls.push(ToolCall {
                        id: id.clone(),
                        name: "bash".into(),
                        arguments: Arguments::Json(serde_json::json!({ "command": action })),
                    });
                    pending_action = Some(id);
                    session.lines.warn(unit, "assistant message without tool_calls (SWE-agent before function calling): its `action` becomes a `bash` call, the next user message its result");
                }
                session.items.push(Item::Assistant(turn));
            }
            Some("tool") => {
                session.lines.used += 1;
                let ids: Vec<String> =
                    message.get("tool_call_ids").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
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
        session.lines.warn(
            0,
            format!(
                "usage only as totals (tokens_sent {}, tokens_received {}, api_calls {}): not attributed per exchange",
                u64_at(stats, "tokens_sent"),
                u64_at(stats, "tokens_received"),
                u64_at(stats, "api_calls")
            ),
        );
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
        Some(Exit::Failed(ProviderError {
            message: "SWE-agent exit_context: the context window was exceeded".into(),
            status: None,
            context_overflow: true,
            line: last_unit,
        }))
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
            properties.insert(
                argument_name.to_owned(),
                serde_json::json!({ "type": str_at(argument, "type").unwrap_or("string"), "description": str_at(argument, "description").unwrap_or_default() }),
            );
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

/// A call's `arguments`: a JSON string parsed where it parses, a value as is.
fn arguments_of(arguments: Option<&Value>) -> Arguments {
    match arguments {
        Some(Value::String(text)) => Arguments::from_text(text),
        Some(value) => Arguments::Json(value.clone()),
        None => Arguments::Json(Value::Object(Default::default())),
    }
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
            let arguments = arguments_of(function.get("arguments"));
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

/// Reads an OpenHands SDK conversation: its `events` in file order and its
/// `base_state.json` (for the usage of each LLM response).
pub fn parse_sdk(events: &[Value], base_state: &Value) -> ImportedSession {
    let mut session = ImportedSession { format: "openai-messages", ..Default::default() };
    session.submit_tools = &["finish"];
    session.model = base_state.pointer("/agent/llm/model").and_then(Value::as_str).map(str::to_owned);
    let usages: Vec<&Value> = base_state
        .pointer("/stats/usage_to_metrics")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|metrics| metrics.values())
        .filter_map(|metrics| metrics.get("token_usages").and_then(Value::as_array))
        .flatten()
        .collect();
    let usage_of = |response: &str| {
        usages.iter().find(|usage| str_at(usage, "response_id") == Some(response)).map(|usage| RecordedUsage {
            input_tokens: u64_at(usage, "prompt_tokens"),
            output_tokens: u64_at(usage, "completion_tokens"),
            cache_read_tokens: u64_at(usage, "cache_read_tokens"),
            cache_write_tokens: u64_at(usage, "cache_write_tokens"),
            ..RecordedUsage::default()
        })
    };
    let mut last_response: Option<&str> = None;
    for (index, event) in events.iter().enumerate() {
        let unit = index + 1;
        session.lines.read += 1;
        let kind = str_at(event, "kind").unwrap_or("?");
        match (kind, str_at(event, "source")) {
            ("SystemPromptEvent", _) => {
                session.lines.used += 1;
                session.system = event.pointer("/system_prompt/text").and_then(Value::as_str).map(str::to_owned);
            }
            ("MessageEvent", Some("user")) => {
                session.lines.used += 1;
                let text = content_text(event.pointer("/llm_message/content").unwrap_or(&Value::Null));
                session.items.push(Item::User { text, line: unit });
            }
            ("MessageEvent", Some("agent")) => {
                session.lines.used += 1;
                let text = content_text(event.pointer("/llm_message/content").unwrap_or(&Value::Null));
                let usage = str_at(event, "llm_response_id").and_then(&usage_of);
                session.items.push(Item::Assistant(AssistantTurn { line: unit, text, model: session.model.clone(), usage, ..Default::default() }));
            }
            ("ActionEvent", _) => {
                let call = event.get("tool_call").unwrap_or(&Value::Null);
                let arguments = arguments_of(call.get("arguments"));
                let call =
                    ToolCall { id: str_at(call, "id").unwrap_or_default().to_owned(), name: str_at(call, "name").unwrap_or_default().to_owned(), arguments };
                let response = str_at(event, "llm_response_id");
                if let (Some(response), Some(Item::Assistant(turn))) = (response, session.items.last_mut())
                    && last_response == Some(response)
                {
                    turn.tool_calls.push(call);
                    session.lines.join(unit, "another action of the same model response: joined");
                    continue;
                }
                last_response = response;
                session.lines.used += 1;
                let text = content_text(event.get("thought").unwrap_or(&Value::Null));
                let usage = response.and_then(&usage_of);
                session.items.push(Item::Assistant(AssistantTurn {
                    line: unit,
                    text,
                    tool_calls: vec![call],
                    model: session.model.clone(),
                    usage,
                    ..Default::default()
                }));
            }
            ("ObservationEvent", _) => {
                let output = content_text(event.pointer("/observation/content").unwrap_or(&Value::Null));
                let is_error = event.pointer("/observation/is_error").and_then(Value::as_bool).unwrap_or(false);
                sdk_tool_result(&mut session, event, output, is_error, unit);
            }
            // The scaffold's answer to a call it could not carry out (arguments
            // that fail the tool's schema, a tool that raised, a cancelled
            // call): the model reads `error` as the call's result.
            ("AgentErrorEvent", _) => {
                let output = str_at(event, "error").unwrap_or_default().to_owned();
                sdk_tool_result(&mut session, event, output, true, unit);
            }
            // A call the user (confirmation mode) or a hook refused, with the
            // text the SDK sends the model in its place.
            ("UserRejectObservation", _) => {
                let output = format!("Action rejected: {}", str_at(event, "rejection_reason").unwrap_or("User rejected the action"));
                sdk_tool_result(&mut session, event, output, true, unit);
            }
            ("ConversationErrorEvent", _) => {
                session.lines.used += 1;
                let (code, detail) = (str_at(event, "code").unwrap_or("?"), str_at(event, "detail").unwrap_or_default());
                match sdk_provider_error(code, detail, unit) {
                    Some(error) => session.items.push(Item::ProviderError(error)),
                    None => session.lines.warn(unit, format!("the run stopped on {code} ({detail}), not a failed model call: the log ends there")),
                }
            }
            // The condenser forgot `forgotten_event_ids` and wrote `summary`;
            // its size before and after comes from the calls around it.
            ("Condensation", _) => {
                session.lines.used += 1;
                session.items.push(Item::Compaction(Compaction::summary(str_at(event, "summary").unwrap_or_default().to_owned(), unit)));
            }
            (kind, source) => session.lines.ignore(&format!("{} event {kind}", source.unwrap_or("unknown"))),
        }
    }
    session
}

/// An SDK observation of any kind (`ObservationEvent`, `AgentErrorEvent`,
/// `UserRejectObservation`): the result of the call it names.
fn sdk_tool_result(session: &mut ImportedSession, event: &Value, output: String, is_error: bool, unit: usize) {
    session.lines.used += 1;
    let call_id = str_at(event, "tool_call_id").unwrap_or_default().to_owned();
    session.items.push(Item::ToolResult(ToolResult { call_id, output, is_error, line: unit }));
}

/// A `ConversationErrorEvent` that is a failed model call: its `code` is one
/// of the SDK's own LLM errors (`openhands.sdk.llm.exceptions`, mapped from
/// LiteLLM's by `map_provider_exception`, with the status each stands for),
/// or a provider exception the SDK passed through unmapped (its status, if
/// any, read from `detail`). Other codes (`MaxIterationsReached`,
/// `MaxBudgetReached`, a crash's `KeyError`) are the SDK's own limits.
fn sdk_provider_error(code: &str, detail: &str, unit: usize) -> Option<ProviderError> {
    const SDK_ERRORS: [(&str, Option<u16>); 9] = [
        ("LLMContextWindowExceedError", Some(400)),
        ("LLMMalformedConversationHistoryError", Some(400)),
        ("LLMBadRequestError", Some(400)),
        ("LLMContentPolicyViolationError", Some(400)),
        ("LLMAuthenticationError", Some(401)),
        ("LLMRateLimitError", Some(429)),
        ("LLMServiceUnavailableError", Some(503)),
        ("LLMTimeoutError", None),
        ("LLMNoResponseError", None),
    ];
    const PASSED_THROUGH: [&str; 11] = [
        "APIError",
        "APIConnectionError",
        "InternalServerError",
        "BadGatewayError",
        "HTTPStatusError",
        "OpenAIError",
        "AnthropicError",
        "OpenRouterException",
        "OllamaError",
        "BaseLLMException",
        "CloudflareError",
    ];
    let status = match SDK_ERRORS.iter().find(|(name, _)| *name == code) {
        Some((_, status)) => *status,
        None if PASSED_THROUGH.contains(&code) => None,
        None => return None,
    };
    let error = ProviderError::from_message(detail, status, unit);
    Some(ProviderError { message: format!("{code}: {detail}"), context_overflow: error.context_overflow || code == "LLMContextWindowExceedError", ..error })
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

#[cfg(test)]
mod tests {
    use super::*;

    const SDK: &str = "tests/fixtures/sessions/openhands/openhands-sdk-1-58-2-condensation-against-reloop-mock";

    #[test]
    fn a_real_openhands_sdk_condensation_is_a_compaction_between_calls_with_their_usage() {
        let session = crate::read_session(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SDK), None).unwrap();
        let prompts: Vec<u64> =
            session.items.iter().filter_map(|item| if let Item::Assistant(turn) = item { turn.usage.as_ref().map(|u| u.input_tokens) } else { None }).collect();
        assert_eq!(prompts, [3766, 3803, 3842, 3881, 3916, 3827, 3863], "the agent's calls, not the condenser's");
        let compaction = session.items.iter().position(|item| matches!(item, Item::Compaction(_))).expect("the condensation");
        assert_eq!(session.items.iter().take(compaction).filter(|item| matches!(item, Item::Assistant(_))).count(), 5);
        assert!(matches!(&session.items[compaction], Item::Compaction(c) if c.summary.starts_with("USER_CONTEXT: plan a release checklist")));
        assert!(session.system.as_deref().is_some_and(|s| s.contains("OpenHands")));
        assert_eq!(session.lines.read, 17);
        assert_eq!(session.lines.used, 17);
    }

    /// The real SDK 1.58.2 run without a condenser against a served context
    /// window of 4,000 tokens: its first call's arguments fail `think`'s
    /// schema (an `AgentErrorEvent`), three rounds later the window refuses
    /// the prompt (a `ConversationErrorEvent`, `LLMContextWindowExceedError`).
    #[test]
    fn a_real_openhands_sdk_error_result_and_context_overflow_are_a_failed_call_and_a_failed_end() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sessions/openhands/openhands-sdk-1-58-2-context-overflow-against-reloop-mock");
        let session = crate::read_session(&folder, None).unwrap();
        let results: Vec<(&str, bool)> =
            session.items.iter().filter_map(|item| if let Item::ToolResult(r) = item { Some((r.call_id.as_str(), r.is_error)) } else { None }).collect();
        assert_eq!(results, [("call_000_0", true), ("call_001_0", false), ("call_002_0", false), ("call_003_0", false)]);
        assert!(matches!(&session.items[2], Item::ToolResult(r) if r.output.starts_with("Error validating tool 'think'")), "{:?}", session.items[2]);
        let Some(Item::ProviderError(error)) = session.items.last() else { panic!("{:?}", session.items.last()) };
        assert!(error.context_overflow && error.message.starts_with("LLMContextWindowExceedError: ") && error.line == 11, "{error:?}");
        assert_eq!((session.lines.read, session.lines.used), (11, 11), "{:?}", session.lines);
    }

    #[test]
    fn only_the_sdks_model_call_errors_end_a_conversation_as_a_failed_call() {
        let limit = sdk_provider_error("LLMRateLimitError", "litellm.RateLimitError: slow down", 4).unwrap();
        assert_eq!((limit.status, limit.context_overflow), (Some(429), false));
        let passed = sdk_provider_error("APIError", "529 overloaded", 4).unwrap();
        assert_eq!(passed.status, Some(529), "read from the detail");
        let overflow = sdk_provider_error("LLMBadRequestError", "This model's maximum context length is 8192 tokens", 4).unwrap();
        assert!(overflow.context_overflow, "told by the detail's words");
        for own in ["MaxIterationsReached", "MaxBudgetReached", "KeyError"] {
            assert_eq!(sdk_provider_error(own, "stop", 4), None, "{own}");
        }
    }
}
