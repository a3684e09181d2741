//! A `GenerateContentResponse` from the neutral parts, whole or streamed
//! (each chunk a whole response holding one piece, the text cut into the
//! recorded delta sizes), and read back into parts: the same accumulator
//! serves a recording ([`decode_events`]) and the agent's stream
//! ([`super::GeminiStreamDecoder`]).
//!
//! Parts Gemini has no counterpart for (server tools and their results,
//! redacted thinking, citations) are left out; a refusal is sent as text and
//! reasoning summaries as thought text.

use serde_json::{Value, json};

use super::{args_object, finish_from_gemini, finish_to_gemini};
use crate::parts::{Arguments, Extra, ExtraFields, Part, ToolCallPart, lay_over, unmodelled};
use crate::split::text_pieces;
use crate::{FinishReason, ModelTurn, Reasoning, ToolCall, Usage, WireError};

/// What identifies one response.
#[derive(Debug, Clone)]
pub struct GeminiMeta {
    /// `responseId`.
    pub response_id: String,
    /// `modelVersion`.
    pub model: String,
}

/// `usageMetadata` of neutral counts: Gemini's prompt count includes the
/// cached tokens, as the neutral one does; it reports no cache writes.
pub fn usage_metadata(usage: &Usage) -> Value {
    let mut metadata = json!({
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    });
    if usage.cache_read_tokens > 0 {
        metadata["cachedContentTokenCount"] = json!(usage.cache_read_tokens);
    }
    metadata
}

/// The neutral counts of a `usageMetadata`, and its thought tokens (which
/// are output tokens billed beside `candidatesTokenCount`).
pub fn usage_of(metadata: &Value) -> (Usage, Option<u64>) {
    let count = |key: &str| metadata.get(key).and_then(Value::as_u64);
    let thoughts = count("thoughtsTokenCount");
    let usage = Usage {
        input_tokens: count("promptTokenCount").unwrap_or_default(),
        output_tokens: count("candidatesTokenCount").unwrap_or_default() + thoughts.unwrap_or_default(),
        cache_read_tokens: count("cachedContentTokenCount").unwrap_or_default(),
        cache_write_tokens: 0,
    };
    (usage, thoughts)
}

/// The whole response: one candidate holding every part, with the fields a
/// recording kept laid over the response and its parts.
pub fn encode_response(parts: &[Part], finish_reason: &FinishReason, usage: &Value, meta: &GeminiMeta, extra: Option<&ExtraFields>) -> Value {
    let parts: Vec<Value> = wire_parts(parts, false, extra.is_some()).into_iter().flatten().collect();
    let mut response = chunk(parts, Some(finish_reason), usage.clone(), meta, extra);
    if let Some(extra) = extra {
        lay_over(&mut response, &extra.response);
    }
    response
}

/// The stream: one `data:` event per piece (text cut into its recorded
/// sizes, a call whole), the last carrying the finish reason and the whole
/// usage; events end in `\r\n\r\n` as Google's do. The fields a recording
/// kept are laid over the chunks: `extra.response` over each, `events[i]`
/// (the recorded usage as it grew, when the recorded usage is reported)
/// over the `i`-th.
pub fn encode_chunks(
    parts: &[Part],
    finish_reason: &FinishReason,
    usage: &Value,
    meta: &GeminiMeta,
    extra: Option<&ExtraFields>,
    events: &[Extra],
) -> Vec<String> {
    let mut pieces: Vec<Value> = wire_parts(parts, true, extra.is_some()).into_iter().flatten().collect();
    // A stream recorded in more chunks than its parts fill (Gemini ends
    // some with a chunk of only `""` and the finish reason) ends in as many
    // empty texts; one at least.
    let recorded_chunks = extra.map_or(0, |extra| extra.events.len()).max(1);
    while pieces.len() < recorded_chunks {
        pieces.push(json!({ "text": "" }));
    }
    let interim =
        if usage.is_null() { Value::Null } else { json!({ "promptTokenCount": usage["promptTokenCount"], "totalTokenCount": usage["promptTokenCount"] }) };
    let last = pieces.len() - 1;
    pieces
        .into_iter()
        .enumerate()
        .map(|(at, piece)| {
            let (finish, usage) = if at == last { (Some(finish_reason), usage.clone()) } else { (None, interim.clone()) };
            let mut chunk = chunk(vec![piece], finish, usage, meta, extra);
            if let Some(extra) = extra {
                lay_over(&mut chunk, &extra.response);
            }
            if let Some(event) = events.get(at) {
                lay_over(&mut chunk, event);
                // A chunk recorded without usage is sent without.
                if !event.contains_key("usageMetadata")
                    && let Some(chunk) = chunk.as_object_mut()
                {
                    chunk.shift_remove("usageMetadata");
                }
            }
            format!("data: {chunk}\r\n\r\n")
        })
        .collect()
}

