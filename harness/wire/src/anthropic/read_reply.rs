//! Anthropic Messages: a `message` object, or its stream (`message_start`,
//! `content_block_*`, `message_delta`), read into parts.

use crate::{FinishReason, Format};
use serde_json::{Map, Value};

use crate::context_management::{AppliedContext, COMPACTION_BLOCK, Compaction, PAUSED_FOR_COMPACTION};
use crate::parts::{Arguments, Part, RecordedUsage, ResponseIds, ToolCallPart, unmodelled};
use crate::reply::DecodedReply;
use crate::reply::read::{Chunks, FromWireError, count, extra_fields, of_response, opt_str, str_of};

/// Accumulates a stream into the message it describes, then reads that.
pub fn from_events(events: &[Value]) -> Result<DecodedReply, FromWireError> {
    let mut message = Value::Null;
    let mut blocks: Vec<Value> = Vec::new();
    let mut chunks = Chunks::new();
    for event in events {
        match str_of(event, "type") {
            "message_start" => message = event.get("message").cloned().unwrap_or_default(),
            "content_block_start" => blocks.push(event.get("content_block").cloned().unwrap_or_default()),
            "content_block_delta" => {
                let index = event.get("index").and_then(Value::as_u64).unwrap_or_default() as usize;
                let block = blocks.get_mut(index).ok_or_else(|| FromWireError::Shape(format!("delta for block {index} before its start")))?;
                let delta = event.get("delta").cloned().unwrap_or_default();
                let (field, piece) = match str_of(&delta, "type") {
                    "text_delta" => ("text", str_of(&delta, "text")),
                    "thinking_delta" => ("thinking", str_of(&delta, "thinking")),
                    "signature_delta" => ("signature", str_of(&delta, "signature")),
                    "input_json_delta" => ("partial_json", str_of(&delta, "partial_json")),
                    "compaction_delta" => ("content", str_of(&delta, "content")),
                    "citations_delta" => {
                        push_citation(block, delta.get("citation").cloned().unwrap_or_default());
                        continue;
                    }
                    other => return Err(FromWireError::Unsupported(format!("content_block_delta `{other}`"))),
                };
                if field != "signature" && field != "content" {
                    chunks.entry(index.to_string()).or_default().push(piece.chars().count());
                }
                append(block, field, piece);
            }
            "message_delta" => {
                if let (Some(target), Some(delta)) = (message.as_object_mut(), event.get("delta").and_then(Value::as_object)) {
                    target.extend(delta.clone());
                }
                if let Some(target) = message.as_object_mut() {
                    target.extend(unmodelled(event, &["type", "delta", "usage"]));
                }
                let usage = event.get("usage").and_then(Value::as_object).cloned().unwrap_or_default();
                if let Some(target) = message.get_mut("usage").and_then(Value::as_object_mut) {
                    target.extend(usage.into_iter().filter(|(_, v)| !v.is_null()));
                }
            }
            "error" => return Err(FromWireError::Unsupported(format!("in-stream error {}", event.get("error").unwrap_or(&Value::Null)))),
            _ => {}
        }
    }
    if let Some(target) = message.as_object_mut() {
        target.insert("content".into(), Value::Array(blocks));
    }
    from_body(&message, &chunks)
}

fn append(block: &mut Value, field: &str, piece: &str) {
    if let Some(block) = block.as_object_mut() {
        let entry = block.entry(field).or_insert_with(|| Value::String(String::new()));
        if let Value::String(text) = entry {
            text.push_str(piece);
        }
    }
}

fn push_citation(block: &mut Value, citation: Value) {
    if let Some(block) = block.as_object_mut()
        && let Value::Array(list) = block.entry("citations").or_insert_with(|| Value::Array(Vec::new()))
    {
        list.push(citation);
    }
}

