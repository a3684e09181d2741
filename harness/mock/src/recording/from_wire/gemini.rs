//! Gemini: the codec (`reloop_wire::gemini`) reads a response or its
//! chunks into parts; this turns them into an exchange.

use reloop_wire::gemini::{self, Decoded};
use reloop_wire::{WireError, gemini::usage_of};
use serde_json::Value;

use super::FromWireError;
use crate::recording::{Exchange, RecordedUsage, ResponseIds};

/// A stream's chunks.
pub fn from_events(events: &[Value]) -> Result<Exchange, FromWireError> {
    gemini::decode_events(events).map(exchange).map_err(unsupported)
}

/// A whole `generateContent` body.
pub fn from_body(body: &Value) -> Result<Exchange, FromWireError> {
    gemini::decode_body(body).map(exchange).map_err(unsupported)
}

fn unsupported(error: WireError) -> FromWireError {
    FromWireError::Unsupported(error.to_string())
}

fn exchange(decoded: Decoded) -> Exchange {
    let has_calls = decoded.parts.iter().any(|part| matches!(part, reloop_wire::parts::Part::ToolCall(_)));
    Exchange {
        finish_reason: decoded.finish_reason.as_deref().map(|reason| gemini::finish_from_gemini(reason, has_calls)),
        model: decoded.model,
        ids: ResponseIds { response: decoded.response_id, ..ResponseIds::default() },
        usage: decoded.usage.map(|wire| {
            let (usage, thoughts) = usage_of(&wire);
            RecordedUsage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_tokens: usage.cache_read_tokens,
                cache_write_tokens: 0,
                reasoning_tokens: thoughts,
                wire: Some(wire),
            }
        }),
        parts: decoded.parts,
        ..Exchange::default()
    }
}
