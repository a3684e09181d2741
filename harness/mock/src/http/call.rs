//! One model call as its route gives it, and its body read into the
//! neutral prompt.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::HeaderMap;
use reloop_wire::{Format, Prompt, codec};

use crate::replay::session::Caching;

/// One call as its route gives it: the format, the model and streaming
/// when the URL names them (Gemini), and the body.
pub(crate) struct Call {
    pub(crate) format: Format,
    pub(crate) model: Option<String>,
    pub(crate) stream: bool,
    /// The `anthropic-beta` header, which context management needs.
    pub(crate) beta: Option<String>,
    pub(crate) body: Result<Bytes, BytesRejection>,
}

/// The `anthropic-beta` header of a request, when it has one.
pub(crate) fn anthropic_beta(headers: &HeaderMap) -> Option<String> {
    headers.get("anthropic-beta").and_then(|value| value.to_str().ok()).map(str::to_owned)
}

/// Parses a request body of `format` into the neutral prompt and the cache
/// model its format implies: OpenAI's automatic caching, Gemini's implicit
/// one, or the Anthropic request's own breakpoints.
pub(crate) fn parse(call: &Call, body: &[u8]) -> Result<(Prompt, Caching), serde_json::Error> {
    let request = codec::decode_request(call.format, body, call.model.as_deref().unwrap_or_default(), call.stream)?;
    let caching = Caching::of(call.format, &request.prompt.model, request.breakpoints);
    Ok((request.prompt, caching))
}
