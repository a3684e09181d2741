//! The client's side of the wire codec (`reloop_wire::codec`): the request
//! body with the frozen tools, the non-streamed response and the error
//! bodies, each asked of the format. Streaming is common (`reloop_wire::format::decoder_for`).

use std::time::Duration;

use reloop_wire::codec::RequestWriter;
use reloop_wire::{Format, Message, ModelTurn, Prompt, WireError, codec};

use super::LlmError;
use super::cache_breakpoints::CacheBreakpointSettings;
use crate::tool_schema::FrozenToolSchema;

/// The serialized request body of `head` (whose own tools are not
/// rendered, and whose context management the codec writes as its wire
/// has it) with `messages`, written by `writer` in `buffer` (a spent
/// body's, or empty): the frozen tools go in as
/// their frozen bytes, never serialized again; `cache` places Anthropic's
/// breakpoints (the tools' own is in the frozen bytes).
pub(super) fn body(
    writer: &mut RequestWriter,
    buffer: Vec<u8>,
    head: Prompt,
    messages: &[Message],
    tools: &FrozenToolSchema,
    cache: &CacheBreakpointSettings,
) -> Result<Vec<u8>, LlmError> {
    let frozen = (!tools.specs().is_empty()).then(|| &tools.wire_json()[..]);
    writer.write(buffer, head, messages, frozen, |prompt| cache.breakpoints(prompt)).map_err(|e| LlmError::Protocol(e.to_string()))
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

/// The loop's view of a wire-level failure.
pub(super) fn wire_error(error: WireError) -> LlmError {
    match error {
        WireError::StreamEndedEarly => LlmError::StreamEndedEarly,
        WireError::Provider { kind, message } => LlmError::from_stream_error(&kind, message),
        other => LlmError::Protocol(other.to_string()),
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

    /// The body with the frozen tools is the request the format renders from
    /// the whole prompt, and carries the frozen bytes verbatim.
    #[test]
    fn frozen_tools_go_into_the_body_every_format_renders() {
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
            let spliced = body(&mut writer, Vec::new(), without_tools.clone(), &full.messages, &frozen, &cache).unwrap();
            let whole = body(&mut writer, Vec::new(), full.clone(), &full.messages, &FrozenToolSchema::none(), &cache).unwrap();
            let tail = [&b",\"tools\":"[..], frozen.wire_json(), b"}"].concat();
            assert!(spliced.ends_with(&tail), "{format:?}: the frozen bytes, verbatim");
            let parse = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).unwrap();
            assert_eq!(parse(&spliced), parse(&whole), "{format:?}");
        }
    }

    /// `strategy: native` on each wire: Anthropic's `clear_tool_uses_20250919`
    /// edit with every parameter the policy sets, behind its beta header;
    /// Responses' compaction entry; nothing on the wires without one. The
    /// members come before the frozen tools, as the loop has always sent them.
    #[test]
    fn native_context_management_renders_each_providers_documented_shape() {
        use crate::context::native::NativeConfig;
        use serde_json::json;
        let spec = reloop_wire::ToolSpec { name: "read".into(), description: "Read".into(), parameters: json!({"type": "object"}) };
        let cache = CacheBreakpointSettings::default();
        let config = NativeConfig { exclude_tools: vec!["todo".into()], ..NativeConfig::default() };
        let sent = |format: Format, config: &NativeConfig| {
            let prompt = Prompt {
                model: "m".into(),
                messages: vec![reloop_wire::Message::user("go")],
                context_management: config.request(format, 128_000),
                ..Prompt::default()
            };
            let tools = FrozenToolSchema::freeze(vec![spec.clone()], format, &cache);
            let written = body(&mut RequestWriter::new(format), Vec::new(), prompt.clone(), &prompt.messages, &tools, &cache).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&written).unwrap();
            let members: Vec<String> = body.as_object().unwrap().keys().rev().take(2).cloned().collect();
            (body.get("context_management").cloned(), codec::request_headers(format, &prompt), members)
        };
        let anthropic = json!({"edits": [{
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 64_000},
            "keep": {"type": "tool_uses", "value": 3},
            "clear_at_least": {"type": "input_tokens", "value": 12_800},
            "exclude_tools": ["todo"],
            "clear_tool_inputs": false,
        }]});
        let beta = vec![("anthropic-beta", "context-management-2025-06-27".to_owned())];
        let last_two = vec!["tools".to_owned(), "context_management".to_owned()];
        assert_eq!(sent(Format::Anthropic, &config), (Some(anthropic), beta, last_two.clone()));
        let responses = json!([{"type": "compaction", "compact_threshold": 96_000}]);
        assert_eq!(sent(Format::OpenaiResponses, &config), (Some(responses), Vec::new(), last_two));
        for format in [Format::OpenaiChat, Format::Gemini] {
            assert_eq!((sent(format, &config).0, sent(format, &config).1), (None, Vec::new()), "{format:?}");
        }
        let bare = NativeConfig { clear_at_least_ratio: 0.0, ..NativeConfig::default() };
        let (Some(bare), ..) = sent(Format::Anthropic, &bare) else { panic!("an edit") };
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
