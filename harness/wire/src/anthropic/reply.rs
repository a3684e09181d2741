//! Anthropic Messages from the neutral parts: one content block per part,
//! in order, each streamed as the API streams that block type
//! (`docs/recording-format.md` gives the rule for parts Anthropic lacks).

use serde_json::{Value, json};

use crate::anthropic::{AnthropicUsage, MessageMeta};
use crate::context_management::{COMPACTION_BLOCK, PAUSED_FOR_COMPACTION};
use crate::parts::{Part, lay_over};
use crate::reply::{IdShape, Reply, ReplyMeta};
use crate::split::{argument_pieces, text_pieces};
use crate::{Format, sse};

/// One content block: as it starts streaming, its deltas, and whole.
struct Block {
    start: Value,
    deltas: Vec<Value>,
    whole: Value,
}

/// The whole `message` body.
pub fn message(reply: &Reply, meta: &ReplyMeta) -> Value {
    let mut message = envelope(reply, meta);
    message["content"] = blocks(reply, meta.request_index).map(|block| block.whole).collect();
    add_applied_edits(&mut message, reply);
    message
}

/// `context_management.applied_edits` on the message or its `message_delta`, when the request
/// asked for context management.
fn add_applied_edits(object: &mut Value, reply: &Reply) {
    if let Some(edits) = &reply.context.applied_edits {
        object["context_management"] = json!({ "applied_edits": edits });
    }
}

/// The stream: `message_start`, a `ping`, each block's start, deltas and
/// stop, `message_delta` (stop reason and usage), `message_stop`.
pub fn stream(reply: &Reply, meta: &ReplyMeta) -> Vec<String> {
    let mut start = envelope(reply, meta);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let counted = reply.wire_usage_in(Format::Anthropic).is_none();
    if counted {
        start["usage"]["output_tokens"] = json!(1);
    }
    let mut events = vec![json!({ "type": "message_start", "message": start }), json!({ "type": "ping" })];
    for (index, block) in blocks(reply, meta.request_index).enumerate() {
        events.push(json!({ "type": "content_block_start", "index": index, "content_block": block.start }));
        events.extend(block.deltas.into_iter().map(|delta| json!({ "type": "content_block_delta", "index": index, "delta": delta })));
        events.push(json!({ "type": "content_block_stop", "index": index }));
    }
    let whole = envelope(reply, meta);
    let usage = if counted { json!({ "output_tokens": whole["usage"]["output_tokens"] }) } else { whole["usage"].clone() };
    let mut delta = json!({ "stop_reason": whole["stop_reason"], "stop_sequence": null });
    // What the API learns at the end (`stop_details`, `container`) comes in
    // the delta, which the SDKs lay over the message.
    if let Some(extra) = reply.extra_for(Format::Anthropic) {
        lay_over(&mut delta, &extra.response);
    }
    let mut message_delta = json!({ "type": "message_delta", "delta": delta, "usage": usage });
    add_applied_edits(&mut message_delta, reply);
    events.push(message_delta);
    events.push(json!({ "type": "message_stop" }));
    events.iter().map(sse::encode_typed_frame).collect()
}

/// The message without content: id, model, stop reason and usage.
fn envelope(reply: &Reply, meta: &ReplyMeta) -> Value {
    let id = reply.ids.response.clone().unwrap_or_else(|| IdShape::Message.id(meta.request_index, 0));
    let message = MessageMeta { id, model: meta.model.clone() }.message(Vec::new(), Some(&reply.finish_reason), AnthropicUsage::from_usage(&reply.usage));
    let mut message = serde_json::to_value(message).expect("plain JSON");
    if let Some(wire) = reply.wire_usage_in(Format::Anthropic) {
        message["usage"] = wire.clone();
    }
    if let Some(extra) = reply.extra_for(Format::Anthropic) {
        lay_over(&mut message, &extra.response);
    }
    if reply.context.paused() {
        message["stop_reason"] = json!(PAUSED_FOR_COMPACTION);
    }
    message
}

/// The compaction block first, if one was made, then each part's block (none after a paused
/// compaction), with the part's unmodelled fields when the reply was recorded from Anthropic.
/// A part's generated ids follow its place among the parts, compaction or not.
fn blocks(reply: &Reply, request_index: usize) -> impl Iterator<Item = Block> {
    let recorded_here = reply.extra_for(Format::Anthropic).is_some();
    let compaction = reply.context.compaction.as_ref().map(|compaction| Block {
        start: json!({ "type": COMPACTION_BLOCK, "content": "" }),
        deltas: vec![json!({ "type": "compaction_delta", "content": compaction.content })],
        whole: json!({ "type": COMPACTION_BLOCK, "content": compaction.content }),
    });
    let answer = reply.parts.iter().enumerate().filter(|_| !reply.context.paused()).map(move |(slot, part)| {
        let mut block = block(part, request_index, slot);
        if let Some(extra) = part.extra().filter(|_| recorded_here) {
            lay_over(&mut block.start, extra);
            lay_over(&mut block.whole, extra);
        }
        block
    });
    compaction.into_iter().chain(answer)
}

