//! OpenAI Chat Completions from the neutral parts. Chat has one message per
//! reply, so the parts collapse into its fields: the text parts into
//! `content`, reasoning and thinking text into `reasoning_content` (as the
//! Chat-compatible reasoning providers send it), refusals into `refusal`,
//! tool calls into `tool_calls`; a stream sends them in that order
//! (`docs/recording-format.md` lists what Chat drops).

use reloop_wire::openai_chat::{ChatCompletion, ChatUsage, ChunkMeta};
use reloop_wire::{Format, ModelTurn, sse};
use serde_json::{Value, json};

use super::answer::{Answer, IdShape, argument_pieces, text_pieces};
use super::{CREATED, ReplyMeta};
use crate::recording::Part;

/// The whole `chat.completion` body.
pub fn completion(answer: &Answer, meta: &ReplyMeta) -> Value {
    let mut completion = envelope(answer, meta);
    let mut message = json!({ "role": "assistant", "content": content(answer) });
    let reasoning = reasoning(answer);
    if !reasoning.is_empty() {
        message["reasoning_content"] = json!(reasoning.concat());
    }
    let refusal: Vec<&str> = refusals(answer).collect();
    message["refusal"] = if refusal.is_empty() { Value::Null } else { json!(refusal.concat()) };
    let calls: Vec<Value> = answer
        .tool_calls()
        .map(|call| json!({ "id": call.id, "type": "function", "function": { "name": call.name, "arguments": call.arguments.to_wire() } }))
        .collect();
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    let annotations: Vec<&Value> = answer.parts.iter().flat_map(|part| if let Part::Text { annotations, .. } = part { annotations.as_slice() } else { &[] }).collect();
    if !annotations.is_empty() {
        message["annotations"] = json!(annotations);
    }
    completion["choices"][0]["message"] = message;
    completion
}

/// The stream: a role chunk, reasoning, content and refusal deltas, each
/// tool call (id and name first, then its arguments), the finish chunk,
/// the usage chunk when the client asked for it, `[DONE]`.
pub fn stream(answer: &Answer, meta: &ReplyMeta) -> Vec<String> {
    let whole = envelope(answer, meta);
    let chunk = |delta: Value, finish: Value| {
        let mut chunk = whole.clone();
        chunk["object"] = json!("chat.completion.chunk");
        chunk["choices"] = json!([{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }]);
        if let Some(fields) = chunk.as_object_mut() {
            fields.remove("usage");
        }
        chunk
    };
    let mut chunks = vec![chunk(json!({ "role": "assistant", "content": content(answer).map(|_| ""), "refusal": null }), Value::Null)];
    for part in &answer.parts {
        let deltas: Vec<Value> = match part {
            Part::Reasoning { .. } | Part::Thinking { .. } => {
                let (text, chunks) = reasoning_of(part);
                text_pieces(&text, chunks).into_iter().map(|piece| json!({ "reasoning_content": piece })).collect()
            }
            _ => Vec::new(),
        };
        chunks.extend(deltas.into_iter().map(|delta| chunk(delta, Value::Null)));
    }
    for part in &answer.parts {
        if let Part::Text { text, chunks: sizes, .. } = part {
            chunks.extend(text_pieces(text, sizes).into_iter().map(|piece| chunk(json!({ "content": piece }), Value::Null)));
        }
    }
    for refusal in refusals(answer) {
        chunks.extend(text_pieces(refusal, &[]).into_iter().map(|piece| chunk(json!({ "refusal": piece }), Value::Null)));
    }
    for (index, call) in answer.tool_calls().enumerate() {
        let opening = json!({ "index": index, "id": call.id, "type": "function", "function": { "name": call.name, "arguments": "" } });
        chunks.push(chunk(json!({ "tool_calls": [opening] }), Value::Null));
        let arguments = call.arguments.to_wire();
        for piece in argument_pieces(&arguments, &call.chunks) {
            chunks.push(chunk(json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] }), Value::Null));
        }
    }
    chunks.push(chunk(json!({}), json!(answer.finish_reason.as_openai_str())));
    if meta.include_usage {
        let mut usage = whole.clone();
        usage["object"] = json!("chat.completion.chunk");
        usage["choices"] = json!([]);
        chunks.push(usage);
    }
    chunks.iter().map(Value::to_string).chain(["[DONE]".to_owned()]).map(|data| sse::encode_frame(None, &data)).collect()
}

/// `content`: the text parts joined; `null` when the reply only calls tools.
fn content(answer: &Answer) -> Option<String> {
    let text = answer.text();
    (!text.is_empty() || answer.tool_calls().next().is_none()).then_some(text)
}

fn refusals(answer: &Answer) -> impl Iterator<Item = &str> {
    answer.parts.iter().filter_map(|part| if let Part::Refusal { refusal } = part { Some(refusal.as_str()) } else { None })
}

/// The reasoning text of a reasoning or thinking part and its delta sizes.
fn reasoning_of(part: &Part) -> (String, &[usize]) {
    match part {
        Part::Reasoning { text, summary, chunks, .. } => (if text.is_empty() { summary.join("\n\n") } else { text.clone() }, chunks),
        Part::Thinking { thinking, chunks, .. } => (thinking.clone(), chunks),
        _ => (String::new(), &[]),
    }
}

fn reasoning(answer: &Answer) -> Vec<String> {
    answer.parts.iter().map(|part| reasoning_of(part).0).filter(|text| !text.is_empty()).collect()
}

/// The completion without its message: id, created, model, finish reason, usage.
fn envelope(answer: &Answer, meta: &ReplyMeta) -> Value {
    let chunk_meta = ChunkMeta {
        id: answer.ids.response.clone().unwrap_or_else(|| IdShape::ChatCompletion.id(meta.request_index, 0)),
        model: meta.model.clone(),
        created: answer.ids.created.unwrap_or(CREATED),
        include_usage: meta.include_usage,
    };
    let turn = ModelTurn { finish_reason: answer.finish_reason.clone(), usage: Some(answer.usage), ..ModelTurn::default() };
    let mut completion = serde_json::to_value(ChatCompletion::from_turn(&turn, &chunk_meta)).expect("plain JSON");
    completion["usage"] = answer.wire_usage_in(Format::OpenaiChat).cloned().unwrap_or_else(|| json!(ChatUsage::from_usage(&answer.usage)));
    if let Some(fingerprint) = &answer.ids.system_fingerprint {
        completion["system_fingerprint"] = json!(fingerprint);
    }
    completion
}
