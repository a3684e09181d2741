//! A recorded HTTP response of any of the four APIs, turned into a v2
//! [`Exchange`]: the neutral parts, usage, ids, stop reason and model, as
//! the codec reads them (`reloop_wire::codec::decode_reply`), plus the kept
//! headers and the raw bytes so the same exchange can also replay byte for
//! byte. The importers (vcr cassettes) and `reloop record` both start here.

use reloop_wire::Format;
use reloop_wire::codec;
pub use reloop_wire::reply::FromWireError;
pub use reloop_wire::sse_events::split_events;

use super::{Exchange, RawBody, RawResponse};

/// A response as it came over the wire.
#[derive(Debug, Clone, Copy)]
pub struct WireResponse<'a> {
    /// HTTP status.
    pub status: u16,
    /// Headers in order, secrets already stripped.
    pub headers: &'a [(String, String)],
    /// The body exactly as sent (still gzip-encoded if it was).
    pub body: &'a [u8],
}

/// The response headers an exchange keeps beside its parts.
const KEPT_HEADERS: [&str; 3] = ["request-id", "x-request-id", "openai-processing-ms"];

/// The v2 exchange of `response`, an answer of `api`. `decoded` is the body
/// after any `Content-Encoding` (the same bytes as `response.body` when
/// there was none): the parts are read from it, the raw bytes kept as sent.
pub fn exchange_from_wire(api: Format, response: WireResponse<'_>, decoded: &[u8]) -> Result<Exchange, FromWireError> {
    let text = std::str::from_utf8(decoded).map_err(|e| FromWireError::NotJson(format!("body is not UTF-8: {e}")))?;
    let streamed = is_stream(response.headers, text);
    let decoded = codec::decode_reply(api, text, streamed)?;
    let mut exchange = Exchange {
        parts: decoded.parts,
        finish_reason: decoded.finish_reason,
        model: decoded.model,
        ids: decoded.ids,
        usage: decoded.usage,
        extra: decoded.extra,
        ..Exchange::default()
    };
    exchange.headers = response
        .headers
        .iter()
        .filter(|(name, _)| KEPT_HEADERS.contains(&name.to_ascii_lowercase().as_str()))
        .map(|(name, value)| (name.to_ascii_lowercase(), value.clone()))
        .collect();
    exchange.raw = Some(raw_response(api, response, streamed));
    Ok(exchange)
}

/// The raw bytes of `response`, split into its SSE events when streamed.
pub fn raw_response(api: Format, response: WireResponse<'_>, streamed: bool) -> RawResponse {
    let (body, events) = match RawBody::from_bytes(response.body) {
        RawBody::Text(text) if streamed => (None, split_events(&text).into_iter().map(str::to_owned).collect()),
        body => (Some(body), Vec::new()),
    };
    RawResponse { api: api.recorded_name().into(), status: response.status, headers: response.headers.to_vec(), body, events }
}

/// Whether the body is an event stream: by its content type, else by its first line.
fn is_stream(headers: &[(String, String)], body: &str) -> bool {
    let content_type = headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.as_str());
    match content_type {
        Some(kind) => kind.starts_with("text/event-stream"),
        None => body.trim_start().starts_with("event:") || body.trim_start().starts_with("data:"),
    }
}

#[cfg(test)]
pub(crate) mod tests;
