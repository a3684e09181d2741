//! Gemini from a neutral [`Reply`] (the recorded usage object when it is
//! Gemini's, else the counts as `usageMetadata`; the recorded `responseId`
//! or one in Gemini's shape), and a response read back into a
//! [`DecodedReply`].

use serde_json::Value;

use std::borrow::Cow;

use super::{Decoded, GeminiMeta, decode_body, decode_events, encode_chunks, encode_response, finish_from_gemini, usage_metadata, usage_of};
use crate::parts::{ExtraFields, Part, RecordedUsage, ResponseIds, ToolCallPart};
use crate::reply::read::extra_fields;
use crate::reply::{DecodedReply, FromWireError, IdShape, Reply, ReplyMeta};
use crate::{Format, WireError};

/// The whole `GenerateContentResponse` body.
pub fn response(reply: &Reply, meta: &ReplyMeta) -> Value {
    let (meta, usage) = gemini_meta(reply, meta);
    encode_response(&parts(reply), &reply.finish_reason, &usage, &meta, reply.extra_for(Format::Gemini))
}

/// The stream of `GenerateContentResponse` chunks.
pub fn stream(reply: &Reply, meta: &ReplyMeta) -> Vec<String> {
    let (meta, usage) = gemini_meta(reply, meta);
    let extra = reply.extra_for(Format::Gemini);
    // A chunk's own recorded usage goes with the recorded usage only.
    let events = extra.filter(|_| reply.wire_usage_in(Format::Gemini).is_some()).map_or(&[][..], |extra| &extra.events);
    encode_chunks(&parts(reply), &reply.finish_reason, &usage, &meta, extra, events)
}

/// The parts as Gemini sends them. A reply recorded from Gemini sends a
/// call's id only where one was recorded (Gemini's ids are optional; a
/// client answers an id-less call by its name); elsewhere an absent id is
/// a recording's shorthand and reloop's own is sent, which a client sends
/// back. Borrowed as they are when there is nothing to leave out.
fn parts(reply: &Reply) -> Cow<'_, [Part]> {
    if reply.extra_for(Format::Gemini).is_none() || !reply.generated_call_ids.contains(&true) {
        return Cow::Borrowed(&reply.parts);
    }
    let mut index = 0;
    let parts = reply.parts.iter().map(|part| match part {
        Part::ToolCall(call) => {
            let generated = reply.call_id_generated(index);
            index += 1;
            Part::ToolCall(ToolCallPart { id: call.id.clone().filter(|_| !generated), ..call.clone() })
        }
        other => other.clone(),
    });
    Cow::Owned(parts.collect())
}

fn gemini_meta(reply: &Reply, meta: &ReplyMeta) -> (GeminiMeta, Value) {
    let response_id = reply.ids.response.clone().unwrap_or_else(|| IdShape::GeminiResponse.id(meta.request_index, 0));
    let usage = if reply.no_usage { Value::Null } else { reply.wire_usage_in(Format::Gemini).cloned().unwrap_or_else(|| usage_metadata(&reply.usage)) };
    (GeminiMeta { response_id, model: meta.model.clone() }, usage)
}

/// A stream's chunks read into a reply.
pub fn from_events(events: &[Value]) -> Result<DecodedReply, FromWireError> {
    decode_events(events).map(decoded).map_err(unsupported)
}

/// A whole `generateContent` body read into a reply.
pub fn from_body(body: &Value) -> Result<DecodedReply, FromWireError> {
    decode_body(body).map(decoded).map_err(unsupported)
}

fn unsupported(error: WireError) -> FromWireError {
    FromWireError::Unsupported(error.to_string())
}

fn decoded(decoded: Decoded) -> DecodedReply {
    let has_calls = decoded.parts.iter().any(|part| matches!(part, Part::ToolCall(_)));
    DecodedReply {
        context: Default::default(),
        extra: extra_fields(
            Format::Gemini,
            &decoded.parts,
            ExtraFields { response: decoded.envelope, events: decoded.events, candidate: decoded.candidate, ..ExtraFields::default() },
        ),
        finish_reason: decoded.finish_reason.as_deref().map(|reason| finish_from_gemini(reason, has_calls)),
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
    }
}
