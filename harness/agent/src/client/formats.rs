//! The client's side of the wire codec (`reloop_wire::codec`): the request
//! body with the frozen tools spliced in, the authentication headers, the
//! non-streamed response and the error bodies, each asked of the format.
//! Streaming is common (`reloop_wire::format::decoder_for`).

use std::time::Duration;

use reloop_wire::codec::RequestWriter;
use reloop_wire::{Format, Message, ModelTurn, Prompt, codec};

use super::cache_breakpoints::CacheBreakpointSettings;
use super::{LlmError, wire_error};
use crate::context::native::ContextManagement;
use crate::tool_schema::FrozenToolSchema;

pub use codec::ANTHROPIC_VERSION;

/// What a request carries beside the prompt.
pub(super) struct BodyExtras<'a> {
    /// The frozen tool declarations.
    pub tools: &'a FrozenToolSchema,
    /// Anthropic's breakpoints (the tools' own is in the frozen bytes).
    pub cache: &'a CacheBreakpointSettings,
    /// The provider-side context management asked for (`strategy: native`).
    pub context_management: Option<&'a ContextManagement>,
}

/// The serialized request body of `head` (whose own tools are not
/// rendered) with `messages`, written by `writer`, and `extras`: the frozen
/// tools' bytes are spliced in as the body's last member, never serialized
/// again, after the context management the format has (none on wires
/// without it).
pub(super) fn body(writer: &mut RequestWriter, head: Prompt, messages: &[Message], extras: &BodyExtras<'_>) -> Result<Vec<u8>, LlmError> {
    let format = writer.format();
    let management = extras.context_management.and_then(|m| context_management(format, m)).map(|m| m.to_string());
    // Room for the members spliced in below and their names.
    let room = extras.tools.wire_json().len() + management.as_ref().map_or(0, String::len) + 48;
    let mut body = writer.write(head, messages, room, |prompt| extras.cache.breakpoints(prompt)).map_err(|e| LlmError::Protocol(e.to_string()))?;
    if let Some(management) = management {
        body = with_member(body, "context_management", management.as_bytes());
    }
    Ok(if extras.tools.specs().is_empty() { body } else { with_member(body, "tools", extras.tools.wire_json()) })
}

/// `body`, a JSON object, with `"name": value` added as its last member.
fn with_member(mut body: Vec<u8>, name: &str, value: &[u8]) -> Vec<u8> {
    debug_assert_eq!(body.last(), Some(&b'}'), "a request body is an object with a model");
    body.pop();
    body.extend_from_slice(format!(",\"{name}\":").as_bytes());
    body.extend_from_slice(value);
    body.push(b'}');
    body
}

/// The `context_management` member of `format`'s request for `management`,
/// in the wire's request types (the providers' documented shapes); `None`
/// when the format has no such mechanism or `management` is the other
/// format's.
fn context_management(format: Format, management: &ContextManagement) -> Option<serde_json::Value> {
    use reloop_wire::context_management::{self as wire, Amount, ClearInputs, ClearToolUses, ContextEdit, ResponsesContextManagement};
    let value = match (format, management) {
        (Format::Anthropic, ContextManagement::ClearToolUses { trigger_tokens, keep_tool_uses, clear_at_least_tokens, exclude_tools, clear_tool_inputs }) => {
            let edit = ClearToolUses {
                trigger: Some(Amount::new("input_tokens", *trigger_tokens)),
                keep: Some(Amount::new("tool_uses", u64::from(*keep_tool_uses))),
                clear_at_least: (*clear_at_least_tokens > 0).then(|| Amount::new("input_tokens", *clear_at_least_tokens)),
                exclude_tools: exclude_tools.clone(),
                clear_tool_inputs: Some(ClearInputs::All(*clear_tool_inputs)),
            };
            serde_json::to_value(wire::ContextManagement { edits: vec![ContextEdit::ClearToolUses(edit)] })
        }
        (Format::OpenaiResponses, ContextManagement::Compaction { compact_threshold }) => {
            serde_json::to_value([ResponsesContextManagement { kind: wire::COMPACTION_ITEM.to_owned(), compact_threshold: Some(*compact_threshold) }])
        }
        _ => return None,
    };
    value.ok()
}