fn text_deltas(kind: &str, field: &str, text: &str, chunks: &[usize]) -> Vec<Value> {
    text_pieces(text, chunks).into_iter().map(|piece| json!({ "type": kind, field: piece })).collect()
}

/// Input JSON deltas: as recorded, else an empty one first (as the API
/// starts) and then 16-byte fragments.
fn json_deltas(arguments: &str, chunks: &[usize]) -> Vec<Value> {
    let opening = chunks.is_empty().then_some("");
    opening.into_iter().chain(argument_pieces(arguments, chunks)).map(|piece| json!({ "type": "input_json_delta", "partial_json": piece })).collect()
}

/// A block that arrives whole in its start event.
fn atomic(whole: Value) -> Block {
    Block { start: whole.clone(), deltas: Vec::new(), whole }
}

fn block(part: &Part, request_index: usize, slot: usize) -> Block {
    match part {
        Part::Text { text, annotations, chunks, .. } => {
            let (mut start, mut whole) = (json!({ "type": "text", "text": "" }), json!({ "type": "text", "text": text }));
            let mut deltas = Vec::new();
            if !annotations.is_empty() {
                start["citations"] = json!([]);
                whole["citations"] = json!(annotations);
                deltas.extend(annotations.iter().map(|citation| json!({ "type": "citations_delta", "citation": citation })));
            }
            deltas.extend(text_deltas("text_delta", "text", text, chunks));
            Block { start, deltas, whole }
        }
        Part::Refusal { refusal } => Block {
            start: json!({ "type": "text", "text": "" }),
            deltas: text_deltas("text_delta", "text", refusal, &[]),
            whole: json!({ "type": "text", "text": refusal }),
        },
        Part::Thinking { thinking, signature, chunks } => thinking_block(thinking, signature.as_deref(), chunks),
        Part::Reasoning { summary, text, chunks, .. } => {
            let thinking = if text.is_empty() { summary.join("\n\n") } else { text.clone() };
            thinking_block(&thinking, None, chunks)
        }
        Part::RedactedThinking { data } => atomic(json!({ "type": "redacted_thinking", "data": data })),
        Part::ToolCall(call) => {
            let arguments = call.arguments.to_wire();
            let input = input_object(&arguments);
            let id = call.id.clone().unwrap_or_default();
            Block {
                start: json!({ "type": "tool_use", "id": id, "name": call.name, "input": {} }),
                deltas: json_deltas(&arguments, &call.chunks),
                whole: json!({ "type": "tool_use", "id": id, "name": call.name, "input": input }),
            }
        }
        Part::ServerToolUse { id, name, input, chunks } => {
            let id = id.clone().unwrap_or_else(|| IdShape::ServerToolUse.id(request_index, slot));
            Block {
                start: json!({ "type": "server_tool_use", "id": id, "name": name, "input": {} }),
                deltas: json_deltas(&input.to_wire(), chunks),
                whole: json!({ "type": "server_tool_use", "id": id, "name": name, "input": input_object(&input.to_wire()) }),
            }
        }
        Part::ServerToolResult { tool_use_id, kind, content } => atomic(json!({ "type": kind, "tool_use_id": tool_use_id, "content": content })),
    }
}

fn thinking_block(thinking: &str, signature: Option<&str>, chunks: &[usize]) -> Block {
    let mut deltas = text_deltas("thinking_delta", "thinking", thinking, chunks);
    deltas.extend(signature.map(|signature| json!({ "type": "signature_delta", "signature": signature })));
    Block {
        start: json!({ "type": "thinking", "thinking": "", "signature": "" }),
        deltas,
        whole: json!({ "type": "thinking", "thinking": thinking, "signature": signature.unwrap_or_default() }),
    }
}

/// A `tool_use` input as the whole message carries it: the arguments'
/// mapping, or `{}` when they are not one (as a cut stream leaves them).
pub(crate) fn input_object(arguments: &str) -> Value {
    serde_json::from_str(arguments).ok().filter(Value::is_object).unwrap_or_else(|| json!({}))
}