/// One response chunk. Its candidate carries `index: 0`, or exactly the
/// recorded candidate's fields when `extra` (recorded from Gemini) has them.
fn chunk(parts: Vec<Value>, finish_reason: Option<&FinishReason>, usage: Value, meta: &GeminiMeta, extra: Option<&ExtraFields>) -> Value {
    let mut candidate = json!({ "content": { "parts": parts, "role": "model" } });
    if let Some(reason) = finish_reason {
        candidate["finishReason"] = json!(finish_to_gemini(reason));
    }
    match extra {
        Some(extra) => lay_over(&mut candidate, &extra.candidate),
        None => candidate["index"] = json!(0),
    }
    let mut chunk = json!({ "candidates": [candidate], "usageMetadata": usage, "modelVersion": meta.model, "responseId": meta.response_id });
    if chunk["usageMetadata"].is_null()
        && let Some(chunk) = chunk.as_object_mut()
    {
        chunk.shift_remove("usageMetadata");
    }
    chunk
}

/// Each neutral part as Gemini parts: one, or its streamed pieces. A
/// signature without thought text rides on the next call (else the next
/// text), as Gemini sends it.
fn wire_parts(parts: &[Part], streamed: bool, with_extra: bool) -> Vec<Vec<Value>> {
    let mut out = Vec::with_capacity(parts.len());
    let mut bare_signature: Option<&str> = None;
    for part in parts {
        let mut pieces = match part {
            Part::Text { text, chunks, .. } => text_parts(text, chunks, streamed, false),
            Part::Refusal { refusal } => text_parts(refusal, &[], streamed, false),
            Part::Thinking { thinking, signature, .. } if thinking.is_empty() => {
                bare_signature = signature.as_deref().or(bare_signature);
                continue;
            }
            Part::Thinking { thinking, signature, chunks } => {
                let mut pieces = text_parts(thinking, chunks, streamed, true);
                if let (Some(signature), Some(last)) = (signature, pieces.last_mut()) {
                    last["thoughtSignature"] = json!(signature);
                }
                pieces
            }
            Part::Reasoning { summary, text, chunks, .. } => {
                let thinking = if text.is_empty() { summary.join("\n\n") } else { text.clone() };
                text_parts(&thinking, chunks, streamed, true)
            }
            Part::ToolCall(call) => {
                let mut function_call = json!({ "name": call.name, "args": args_object(&call.arguments.to_wire()) });
                if let Some(id) = &call.id {
                    function_call["id"] = json!(id);
                }
                if with_extra {
                    lay_over(&mut function_call, &call.extra);
                }
                vec![json!({ "functionCall": function_call })]
            }
            Part::RedactedThinking { .. } | Part::ServerToolUse { .. } | Part::ServerToolResult { .. } => continue,
        };
        if let (Some(signature), Some(first)) = (bare_signature, pieces.first_mut()) {
            first["thoughtSignature"] = json!(signature);
            bare_signature = None;
        }
        out.push(pieces);
    }
    if let Some(signature) = bare_signature {
        out.push(vec![json!({ "text": "", "thoughtSignature": signature })]);
    }
    out
}

