//! OpenAI Chat Completions: a `chat.completion`, or its chunks, read into
//! parts. Only the first choice is read (agents ask for one).

use crate::{FinishReason, Format};
use serde_json::{Map, Value, json};

use super::layout::{ChunkField, ChunkLayout, is_arguments_delta, is_openai_like, is_text_delta, tool_slot};
use crate::parts::{Arguments, Extra, ExtraFields, Part, RecordedUsage, ResponseIds, ToolCallPart, unmodelled};
use crate::reply::DecodedReply;
use crate::reply::read::{Chunks, FromWireError, UsageFields, extra_fields, of_response, openai_usage, opt_str};

/// Accumulates the chunks into the completion they describe, then reads
/// that; a layout an SDK would not accumulate as OpenAI's is kept (see
/// [`layout`](super::layout)).
pub fn from_events(events: &[Value]) -> Result<DecodedReply, FromWireError> {
    let mut completion = Map::new();
    let mut message = Map::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut finish = Value::Null;
    let mut chunks = Chunks::new();
    let mut layout = Some(Vec::with_capacity(events.len()));
    let mut envelopes: Vec<Extra> = Vec::with_capacity(events.len());
    for event in events {
        if let Some(error) = event.get("error") {
            return Err(FromWireError::Unsupported(format!("in-stream error {error}")));
        }
        layout = layout.zip(ChunkLayout::of_chunk(event)).map(|(mut layout, chunk)| {
            layout.push(chunk);
            layout
        });
        // The reply's id, model and creation time: the first chunk's that
        // says them (Azure's first chunk, its prompt filter results, has
        // `id: ""`); its fingerprint and usage: the last's. Its unmodelled
        // fields: the first chunk's, as an SDK keeps them (its snapshot
        // starts from that chunk).
        for key in ["id", "model", "created"] {
            if let Some(value) = event.get(key).filter(|v| !(v.is_null() || *v == "" || *v == 0)) {
                completion.entry(key).or_insert_with(|| value.clone());
            }
        }
        for key in ["system_fingerprint", "usage"] {
            if let Some(value) = event.get(key).filter(|v| !v.is_null()) {
                completion.insert(key.into(), value.clone());
            }
        }
        let mut envelope = unmodelled(event, ENVELOPE);
        if envelopes.is_empty() {
            completion.extend(envelope.clone());
        }
        // Beside them, what the chunk says of the reply, should it differ.
        envelope.extend(["id", "model", "created"].into_iter().filter_map(|key| Some((key.to_owned(), event.get(key)?.clone()))));
        envelopes.push(envelope);
        // With `n > 1` the choices' chunks interleave, each with its `index`.
        let Some(choice) = event
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|choice| choice.get("index").and_then(Value::as_u64).unwrap_or_default() == 0)
        else {
            continue;
        };
        if let Some(reason) = choice.get("finish_reason").filter(|v| !v.is_null()) {
            finish = reason.clone();
        }
        let delta = choice.get("delta").cloned().unwrap_or_default();
        for field in ["content", "reasoning_content", "refusal"] {
            if let Some(piece) = delta.get(field).and_then(Value::as_str) {
                if is_text_delta(&delta, piece) {
                    chunks.entry(field.into()).or_default().push(piece.chars().count());
                }
                append(&mut message, field, piece);
            }
        }
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or_default() as usize;
            while calls.len() <= index {
                calls.push(json!({ "function": {} }));
            }
            let target = calls[index].as_object_mut().expect("built as an object");
            // A gateway repeating the call's id repeats its name with it: not a second fragment.
            let repeated = call.get("id").is_some_and(Value::is_string) && target.contains_key("id");
            if let Some(id) = call.get("id").filter(|v| v.is_string()) {
                target.insert("id".into(), id.clone());
            }
            target.extend(unmodelled(call, CALL));
            let function = target.get_mut("function").and_then(Value::as_object_mut).expect("built with a function");
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str)
                && !repeated
            {
                append(function, "name", name);
            }
            if let Some(piece) = call.pointer("/function/arguments").and_then(Value::as_str) {
                if is_arguments_delta(call, piece) {
                    chunks.entry(tool_slot(index)).or_default().push(piece.chars().count());
                }
                append(function, "arguments", piece);
            }
        }
    }
    if completion.get("system_fingerprint").and_then(Value::as_str).is_none_or(str::is_empty) {
        // No chunk had one to leave out.
        for chunk in layout.iter_mut().flatten() {
            chunk.with.retain(|field| *field != ChunkField::NoSystemFingerprint);
        }
    }
    if envelopes.iter().any(|envelope| !alike(envelope, &envelopes[0])) {
        // Chunks that differ in what reloop does not model are sent each as recorded.
        for (chunk, envelope) in layout.iter_mut().flatten().zip(envelopes) {
            chunk.envelope = Some(envelope);
        }
    }
    let has_text = message.get("content").and_then(Value::as_str).is_some_and(|text| !text.is_empty());
    let layout = layout.filter(|layout| !is_openai_like(layout, has_text, !calls.is_empty()));
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    completion.insert("choices".into(), json!([{ "message": message, "finish_reason": finish }]));
    let mut decoded = from_body(&Value::Object(completion), &chunks)?;
    if let Some(layout) = layout {
        let extra = decoded.extra.get_or_insert_with(|| ExtraFields { api: Format::OpenaiChat.recorded_name().to_owned(), ..ExtraFields::default() });
        extra.chunks = layout;
    }
    Ok(decoded)
}

