//! A recorded HTTP response of any of the four APIs, turned into a v2
//! [`Exchange`]: the neutral parts, usage, ids, stop reason and model, plus
//! the raw bytes so the same exchange can also replay byte for byte. The
//! importers (vcr cassettes) and `reloop record` both start here.
//!
//! A stream is first accumulated into the API's whole-response shape (the
//! object a non-streamed call returns), with the size of each delta kept as
//! the part's `chunks`; one reader per API then reads that shape.

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;
mod sse_events;

use std::collections::BTreeMap;

use reloop_wire::Format;
use serde_json::Value;

use super::{Exchange, RawBody, RawResponse};
pub use sse_events::split_events;

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

/// Why a response cannot be read into parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromWireError {
    /// A body or event that is not the JSON the API sends.
    NotJson(String),
    /// JSON of the wrong shape: what was expected where.
    Shape(String),
    /// A kind of output this reader does not know.
    Unsupported(String),
}

impl std::fmt::Display for FromWireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotJson(what) => write!(f, "not JSON: {what}"),
            Self::Shape(what) => write!(f, "unexpected shape: {what}"),
            Self::Unsupported(what) => write!(f, "unsupported output: {what}"),
        }
    }
}

impl std::error::Error for FromWireError {}

/// The response headers an exchange keeps beside its parts.
const KEPT_HEADERS: [&str; 3] = ["request-id", "x-request-id", "openai-processing-ms"];

/// The v2 exchange of `response`, an answer of `api`. `decoded` is the body
/// after any `Content-Encoding` (the same bytes as `response.body` when
/// there was none): the parts are read from it, the raw bytes kept as sent.
pub fn exchange_from_wire(api: Format, response: WireResponse<'_>, decoded: &[u8]) -> Result<Exchange, FromWireError> {
    let text = std::str::from_utf8(decoded).map_err(|e| FromWireError::NotJson(format!("body is not UTF-8: {e}")))?;
    let streamed = is_stream(response.headers, text);
    let mut exchange = if streamed {
        let events = split_events(text)
            .iter()
            .filter_map(|event| sse_events::data(event))
            .filter(|data| *data != "[DONE]")
            .map(|data| serde_json::from_str(data).map_err(|e| FromWireError::NotJson(format!("event `{data}`: {e}"))))
            .collect::<Result<Vec<Value>, _>>()?;
        match api {
            Format::OpenaiChat => openai_chat::from_events(&events)?,
            Format::OpenaiResponses => openai_responses::from_events(&events)?,
            Format::Anthropic => anthropic::from_events(&events)?,
            Format::Gemini => gemini::from_events(&events)?,
        }
    } else {
        let body: Value = serde_json::from_str(text).map_err(|e| FromWireError::NotJson(format!("body: {e}")))?;
        match api {
            Format::OpenaiChat => openai_chat::from_body(&body, &BTreeMap::new())?,
            Format::OpenaiResponses => openai_responses::from_body(&body, &BTreeMap::new())?,
            Format::Anthropic => anthropic::from_body(&body, &BTreeMap::new())?,
            Format::Gemini => gemini::from_body(&body)?,
        }
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
    RawResponse { api: api_name(api).into(), status: response.status, headers: response.headers.to_vec(), body, events }
}

/// The name a recording gives `api`.
pub fn api_name(api: Format) -> &'static str {
    match api {
        Format::OpenaiChat => "openai_chat",
        Format::OpenaiResponses => "openai_responses",
        Format::Anthropic => "anthropic",
        Format::Gemini => "gemini",
    }
}

/// Whether the body is an event stream: by its content type, else by its first line.
fn is_stream(headers: &[(String, String)], body: &str) -> bool {
    let content_type = headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.as_str());
    match content_type {
        Some(kind) => kind.starts_with("text/event-stream"),
        None => body.trim_start().starts_with("event:") || body.trim_start().starts_with("data:"),
    }
}

/// Delta sizes per output slot, as a stream sent them.
pub(crate) type Chunks = BTreeMap<String, Vec<usize>>;

/// A string field of `value`, or empty.
pub(crate) fn str_of<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A count field of `value`, or 0.
/// Where an OpenAI API keeps its usage figures: Chat names them
/// `prompt`/`completion`, Responses `input`/`output`.
pub(crate) struct UsageFields {
    pub input: &'static str,
    pub output: &'static str,
    pub cached: &'static str,
    pub reasoning: &'static str,
}

/// An OpenAI usage object as recorded (OpenAI reports no cache writes).
pub(crate) fn openai_usage(wire: &Value, fields: &UsageFields) -> super::RecordedUsage {
    super::RecordedUsage {
        input_tokens: count(wire, fields.input),
        output_tokens: count(wire, fields.output),
        cache_read_tokens: count(wire, fields.cached),
        cache_write_tokens: 0,
        reasoning_tokens: wire.pointer(fields.reasoning).and_then(Value::as_u64),
        wire: Some(wire.clone()),
    }
}

pub(crate) fn count(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or_default()
}

/// An optional string field of `value`.
pub(crate) fn opt_str(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

#[cfg(test)]
pub(crate) mod tests;