fn text_parts(text: &str, chunks: &[usize], streamed: bool, thought: bool) -> Vec<Value> {
    let pieces = if streamed { text_pieces(text, chunks) } else { vec![text] };
    pieces.into_iter().map(|piece| if thought { json!({ "text": piece, "thought": true }) } else { json!({ "text": piece }) }).collect()
}

/// A response read off the wire.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    /// The parts, with the streamed delta sizes as their `chunks`.
    pub parts: Vec<Part>,
    /// The last `finishReason`, if any came.
    pub finish_reason: Option<String>,
    /// `modelVersion`.
    pub model: Option<String>,
    /// `responseId`.
    pub response_id: Option<String>,
    /// The last `usageMetadata`, as sent.
    pub usage: Option<Value>,
    /// The chunks' fields reloop does not model, the last value of each.
    pub envelope: Extra,
    /// Per streamed chunk, its own `usageMetadata` (the counts as they grew).
    pub events: Vec<Extra>,
    /// The candidate's fields besides its content and finish reason
    /// (`index`, `safetyRatings`, …), the last value of each.
    pub candidate: Extra,
}

/// The fields of a response chunk that reloop models; the others are kept as extra.
const ENVELOPE: &[&str] = &["candidates", "usageMetadata", "modelVersion", "responseId"];