/// OpenAI's `obfuscation`: random padding of each chunk, differing by
/// design; the first chunk's stands for all (an SDK keeps the first's).
/// Chunks that differ in more are sent each with its own fields (its id,
/// model and creation time among them: Groq's later chunks say `id:
/// "stub"`).
const PADDING: &str = "obfuscation";

/// Whether two chunks' unmodelled envelope fields are the same, padding aside.
fn alike(one: &Extra, other: &Extra) -> bool {
    let fields = |extra: &Extra| extra.iter().filter(|(key, _)| *key != PADDING).map(|(key, value)| (key.clone(), value.clone())).collect::<Extra>();
    fields(one) == fields(other)
}

fn append(target: &mut Map<String, Value>, field: &str, piece: &str) {
    if let Value::String(text) = target.entry(field).or_insert_with(|| Value::String(String::new())) {
        text.push_str(piece);
    }
}

/// The fields of a completion (or chunk) that reloop models; the others are kept as extra.
const ENVELOPE: &[&str] = &["id", "object", "created", "model", "system_fingerprint", "usage", "choices"];

/// The fields of a tool call that reloop models.
const CALL: &[&str] = &["id", "type", "function", "index"];

/// The fields of a completion's choice that reloop models.
const CHOICE: &[&str] = &["index", "message", "finish_reason"];

/// The fields of a completion's message that reloop models.
const MESSAGE: &[&str] = &["role", "content", "reasoning_content", "refusal", "tool_calls", "annotations"];

/// Reads a whole completion; `chunks` are the stream's delta sizes by field.
pub fn from_body(completion: &Value, chunks: &Chunks) -> Result<DecodedReply, FromWireError> {
    let choice = completion.pointer("/choices/0").ok_or_else(|| FromWireError::Shape("completion without `choices[0]`".into()))?;
    let message = choice.get("message").cloned().unwrap_or_default();
    let chunks_of = |key: &str| chunks.get(key).cloned().unwrap_or_default();
    let mut parts = Vec::new();
    if let Some(text) = opt_str(&message, "reasoning_content") {
        parts.push(Part::Reasoning { id: None, summary: Vec::new(), text, encrypted_content: None, chunks: chunks_of("reasoning_content") });
    }
    if let Some(text) = opt_str(&message, "content") {
        let annotations = message.get("annotations").and_then(Value::as_array).cloned().unwrap_or_default();
        parts.push(Part::Text { text, id: None, annotations, chunks: chunks_of("content"), extra: Extra::new() });
    }
    if let Some(refusal) = opt_str(&message, "refusal") {
        parts.push(Part::Refusal { refusal });
    }
    for (i, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().into();
        let arguments = Arguments::Raw(call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or_default().into());
        parts.push(Part::ToolCall(ToolCallPart {
            chunks: chunks_of(&format!("tool:{i}")),
            extra: unmodelled(call, CALL),
            ..ToolCallPart::new(opt_str(call, "id"), name, arguments)
        }));
    }
    let fields = ExtraFields { choice: unmodelled(choice, CHOICE), message: unmodelled(&message, MESSAGE), ..of_response(unmodelled(completion, ENVELOPE)) };
    let extra = extra_fields(Format::OpenaiChat, &parts, fields);
    Ok(DecodedReply {
        parts,
        finish_reason: choice.get("finish_reason").and_then(Value::as_str).map(FinishReason::from_openai_str),
        model: opt_str(completion, "model"),
        ids: ResponseIds {
            response: opt_str(completion, "id"),
            created: completion.get("created").and_then(Value::as_u64),
            system_fingerprint: opt_str(completion, "system_fingerprint"),
        },
        usage: completion.get("usage").filter(|u| u.is_object()).map(usage),
        extra,
        context: Default::default(),
    })
}

fn usage(wire: &Value) -> RecordedUsage {
    let fields = UsageFields {
        input: "/prompt_tokens",
        output: "/completion_tokens",
        cached: "/prompt_tokens_details/cached_tokens",
        reasoning: "/completion_tokens_details/reasoning_tokens",
    };
    openai_usage(wire, &fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_of_several_choices_reads_the_first_choice_alone() {
        let chunk = |index: u64, delta: Value, finish: Value| json!({ "id": "c", "choices": [{ "index": index, "delta": delta, "finish_reason": finish }] });
        let events = [
            chunk(0, json!({ "role": "assistant", "content": "" }), Value::Null),
            chunk(1, json!({ "role": "assistant", "content": "" }), Value::Null),
            chunk(1, json!({ "content": "second" }), Value::Null),
            chunk(0, json!({ "content": "first" }), Value::Null),
            chunk(1, json!({}), json!("length")),
            chunk(0, json!({}), json!("stop")),
        ];
        let decoded = from_events(&events).unwrap();
        let texts: Vec<&str> = decoded.parts.iter().map(|part| if let Part::Text { text, .. } = part { text.as_str() } else { "" }).collect();
        assert_eq!(texts, ["first"]);
        assert_eq!(decoded.finish_reason, Some(FinishReason::Stop));
    }
}
