//! Rendering replies in a wire format: a neutral [`Answer`] (the recorded
//! parts, in order) as a stream or a whole response, the frames a fault
//! needs, and every error body. One implementation per format; the server
//! picks it by route.

mod answer;
mod anthropic_parts;
mod chat_parts;
mod responses_parts;

pub use answer::{Answer, IdShape};
pub use responses_parts::call_item_ids as responses_call_item_ids;

use reloop_wire::Format;
use reloop_wire::anthropic::AnthropicErrorBody;
use reloop_wire::gemini::{self, GeminiMeta, GoogleErrorBody};
use reloop_wire::openai_chat::{ApiError, ApiErrorBody};

use crate::divergence::{DIVERGENCE_ERROR_TYPE, Divergence};
use crate::fault::StreamErrorKind;
use crate::stream_plan::FaultFrames;

/// A fixed creation time: replies must be the same bytes run after run.
pub const CREATED: u64 = 1_767_225_600;

/// What identifies one reply.
#[derive(Debug, Clone)]
pub struct ReplyMeta {
    /// The request's index in its session, for ids.
    pub request_index: usize,
    /// The model named.
    pub model: String,
    /// Whether the client asked for usage in a chat stream.
    pub include_usage: bool,
    /// The request's tools, which the Responses API echoes.
    pub tools: Vec<reloop_wire::ToolSpec>,
}

/// One wire format's rendering.
pub trait Render: FaultFrames + Send + Sync {
    /// The answer as SSE frames, each part in the API's event order.
    fn stream(&self, answer: &Answer, meta: &ReplyMeta) -> Vec<String>;
    /// The answer as one JSON response body.
    fn complete(&self, answer: &Answer, meta: &ReplyMeta) -> String;
    /// The provider's error bodies.
    fn errors(&self) -> &'static dyn ErrorBodies;
}

/// A provider's error bodies (both OpenAI APIs share theirs).
pub trait ErrorBodies: Send + Sync {
    /// The body for an injected HTTP status.
    fn http_error(&self, status: u16) -> String;
    /// The context-length error (status 400).
    fn context_exceeded(&self, window: u64, requested: u64) -> String;
    /// A request the provider rejects as invalid.
    fn invalid_request(&self, message: &str) -> String;
    /// A divergence, in the provider's error shape, typed `reloop_divergence`.
    fn divergence(&self, divergence: &Divergence) -> String;
}

/// The renderer of `format`.
pub fn renderer(format: Format) -> &'static dyn Render {
    match format {
        Format::OpenaiChat => &OpenaiChat,
        Format::OpenaiResponses => &OpenaiResponses,
        Format::Anthropic => &Anthropic,
        Format::Gemini => &Gemini,
    }
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain JSON")
}

fn openai_error(message: &str, kind: &str, code: Option<&str>) -> String {
    json(&ApiErrorBody { error: ApiError { message: message.into(), kind: kind.into(), param: None, code: code.map(str::to_owned) } })
}

/// OpenAI's error envelope, shared by Chat Completions and Responses.
#[derive(Debug, Default)]
pub struct OpenaiErrors;

impl ErrorBodies for OpenaiErrors {
    fn http_error(&self, status: u16) -> String {
        match status {
            429 => openai_error("Rate limit reached for requests. Please try again in 2s.", "requests", Some("rate_limit_exceeded")),
            503 => openai_error("The engine is currently overloaded, please try again later.", "server_error", None),
            529 => openai_error("Overloaded", "overloaded_error", None),
            500..=599 => openai_error("The server had an error while processing your request. Sorry about that!", "server_error", None),
            _ => openai_error("Invalid request.", "invalid_request_error", None),
        }
    }
    fn context_exceeded(&self, window: u64, requested: u64) -> String {
        json(&ApiErrorBody::context_length_exceeded(window, requested))
    }
    fn invalid_request(&self, message: &str) -> String {
        json(&ApiErrorBody::invalid_request(message, None))
    }
    fn divergence(&self, divergence: &Divergence) -> String {
        openai_error(&format!("reloop: {}", divergence.render()), DIVERGENCE_ERROR_TYPE, Some(divergence.check))
    }
}

fn openai_stream_error(kind: StreamErrorKind) -> (&'static str, &'static str) {
    match kind {
        StreamErrorKind::Overloaded => ("overloaded_error", "Overloaded"),
        StreamErrorKind::ServerError => ("server_error", "The server had an error while processing your request."),
        StreamErrorKind::RateLimited => ("rate_limit_error", "Rate limit reached."),
    }
}

/// OpenAI Chat Completions.
#[derive(Debug, Default)]
pub struct OpenaiChat;

impl Render for OpenaiChat {
    fn stream(&self, answer: &Answer, meta: &ReplyMeta) -> Vec<String> {
        chat_parts::stream(answer, meta)
    }
    fn complete(&self, answer: &Answer, meta: &ReplyMeta) -> String {
        chat_parts::completion(answer, meta).to_string()
    }
    fn errors(&self) -> &'static dyn ErrorBodies {
        &OpenaiErrors
    }
}

impl FaultFrames for OpenaiChat {
    fn garbled(&self) -> String {
        "data: {\"id\":\"chatcmpl-reloop\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tru\n\n".into()
    }
    fn stream_error(&self, kind: StreamErrorKind) -> String {
        let (kind, message) = openai_stream_error(kind);
        format!("data: {}\n\n", openai_error(message, kind, None))
    }
}

/// OpenAI Responses.
#[derive(Debug, Default)]
pub struct OpenaiResponses;