impl Decoded {
    /// Adds one response (a whole body or one streamed chunk); returns the
    /// text pieces it carried. `streamed` records delta sizes.
    ///
    /// # Errors
    ///
    /// [`WireError::Provider`] for an `error` chunk; [`WireError::Protocol`]
    /// for a part kind a turn cannot hold.
    pub fn push(&mut self, response: &Value, streamed: bool) -> Result<Vec<String>, WireError> {
        if let Some(error) = response.get("error") {
            let kind = error.get("status").and_then(Value::as_str).unwrap_or("UNKNOWN");
            let message = error.get("message").and_then(Value::as_str).unwrap_or_default();
            return Err(WireError::Provider { kind: super::error_body::neutral_kind(kind, message).to_owned(), message: message.to_owned() });
        }
        let text_of = |key: &str| response.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        self.model = text_of("modelVersion").or(self.model.take());
        self.response_id = text_of("responseId").or(self.response_id.take());
        if let Some(usage) = response.get("usageMetadata").filter(|usage| usage.is_object()) {
            self.usage = Some(usage.clone());
        }
        self.envelope.extend(unmodelled(response, ENVELOPE));
        if streamed {
            self.events
                .push(unmodelled(response, &["candidates", "modelVersion", "responseId"]).into_iter().filter(|(key, _)| key == "usageMetadata").collect());
        }
        let candidate = response.pointer("/candidates/0");
        if let Some(candidate) = candidate {
            self.candidate.extend(unmodelled(candidate, &["content", "finishReason"]));
        }
        if let Some(reason) = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let parts = candidate.and_then(|c| c.pointer("/content/parts")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let mut texts = Vec::new();
        for part in parts {
            if let Some(text) = self.push_part(part, streamed)? {
                texts.push(text);
            }
        }
        Ok(texts)
    }

    fn push_part(&mut self, part: &Value, streamed: bool) -> Result<Option<String>, WireError> {
        if let Some(signature) = part.get("thoughtSignature").and_then(Value::as_str) {
            let thought_text = part.get("thought").and_then(Value::as_bool).unwrap_or_default();
            if !thought_text {
                self.parts.push(Part::Thinking { thinking: String::new(), signature: Some(signature.to_owned()), chunks: Vec::new() });
            }
        }
        if let Some(call) = part.get("functionCall") {
            let text_of = |key: &str| call.get(key).and_then(Value::as_str).map(str::to_owned);
            let arguments = Arguments::Json(call.get("args").cloned().unwrap_or_else(|| json!({})));
            let mut tool_call = ToolCallPart::new(text_of("id"), text_of("name").unwrap_or_default(), arguments);
            tool_call.extra = unmodelled(call, &["id", "name", "args"]);
            self.parts.push(Part::ToolCall(tool_call));
            return Ok(None);
        }
        let Some(text) = part.get("text").and_then(Value::as_str) else {
            let kind = part.as_object().and_then(|object| object.keys().next().cloned()).unwrap_or_default();
            return Err(WireError::Protocol(format!("Gemini part `{kind}` is not supported")));
        };
        let thought = part.get("thought").and_then(Value::as_bool).unwrap_or_default();
        if thought {
            let signature = part.get("thoughtSignature").and_then(Value::as_str).map(str::to_owned);
            match self.parts.last_mut() {
                Some(Part::Thinking { thinking, signature: None, chunks }) if !thinking.is_empty() => {
                    extend(thinking, chunks, text, streamed);
                    if let Some(Part::Thinking { signature: open, .. }) = self.parts.last_mut() {
                        *open = signature;
                    }
                }
                _ => self.parts.push(Part::Thinking { thinking: text.to_owned(), signature, chunks: sizes(text, streamed) }),
            }
            return Ok(None);
        }
        if text.is_empty() {
            return Ok(None);
        }
        match self.parts.last_mut() {
            Some(Part::Text { text: open, chunks, .. }) => extend(open, chunks, text, streamed),
            _ => self.parts.push(Part::Text { text: text.to_owned(), id: None, annotations: Vec::new(), chunks: sizes(text, streamed), extra: Extra::new() }),
        }
        Ok(Some(text.to_owned()))
    }

    /// The neutral turn: calls without an id get one made of the response
    /// id and their position.
    pub fn to_turn(&self) -> ModelTurn {
        let mut turn = ModelTurn::default();
        for part in &self.parts {
            match part {
                Part::Text { text, .. } => turn.text.push_str(text),
                Part::Thinking { thinking, signature, .. } => {
                    turn.reasoning.push(Reasoning::Thinking { thinking: thinking.clone(), signature: signature.clone() })
                }
                Part::ToolCall(call) => {
                    let index = turn.tool_calls.len();
                    let id = call.id.clone().unwrap_or_else(|| format!("call_{}_{index}", self.response_id.as_deref().unwrap_or("gemini")));
                    turn.tool_calls.push(ToolCall { id: id.into(), name: call.name.as_str().into(), arguments: call.arguments.to_wire().into() });
                }
                _ => {}
            }
        }
        let reason = self.finish_reason.as_deref().unwrap_or("STOP");
        turn.finish_reason = finish_from_gemini(reason, !turn.tool_calls.is_empty());
        turn.usage = self.usage.as_ref().map(|usage| usage_of(usage).0);
        turn
    }
}

fn sizes(text: &str, streamed: bool) -> Vec<usize> {
    if streamed { vec![text.chars().count()] } else { Vec::new() }
}

fn extend(open: &mut String, chunks: &mut Vec<usize>, text: &str, streamed: bool) {
    open.push_str(text);
    if streamed {
        chunks.push(text.chars().count());
    }
}

/// A whole `generateContent` body read into parts.
///
/// # Errors
///
/// As [`Decoded::push`].
pub fn decode_body(body: &Value) -> Result<Decoded, WireError> {
    let mut decoded = Decoded::default();
    decoded.push(body, false)?;
    Ok(decoded)
}

/// A stream's chunks (each event's JSON) read into parts, with the delta
/// sizes kept.
///
/// # Errors
///
/// As [`Decoded::push`].
pub fn decode_events(events: &[Value]) -> Result<Decoded, WireError> {
    let mut decoded = Decoded::default();
    for event in events {
        decoded.push(event, true)?;
    }
    Ok(decoded)
}