/// The headers a request with `management` needs beside authentication.
pub(super) fn context_management_headers(format: Format, management: Option<&ContextManagement>) -> Option<(&'static str, &'static str)> {
    matches!((format, management), (Format::Anthropic, Some(ContextManagement::ClearToolUses { .. })))
        .then_some(("anthropic-beta", reloop_wire::context_management::ANTHROPIC_CONTEXT_EDITING_BETA))
}

/// Adds the format's authentication headers.
pub(super) fn authenticate(format: Format, mut request: reqwest::RequestBuilder, api_key: &str) -> reqwest::RequestBuilder {
    for (name, value) in codec::auth_headers(format, api_key) {
        request = request.header(name, value);
    }
    request
}

/// Whether the provider honours a client-set output slot (Roku's
/// `supports_output_slot_cap`): the Responses API budgets output itself.
pub(super) fn supports_output_slot_cap(format: Format) -> bool {
    !matches!(format, Format::OpenaiResponses)
}

/// Reads a non-streamed response.
pub(super) fn parse_complete(format: Format, body: &[u8]) -> Result<ModelTurn, LlmError> {
    codec::decode_response(format, body).map_err(wire_error)
}

/// Classifies an error response by its status and body.
pub(super) fn classify_error(format: Format, status: u16, body: &[u8], retry_after: Option<Duration>) -> LlmError {
    match codec::read_error(format, body) {
        Some(error) if error.context_exceeded => LlmError::ContextWindowExceeded { message: error.message },
        Some(error) => LlmError::from_status(status, Some(&error.kind), error.message, retry_after),
        None => LlmError::from_status(status, None, String::from_utf8_lossy(body).into_owned(), retry_after),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the codec reads from an error body decides the loop's error:
    /// an overflow is never retried, a known kind keeps its status class, and
    /// a body no codec reads keeps its text. (The codec's own tests read the
    /// bodies of every format.)
    #[test]
    fn the_codecs_reading_of_an_error_body_decides_the_loop_error() {
        let overflow = br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201234 tokens > 200000 maximum"}}"#;
        assert!(matches!(classify_error(Format::Anthropic, 400, overflow, None), LlmError::ContextWindowExceeded { .. }));
        let quota = br#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}"#;
        assert!(!matches!(classify_error(Format::Gemini, 429, quota, None), LlmError::ContextWindowExceeded { .. }));
        let unread = classify_error(Format::OpenaiChat, 502, b"<html>bad gateway</html>", None);
        assert!(format!("{unread:?}").contains("bad gateway"), "{unread:?}");
    }

    /// The body with the frozen tools spliced in is the request the format
    /// renders from the whole prompt, and carries the frozen bytes verbatim.
    #[test]
    fn frozen_tools_splice_into_the_body_every_format_renders() {
        let spec = reloop_wire::ToolSpec { name: "read".into(), description: "Read".into(), parameters: serde_json::json!({"type": "object"}) };
        let cache = CacheBreakpointSettings::default();
        let full = Prompt {
            model: "m".into(),
            system: Some("s".into()),
            messages: vec![reloop_wire::Message::user("go")],
            tools: vec![spec.clone()],
            ..Prompt::default()
        };
        let without_tools = Prompt { tools: Vec::new(), ..full.clone() };
        for format in Format::ALL {
            let frozen = FrozenToolSchema::freeze(vec![spec.clone()], format, &cache);
            let mut writer = RequestWriter::new(format);
            let spliced =
                body(&mut writer, without_tools.clone(), &full.messages, &BodyExtras { tools: &frozen, cache: &cache, context_management: None }).unwrap();
            let none = FrozenToolSchema::none();
            let whole = body(&mut writer, full.clone(), &full.messages, &BodyExtras { tools: &none, cache: &cache, context_management: None }).unwrap();
            let tail = [&b",\"tools\":"[..], frozen.wire_json(), b"}"].concat();
            assert!(spliced.ends_with(&tail), "{format:?}: the frozen bytes, verbatim");
            let parse = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).unwrap();
            assert_eq!(parse(&spliced), parse(&whole), "{format:?}");
        }
    }

    /// `strategy: native` on each wire: Anthropic's `clear_tool_uses_20250919`
    /// edit with every parameter the policy sets, behind its beta header;
    /// Responses' compaction entry; nothing on the wires without one.
    #[test]
    fn native_context_management_renders_each_providers_documented_shape() {
        use serde_json::json;
        let prompt = Prompt { model: "m".into(), messages: vec![reloop_wire::Message::user("go")], ..Prompt::default() };
        let (cache, tools) = (CacheBreakpointSettings::default(), FrozenToolSchema::none());
        let edit = ContextManagement::ClearToolUses {
            trigger_tokens: 64_000,
            keep_tool_uses: 3,
            clear_at_least_tokens: 12_800,
            exclude_tools: vec!["todo".into()],
            clear_tool_inputs: false,
        };
        let compaction = ContextManagement::Compaction { compact_threshold: 96_000 };
        let sent = |format: Format, management: &ContextManagement| {
            let extras = BodyExtras { tools: &tools, cache: &cache, context_management: Some(management) };
            let written = body(&mut RequestWriter::new(format), prompt.clone(), &prompt.messages, &extras).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&written).unwrap();
            (body.get("context_management").cloned(), context_management_headers(format, Some(management)))
        };
        let anthropic = json!({"edits": [{
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 64_000},
            "keep": {"type": "tool_uses", "value": 3},
            "clear_at_least": {"type": "input_tokens", "value": 12_800},
            "exclude_tools": ["todo"],
            "clear_tool_inputs": false,
        }]});
        assert_eq!(sent(Format::Anthropic, &edit), (Some(anthropic), Some(("anthropic-beta", "context-management-2025-06-27"))));
        let responses = json!([{"type": "compaction", "compact_threshold": 96_000}]);
        assert_eq!(sent(Format::OpenaiResponses, &compaction), (Some(responses), None));
        for format in [Format::OpenaiChat, Format::Gemini] {
            assert_eq!(sent(format, &edit), (None, None), "{format:?}");
            assert_eq!(sent(format, &compaction), (None, None), "{format:?}");
        }
        let bare = ContextManagement::ClearToolUses {
            trigger_tokens: 64_000,
            keep_tool_uses: 3,
            clear_at_least_tokens: 0,
            exclude_tools: Vec::new(),
            clear_tool_inputs: false,
        };
        let (Some(bare), _) = sent(Format::Anthropic, &bare) else { panic!("an edit") };
        let fields: Vec<&str> = bare["edits"][0].as_object().unwrap().keys().map(String::as_str).collect();
        assert!(!fields.contains(&"clear_at_least") && !fields.contains(&"exclude_tools"), "{fields:?}: unset parameters are left to the API");
    }

    #[test]
    fn anthropic_overload_is_overloaded() {
        let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(classify_error(Format::Anthropic, 529, body, None).class(), "overloaded");
        assert_eq!(classify_error(Format::OpenaiChat, 500, b"oops", None), LlmError::Server { status: 500, message: "oops".into(), retry_after: None });
        let unavailable = br#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#;
        assert_eq!(classify_error(Format::Gemini, 503, unavailable, None).class(), "overloaded");
        let quota = br#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}"#;
        assert_eq!(classify_error(Format::Gemini, 429, quota, None).class(), "rate_limited");
    }
}
