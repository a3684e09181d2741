//! OpenAI Responses: a `response` object, or its stream, read into parts.
//! A stream's items are taken from its `response.output_item.done` events
//! (a `response.completed` may carry an empty `output`), its id, model,
//! status and usage from the last `response.*` snapshot.

use crate::{FinishReason, Format};
use serde_json::Value;

use crate::context_management::{AppliedContext, Compaction, compaction_item_content};
use crate::parts::{Arguments, Part, RecordedUsage, ResponseIds, ToolCallPart, unmodelled};
use crate::reply::DecodedReply;
use crate::reply::read::{Chunks, FromWireError, UsageFields, extra_fields, of_response, openai_usage, opt_str, str_of};

/// Accumulates a stream into the response it describes, then reads that.
pub fn from_events(events: &[Value]) -> Result<DecodedReply, FromWireError> {
    let mut response = Value::Null;
    let mut items: Vec<(u64, Value)> = Vec::new();
    let mut chunks = Chunks::new();
    for event in events {
        let output_index = event.get("output_index").and_then(Value::as_u64).unwrap_or_default();
        match str_of(event, "type") {
            "response.created" | "response.in_progress" | "response.completed" | "response.incomplete" | "response.failed" => {
                response = event.get("response").cloned().unwrap_or_default();
            }
            "response.output_item.done" => items.push((output_index, event.get("item").cloned().unwrap_or_default())),
            "response.output_text.delta"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_text.delta"
            | "response.function_call_arguments.delta"
            | "response.custom_tool_call_input.delta" => {
                let delta = str_of(event, "delta");
                chunks.entry(output_index.to_string()).or_default().push(delta.chars().count());
            }
            "error" => return Err(FromWireError::Unsupported(format!("in-stream error {event}"))),
            _ => {}
        }
    }
    if !items.is_empty()
        && let Some(target) = response.as_object_mut()
    {
        items.sort_by_key(|(index, _)| *index);
        target.insert("output".into(), Value::Array(items.into_iter().map(|(_, item)| item).collect()));
    }
    from_body(&response, &chunks)
}

/// Reads a whole response; `chunks` are the stream's delta sizes by output index.
pub fn from_body(response: &Value, chunks: &Chunks) -> Result<DecodedReply, FromWireError> {
    let output = response.get("output").and_then(Value::as_array).ok_or_else(|| FromWireError::Shape("response without `output`".into()))?;
    let mut parts = Vec::new();
    let mut compaction = None;
    for (i, item) in output.iter().enumerate() {
        if let Some(content) = compaction_item_content(item) {
            compaction = Some(Compaction { id: opt_str(item, "id"), content: content.to_owned(), pause: output.len() == 1 });
            continue;
        }
        let chunks = chunks.get(&i.to_string()).cloned().unwrap_or_default();
        read_item(item, chunks, &mut parts)?;
    }
    let calls = parts.iter().any(|p| matches!(p, Part::ToolCall(_)));
    let extra = extra_fields(Format::OpenaiResponses, &parts, of_response(unmodelled(response, ENVELOPE)));
    Ok(DecodedReply {
        parts,
        finish_reason: Some(finish_reason(response, calls)),
        model: opt_str(response, "model"),
        ids: ResponseIds { response: opt_str(response, "id"), created: response.get("created_at").and_then(Value::as_u64), system_fingerprint: None },
        usage: response.get("usage").filter(|u| u.is_object()).map(usage),
        extra,
        context: AppliedContext { applied_edits: None, compaction },
    })
}

/// The fields of a `response` that reloop models; the others (the echo of
/// the request's settings, `completed_at`, …) are kept as extra.
const ENVELOPE: &[&str] = &["id", "object", "created_at", "model", "status", "output", "usage", "incomplete_details"];

fn read_item(item: &Value, chunks: Vec<usize>, parts: &mut Vec<Part>) -> Result<(), FromWireError> {
    match str_of(item, "type") {
        "reasoning" => parts.push(Part::Reasoning {
            id: opt_str(item, "id"),
            summary: texts(item.get("summary")),
            text: texts(item.get("content")).concat(),
            encrypted_content: opt_str(item, "encrypted_content"),
            chunks,
        }),
        "message" => {
            for content in item.get("content").and_then(Value::as_array).into_iter().flatten() {
                parts.push(match str_of(content, "type") {
                    "output_text" => Part::Text {
                        text: str_of(content, "text").into(),
                        id: opt_str(item, "id"),
                        annotations: content.get("annotations").and_then(Value::as_array).cloned().unwrap_or_default(),
                        chunks: chunks.clone(),
                        extra: unmodelled(item, &["id", "type", "status", "content", "role"]),
                    },
                    "refusal" => Part::Refusal { refusal: str_of(content, "refusal").into() },
                    other => return Err(FromWireError::Unsupported(format!("message content `{other}`"))),
                });
            }
        }
        kind @ ("function_call" | "custom_tool_call") => parts.push(Part::ToolCall(ToolCallPart {
            item_id: opt_str(item, "id"),
            chunks,
            extra: unmodelled(item, &["id", "type", "status", "arguments", "input", "call_id", "name"]),
            ..ToolCallPart::new(
                opt_str(item, "call_id"),
                str_of(item, "name").into(),
                Arguments::Raw(str_of(item, if kind == "function_call" { "arguments" } else { "input" }).into()),
            )
        })),
        other => return Err(FromWireError::Unsupported(format!("output item `{other}`"))),
    }
    Ok(())
}

/// The `text` of each element of a summary or content list.
fn texts(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array).into_iter().flatten().map(|entry| str_of(entry, "text").to_owned()).collect()
}

/// Responses has a status, not a finish reason: an incomplete response ran
/// out of tokens (or was filtered); a complete one stopped or called tools.
fn finish_reason(response: &Value, calls: bool) -> FinishReason {
    match (str_of(response, "status"), response.pointer("/incomplete_details/reason").and_then(Value::as_str)) {
        ("incomplete", Some("content_filter")) => FinishReason::ContentFilter,
        ("incomplete", _) => FinishReason::Length,
        _ if calls => FinishReason::ToolCalls,
        _ => FinishReason::Stop,
    }
}

fn usage(wire: &Value) -> RecordedUsage {
    let fields = UsageFields {
        input: "/input_tokens",
        output: "/output_tokens",
        cached: "/input_tokens_details/cached_tokens",
        reasoning: "/output_tokens_details/reasoning_tokens",
    };
    openai_usage(wire, &fields)
}