/// Reads a whole `message` object; `chunks` are the stream's delta sizes by block index.
pub fn from_body(message: &Value, chunks: &Chunks) -> Result<DecodedReply, FromWireError> {
    let content = message.get("content").and_then(Value::as_array).ok_or_else(|| FromWireError::Shape("message without `content`".into()))?;
    let paused = message.get("stop_reason").and_then(Value::as_str) == Some(PAUSED_FOR_COMPACTION);
    let compaction = content.iter().find(|block| str_of(block, "type") == COMPACTION_BLOCK).map(|block| Compaction {
        id: None,
        content: str_of(block, "content").into(),
        pause: paused,
    });
    let parts: Vec<Part> = content
        .iter()
        .enumerate()
        .filter(|(_, block)| str_of(block, "type") != COMPACTION_BLOCK)
        .map(|(i, block)| part(block, chunks.get(&i.to_string()).cloned().unwrap_or_default()))
        .collect::<Result<_, _>>()?;
    let applied_edits = message.pointer("/context_management/applied_edits").and_then(|edits| serde_json::from_value(edits.clone()).ok());
    let extra = extra_fields(Format::Anthropic, &parts, of_response(unmodelled(message, ENVELOPE)));
    Ok(DecodedReply {
        parts,
        finish_reason: message.get("stop_reason").and_then(Value::as_str).map(FinishReason::from_anthropic_str),
        model: opt_str(message, "model"),
        ids: ResponseIds { response: opt_str(message, "id"), ..ResponseIds::default() },
        usage: message.get("usage").filter(|u| u.is_object()).map(usage),
        extra,
        context: AppliedContext { applied_edits, compaction },
    })
}

/// The fields of a `message` that reloop models; the others are kept as extra.
const ENVELOPE: &[&str] = &["id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"];

fn part(block: &Value, chunks: Vec<usize>) -> Result<Part, FromWireError> {
    Ok(match str_of(block, "type") {
        "text" => Part::Text {
            text: str_of(block, "text").into(),
            id: None,
            annotations: block.get("citations").and_then(Value::as_array).cloned().unwrap_or_default(),
            chunks,
            extra: unmodelled(block, &["type", "text", "citations"]),
        },
        "thinking" => Part::Thinking { thinking: str_of(block, "thinking").into(), signature: opt_str(block, "signature"), chunks },
        "redacted_thinking" => Part::RedactedThinking { data: str_of(block, "data").into() },
        "tool_use" => Part::ToolCall(ToolCallPart {
            chunks,
            extra: unmodelled(block, &["type", "id", "name", "input", "partial_json"]),
            ..ToolCallPart::new(opt_str(block, "id"), str_of(block, "name").into(), arguments(block))
        }),
        "server_tool_use" => Part::ServerToolUse { id: opt_str(block, "id"), name: str_of(block, "name").into(), input: arguments(block), chunks },
        kind if kind.ends_with("_tool_result") => {
            Part::ServerToolResult { tool_use_id: opt_str(block, "tool_use_id"), kind: kind.into(), content: block.get("content").cloned().unwrap_or_default() }
        }
        other => return Err(FromWireError::Unsupported(format!("content block `{other}`"))),
    })
}

/// A streamed call's arguments exactly as streamed; a whole message's input as a mapping.
fn arguments(block: &Value) -> Arguments {
    match block.get("partial_json").and_then(Value::as_str) {
        Some(streamed) if !streamed.is_empty() => Arguments::Raw(streamed.into()),
        _ => Arguments::Json(block.get("input").cloned().filter(|v| v.is_object()).unwrap_or_else(|| Value::Object(Map::new()))),
    }
}

/// Anthropic's input excludes cached tokens; the neutral count includes them.
fn usage(wire: &Value) -> RecordedUsage {
    let cache_read = count(wire, "/cache_read_input_tokens");
    let cache_write = count(wire, "/cache_creation_input_tokens");
    RecordedUsage {
        input_tokens: count(wire, "/input_tokens") + cache_read + cache_write,
        output_tokens: count(wire, "/output_tokens"),
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        reasoning_tokens: None,
        wire: Some(wire.clone()),
    }
}