impl Render for OpenaiResponses {
    fn stream(&self, answer: &Answer, meta: &ReplyMeta) -> Vec<String> {
        responses_parts::stream(answer, meta)
    }
    fn complete(&self, answer: &Answer, meta: &ReplyMeta) -> String {
        responses_parts::response(answer, meta).to_string()
    }
    fn errors(&self) -> &'static dyn ErrorBodies {
        &OpenaiErrors
    }
}

impl FaultFrames for OpenaiResponses {
    fn garbled(&self) -> String {
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"tru\n\n".into()
    }
    fn stream_error(&self, kind: StreamErrorKind) -> String {
        let (kind, message) = openai_stream_error(kind);
        let event = serde_json::json!({ "type": "error", "code": kind, "message": message, "param": null, "sequence_number": 99 });
        format!("event: error\ndata: {event}\n\n")
    }
}

/// Anthropic Messages.
#[derive(Debug, Default)]
pub struct Anthropic;

impl Render for Anthropic {
    fn stream(&self, answer: &Answer, meta: &ReplyMeta) -> Vec<String> {
        anthropic_parts::stream(answer, meta)
    }
    fn complete(&self, answer: &Answer, meta: &ReplyMeta) -> String {
        anthropic_parts::message(answer, meta).to_string()
    }
    fn errors(&self) -> &'static dyn ErrorBodies {
        &AnthropicErrors
    }
}

/// Anthropic's error envelope.
#[derive(Debug, Default)]
pub struct AnthropicErrors;

impl ErrorBodies for AnthropicErrors {
    fn http_error(&self, status: u16) -> String {
        json(&match status {
            429 => AnthropicErrorBody::rate_limited("Number of request tokens has exceeded your per-minute rate limit"),
            529 | 503 => AnthropicErrorBody::overloaded(),
            500..=599 => AnthropicErrorBody::api_error("Internal server error"),
            _ => AnthropicErrorBody::invalid_request("Invalid request."),
        })
    }
    fn context_exceeded(&self, window: u64, requested: u64) -> String {
        json(&AnthropicErrorBody::prompt_too_long(requested, window))
    }
    fn invalid_request(&self, message: &str) -> String {
        json(&AnthropicErrorBody::invalid_request(message))
    }
    fn divergence(&self, divergence: &Divergence) -> String {
        json(&AnthropicErrorBody::new(DIVERGENCE_ERROR_TYPE, format!("reloop: {}", divergence.render())))
    }
}

impl FaultFrames for Anthropic {
    fn garbled(&self) -> String {
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_de\n\n".into()
    }
    fn stream_error(&self, kind: StreamErrorKind) -> String {
        let (kind, message) = match kind {
            StreamErrorKind::Overloaded => ("overloaded_error", "Overloaded"),
            StreamErrorKind::ServerError => ("api_error", "Internal server error"),
            StreamErrorKind::RateLimited => ("rate_limit_error", "Rate limited"),
        };
        format!("event: error\ndata: {}\n\n", json(&AnthropicErrorBody::new(kind, message)))
    }
}

/// Google Gemini: the codec in `reloop_wire::gemini` encodes the parts.
#[derive(Debug, Default)]
pub struct Gemini;

impl Gemini {
    fn meta(answer: &Answer, meta: &ReplyMeta) -> (GeminiMeta, serde_json::Value) {
        let response_id = answer.ids.response.clone().unwrap_or_else(|| IdShape::GeminiResponse.id(meta.request_index, 0));
        let usage = answer.wire_usage_in(Format::Gemini).cloned().unwrap_or_else(|| gemini::response::usage_metadata(&answer.usage));
        (GeminiMeta { response_id, model: meta.model.clone() }, usage)
    }
}

impl Render for Gemini {
    fn stream(&self, answer: &Answer, meta: &ReplyMeta) -> Vec<String> {
        let (meta, usage) = Self::meta(answer, meta);
        gemini::encode_stream(&answer.parts, &answer.finish_reason, &usage, &meta)
    }
    fn complete(&self, answer: &Answer, meta: &ReplyMeta) -> String {
        let (meta, usage) = Self::meta(answer, meta);
        gemini::encode_response(&answer.parts, &answer.finish_reason, &usage, &meta).to_string()
    }
    fn errors(&self) -> &'static dyn ErrorBodies {
        &GoogleErrors
    }
}

/// Google's error envelope.
#[derive(Debug, Default)]
pub struct GoogleErrors;

impl ErrorBodies for GoogleErrors {
    fn http_error(&self, status: u16) -> String {
        json(&GoogleErrorBody::for_status(status))
    }
    fn context_exceeded(&self, window: u64, requested: u64) -> String {
        json(&GoogleErrorBody::prompt_too_long(requested, window))
    }
    fn invalid_request(&self, message: &str) -> String {
        json(&GoogleErrorBody::invalid_argument(message))
    }
    fn divergence(&self, divergence: &Divergence) -> String {
        // Google types an error by an `ErrorInfo` detail's `reason`.
        let mut body = GoogleErrorBody::new(400, "FAILED_PRECONDITION", format!("reloop: {}", divergence.render()));
        let info = serde_json::json!({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": DIVERGENCE_ERROR_TYPE, "domain": "reloop", "metadata": { "check": divergence.check } });
        body.error.details.push(info);
        json(&body)
    }
}

impl FaultFrames for Gemini {
    fn garbled(&self) -> String {
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"tru\r\n\r\n".into()
    }
    fn stream_error(&self, kind: StreamErrorKind) -> String {
        let body = match kind {
            StreamErrorKind::Overloaded => GoogleErrorBody::for_status(503),
            StreamErrorKind::ServerError => GoogleErrorBody::for_status(500),
            StreamErrorKind::RateLimited => GoogleErrorBody::rate_limited(),
        };
        format!("data: {}\r\n\r\n", json(&body))
    }
}

#[cfg(test)]
mod tests;
