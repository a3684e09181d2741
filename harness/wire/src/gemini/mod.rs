//! The Google Gemini API (`POST /v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent?alt=sse`, `:countTokens`): the request and its
//! parts, the response encoded from and decoded into the neutral
//! [`crate::parts::Part`]s (whole or streamed), the streamed turn for the
//! agent, and Google's error envelope.
//!
//! Unlike the other APIs, the model and whether to stream are in the URL
//! ([`Action`]), the API key may come as `x-goog-api-key` or `?key=`, and a
//! stream has no terminal event: it ends with the chunk that carries the
//! `finishReason`.

pub mod error_body;
pub mod reply;
pub mod request;
pub mod response;
pub mod stream;

#[cfg(test)]
mod fixtures;

pub use error_body::{GoogleError, GoogleErrorBody};
pub use request::{Content, FunctionCall, FunctionDeclaration, FunctionResponse, GeminiPart, GenerateContentRequest, Tool, tools};
pub use response::{Decoded, GeminiMeta, decode_body, decode_events, encode_chunks, encode_response, usage_metadata, usage_of};
pub use stream::GeminiStreamDecoder;

use serde_json::Value;

use crate::FinishReason;

/// The header that carries the API key (or the `key` query parameter).
pub const API_KEY_HEADER: &str = "x-goog-api-key";

/// What a `models/{model}:{method}` path asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `:generateContent` (`stream: false`) or `:streamGenerateContent`.
    Generate {
        /// The model named in the path.
        model: String,
        /// Whether the answer streams.
        stream: bool,
    },
    /// `:countTokens`.
    CountTokens {
        /// The model named in the path.
        model: String,
    },
}

impl Action {
    /// The action of the last path segment `{model}:{method}`, `None` for a
    /// method reloop does not serve.
    pub fn parse(segment: &str) -> Option<Self> {
        let (model, method) = segment.rsplit_once(':')?;
        let model = model.strip_prefix("models/").unwrap_or(model).to_owned();
        match method {
            "generateContent" => Some(Self::Generate { model, stream: false }),
            "streamGenerateContent" => Some(Self::Generate { model, stream: true }),
            "countTokens" => Some(Self::CountTokens { model }),
            _ => None,
        }
    }
}

/// The path below the API base URL (which ends in `/v1beta`) of a call to
/// `model`, streamed (as SSE) or not.
pub fn action_path(model: &str, stream: bool) -> String {
    if stream { format!("/models/{model}:streamGenerateContent?alt=sse") } else { format!("/models/{model}:generateContent") }
}

/// Tool arguments as the object `functionCall.args` carries: the arguments'
/// mapping, or `{}` when they are not one (as a cut stream leaves them).
pub(crate) fn args_object(arguments: &str) -> Value {
    serde_json::from_str(arguments).ok().filter(Value::is_object).unwrap_or_else(|| Value::Object(serde_json::Map::new()))
}

/// The `finishReason` values Gemini sends beside `STOP` and `MAX_TOKENS`,
/// kept verbatim through [`FinishReason::Other`].
const NATIVE_REASONS: [&str; 11] = [
    "MALFORMED_FUNCTION_CALL",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "FINISH_REASON_UNSPECIFIED",
];

/// The neutral finish reason of `finishReason`; Gemini says `STOP` when the
/// model called tools too, so `has_calls` tells the two apart.
pub fn finish_from_gemini(reason: &str, has_calls: bool) -> FinishReason {
    match reason {
        "STOP" if has_calls => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// The `finishReason` of a neutral one; reasons of other APIs Gemini has no
/// name for become `OTHER`.
pub fn finish_to_gemini(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop | FinishReason::ToolCalls => "STOP",
        FinishReason::Length => "MAX_TOKENS",
        FinishReason::ContentFilter => "SAFETY",
        FinishReason::Other(other) if NATIVE_REASONS.contains(&other.as_str()) => other,
        FinishReason::Other(_) => "OTHER",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_come_from_the_last_segment() {
        assert_eq!(Action::parse("gemini-2.5-flash:streamGenerateContent"), Some(Action::Generate { model: "gemini-2.5-flash".into(), stream: true }));
        assert_eq!(Action::parse("models/g:generateContent"), Some(Action::Generate { model: "g".into(), stream: false }));
        assert_eq!(Action::parse("g:countTokens"), Some(Action::CountTokens { model: "g".into() }));
        assert_eq!(Action::parse("g:embedContent"), None);
        assert_eq!(Action::parse("g"), None);
        assert_eq!(action_path("g", true), "/models/g:streamGenerateContent?alt=sse");
    }

    #[test]
    fn finish_reasons_round_trip() {
        for (reason, wire) in [
            (FinishReason::Stop, "STOP"),
            (FinishReason::Length, "MAX_TOKENS"),
            (FinishReason::ContentFilter, "SAFETY"),
            (FinishReason::Other("MALFORMED_FUNCTION_CALL".into()), "MALFORMED_FUNCTION_CALL"),
        ] {
            assert_eq!(finish_to_gemini(&reason), wire);
            assert_eq!(finish_from_gemini(wire, false), reason);
        }
        assert_eq!(finish_from_gemini("STOP", true), FinishReason::ToolCalls);
        assert_eq!(finish_to_gemini(&FinishReason::Other("pause_turn".into())), "OTHER");
    }
}
