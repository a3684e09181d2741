//! Rendering replies in a wire format: a recorded turn as a stream or a
//! whole response, an injected fault's frames, an HTTP error's body. One
//! implementation per format; the server picks it by route.

use reloop_wire::openai_chat::{ApiError, ApiErrorBody, ChatCompletion, ChunkMeta, encode_stream};
use reloop_wire::ModelTurn;

use crate::fault::StreamErrorKind;
use crate::stream_plan::FaultFrames;

/// A fixed `created` stamp: replies must be the same bytes run after run.
pub const CREATED: u64 = 1_767_225_600;

/// What identifies one reply.
#[derive(Debug, Clone)]
pub struct ReplyMeta {
    /// The response id.
    pub id: String,
    /// The model named.
    pub model: String,
    /// Whether the client asked for usage in the stream.
    pub include_usage: bool,
}

/// One wire format's rendering.
pub trait Render: FaultFrames + Send + Sync {
    /// The turn as SSE frames.
    fn stream(&self, turn: &ModelTurn, meta: &ReplyMeta) -> Vec<String>;
    /// The turn as one JSON response body.
    fn complete(&self, turn: &ModelTurn, meta: &ReplyMeta) -> String;
    /// The provider's error body for an HTTP status.
    fn http_error_body(&self, status: u16) -> String;
}

/// OpenAI Chat Completions.
#[derive(Debug, Default)]
pub struct OpenaiChat;

fn chunk_meta(meta: &ReplyMeta) -> ChunkMeta {
    ChunkMeta { id: meta.id.clone(), model: meta.model.clone(), created: CREATED, include_usage: meta.include_usage }
}

fn openai_error(message: &str, kind: &str, code: Option<&str>) -> String {
    let body = ApiErrorBody {
        error: ApiError { message: message.into(), kind: kind.into(), param: None, code: code.map(str::to_owned) },
    };
    serde_json::to_string(&body).expect("plain JSON")
}

impl Render for OpenaiChat {
    fn stream(&self, turn: &ModelTurn, meta: &ReplyMeta) -> Vec<String> {
        encode_stream(turn, &chunk_meta(meta))
    }

    fn complete(&self, turn: &ModelTurn, meta: &ReplyMeta) -> String {
        serde_json::to_string(&ChatCompletion::from_turn(turn, &chunk_meta(meta))).expect("plain JSON")
    }

    fn http_error_body(&self, status: u16) -> String {
        match status {
            429 => openai_error("Rate limit reached for requests. Please try again in 2s.", "requests", Some("rate_limit_exceeded")),
            503 => openai_error("The engine is currently overloaded, please try again later.", "server_error", None),
            529 => openai_error("Overloaded", "overloaded_error", None),
            500..=599 => openai_error("The server had an error while processing your request. Sorry about that!", "server_error", None),
            _ => openai_error("Invalid request.", "invalid_request_error", None),
        }
    }
}

impl FaultFrames for OpenaiChat {
    fn garbled(&self) -> String {
        "data: {\"id\":\"chatcmpl-reloop\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tru\n\n".into()
    }

    fn stream_error(&self, kind: StreamErrorKind) -> String {
        let body = match kind {
            StreamErrorKind::Overloaded => openai_error("Overloaded", "overloaded_error", None),
            StreamErrorKind::ServerError => openai_error("The server had an error while processing your request.", "server_error", None),
            StreamErrorKind::RateLimited => openai_error("Rate limit reached.", "rate_limit_error", Some("rate_limit_exceeded")),
        };
        format!("data: {body}\n\n")
    }
}
