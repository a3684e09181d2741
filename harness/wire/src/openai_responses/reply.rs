//! OpenAI Responses from the neutral parts: one output item per part (text
//! and refusal parts of one recorded message share its item), in order,
//! each streamed as the API streams that item type, every event numbered
//! (`docs/recording-format.md` gives the rule for parts Responses lacks).

use serde_json::{Value, json};

use crate::context_management::compaction_item;
use crate::openai_responses::response::status_for;
use crate::openai_responses::{ResponseMeta, ResponsesRequest, ResponsesUsage};
use crate::parts::{Part, lay_over};
use crate::reply::{CREATED, IdShape, Reply, ReplyMeta};
use crate::split::{argument_pieces, text_pieces};
use crate::{Format, Prompt, sse};

/// One output item: added (empty), its content events, and whole.
struct Item {
    added: Value,
    /// Content events without `item_id`, `output_index` and `sequence_number`.
    events: Vec<Value>,
    whole: Value,
}

/// The whole `response` body.
pub fn response(reply: &Reply, meta: &ReplyMeta) -> Value {
    let mut response = envelope(reply, meta);
    response["output"] = items(reply, meta.request_index).into_iter().map(|item| item.whole).collect();
    response
}

/// The stream: `response.created`, `response.in_progress`, each item's
/// added, content and done events, then `response.completed` (or
/// `response.incomplete`) with the whole response.
pub fn stream(reply: &Reply, meta: &ReplyMeta) -> Vec<String> {
    let whole = response(reply, meta);
    let mut in_progress = whole.clone();
    in_progress["status"] = json!("in_progress");
    in_progress["output"] = json!([]);
    in_progress["usage"] = Value::Null;
    in_progress["incomplete_details"] = Value::Null;
    let mut events = vec![json!({ "type": "response.created", "response": in_progress }), json!({ "type": "response.in_progress", "response": in_progress })];
    for (output_index, item) in items(reply, meta.request_index).into_iter().enumerate() {
        let item_id = item.whole["id"].clone();
        events.push(json!({ "type": "response.output_item.added", "output_index": output_index, "item": item.added }));
        for mut event in item.events {
            event["item_id"] = item_id.clone();
            event["output_index"] = json!(output_index);
            events.push(event);
        }
        events.push(json!({ "type": "response.output_item.done", "output_index": output_index, "item": item.whole }));
    }
    let terminal = if whole["status"] == "incomplete" { "response.incomplete" } else { "response.completed" };
    events.push(json!({ "type": terminal, "response": whole }));
    events
        .into_iter()
        .enumerate()
        .map(|(sequence_number, mut event)| {
            event["sequence_number"] = json!(sequence_number);
            sse::encode_typed_frame(&event)
        })
        .collect()
}

/// The ids a Responses client gets for the reply's function call items, in
/// call order: some clients name those, not the call ids, in their results.
pub fn call_item_ids(reply: &Reply, request_index: usize) -> Vec<String> {
    reply
        .parts
        .iter()
        .enumerate()
        .filter_map(|(slot, part)| {
            if let Part::ToolCall(call) = part { Some(call.item_id.clone().unwrap_or_else(|| IdShape::Item("fc_").id(request_index, slot))) } else { None }
        })
        .collect()
}

/// The response without output: id, created_at, model, status, the
/// request's tools, usage.
fn envelope(reply: &Reply, meta: &ReplyMeta) -> Value {
    let declared = Prompt { tools: meta.tools.clone(), ..Prompt::default() };
    let tools = ResponsesRequest::from_prompt(&declared).tools.iter().filter_map(|t| serde_json::to_value(t).ok()).collect();
    let response_meta = ResponseMeta {
        id: reply.ids.response.clone().unwrap_or_else(|| IdShape::Response.id(meta.request_index, 0)),
        model: meta.model.clone(),
        created_at: reply.ids.created.unwrap_or(CREATED),
        tools,
    };
    let (status, incomplete_details) = status_for(&reply.finish_reason);
    let response = response_meta.response(status, incomplete_details, Vec::new(), Some(ResponsesUsage::from_usage(&reply.usage)));
    let mut response = serde_json::to_value(response).expect("plain JSON");
    if let Some(wire) = reply.wire_usage_in(Format::OpenaiResponses) {
        response["usage"] = wire.clone();
    }
    if reply.no_usage {
        response["usage"] = Value::Null;
    }
    if let Some(extra) = reply.extra_for(Format::OpenaiResponses) {
        lay_over(&mut response, &extra.response);
    }
    response
}

/// The compaction item first, if one was made, then one item per part (none after a paused
/// compaction). A part's generated ids follow its place among the parts, compaction or not.
fn items(reply: &Reply, request_index: usize) -> Vec<Item> {
    let recorded_here = reply.extra_for(Format::OpenaiResponses).is_some();
    let mut items: Vec<Item> = Vec::new();
    if let Some(compaction) = &reply.context.compaction {
        let id = compaction.id.clone().unwrap_or_else(|| IdShape::Item("cmp_").id(request_index, 0));
        let item = compaction_item(&id, &compaction.content);
        items.push(Item { added: item.clone(), events: Vec::new(), whole: item });
    }
    let parts = if reply.context.paused() { &[][..] } else { &reply.parts[..] };
    let mut message_id: Option<Option<String>> = None;
    for (slot, part) in parts.iter().enumerate() {
        let item_id = |prefix| IdShape::Item(prefix).id(request_index, slot);
        match part {
            Part::Text { .. } | Part::Refusal { .. } => {
                let id = if let Part::Text { id, .. } = part { id.clone() } else { None };
                let joins = message_id.as_ref().is_some_and(|open| *open == id) && items.last().is_some_and(|item| item.whole["type"] == "message");
                if !joins {
                    let id = id.clone().unwrap_or_else(|| item_id("msg_"));
                    let mut added = json!({ "id": id, "type": "message", "status": "in_progress", "content": [], "role": "assistant" });
                    if let Some(extra) = part.extra().filter(|_| recorded_here) {
                        lay_over(&mut added, extra);
                    }
                    let mut whole = added.clone();
                    whole["status"] = json!("completed");
                    items.push(Item { added, events: Vec::new(), whole });
                }
                message_id = Some(id);
                let item = items.last_mut().expect("a message item was just opened");
                let content_index = item.whole["content"].as_array().map_or(0, Vec::len);
                let (events, content) = content_part(part, content_index);
                item.events.extend(events);
                if let Some(list) = item.whole["content"].as_array_mut() {
                    list.push(content);
                }
            }
            Part::Reasoning { id, summary, text, encrypted_content, chunks } => {
                items.push(reasoning_item(id.clone().unwrap_or_else(|| item_id("rs_")), summary, text, encrypted_content.as_deref(), chunks));
            }
            Part::Thinking { thinking, chunks, .. } => items.push(reasoning_item(item_id("rs_"), std::slice::from_ref(thinking), "", None, chunks)),
            Part::RedactedThinking { data } => items.push(reasoning_item(item_id("rs_"), &[], "", Some(data), &[])),
            Part::ToolCall(call) => {
                let arguments = call.arguments.to_wire();
                let id = call.item_id.clone().unwrap_or_else(|| item_id("fc_"));
                let mut whole =
                    json!({ "id": id, "type": "function_call", "status": "completed", "arguments": arguments, "call_id": call.id, "name": call.name });
                if let Some(extra) = part.extra().filter(|_| recorded_here) {
                    lay_over(&mut whole, extra);
                }
                let mut added = whole.clone();
                added["status"] = json!("in_progress");
                added["arguments"] = json!("");
                let mut events: Vec<Value> = argument_pieces(&arguments, &call.chunks)
                    .into_iter()
                    .map(|piece| json!({ "type": "response.function_call_arguments.delta", "delta": piece }))
                    .collect();
                events.push(json!({ "type": "response.function_call_arguments.done", "arguments": arguments }));
                items.push(Item { added, events, whole });
            }
            Part::ServerToolUse { id, input, .. } => {
                let id = id.clone().filter(|id| id.starts_with("ws_")).unwrap_or_else(|| item_id("ws_"));
                let mut action = json!({ "type": "search" });
                if let (Some(action), Value::Object(input)) = (action.as_object_mut(), crate::anthropic::reply::input_object(&input.to_wire())) {
                    action.extend(input);
                }
                let whole = json!({ "id": id, "type": "web_search_call", "status": "completed", "action": action });
                let mut added = whole.clone();
                added["status"] = json!("in_progress");
                let events = ["in_progress", "searching", "completed"].map(|phase| json!({ "type": format!("response.web_search_call.{phase}") })).to_vec();
                items.push(Item { added, events, whole });
            }
            Part::ServerToolResult { .. } => {}
        }
        if !matches!(part, Part::Text { .. } | Part::Refusal { .. }) {
            message_id = None;
        }
    }
    items
}

/// The events and the whole content part of one text or refusal part.
fn content_part(part: &Part, content_index: usize) -> (Vec<Value>, Value) {
    let (kind, field, text, annotations, chunks): (_, _, &str, &[Value], &[usize]) = match part {
        Part::Text { text, annotations, chunks, .. } => ("output_text", "text", text, annotations, chunks),
        Part::Refusal { refusal } => ("refusal", "refusal", refusal, &[], &[]),
        _ => unreachable!("only text and refusal parts become content parts"),
    };
    let empty =
        if kind == "output_text" { json!({ "type": kind, "annotations": [], "logprobs": [], "text": "" }) } else { json!({ "type": kind, "refusal": "" }) };
    let mut whole = empty.clone();
    whole[field] = json!(text);
    if kind == "output_text" {
        whole["annotations"] = json!(annotations);
    }
    let at = |event: Value| {
        let mut event = event;
        event["content_index"] = json!(content_index);
        event
    };
    let (delta_type, done_type) =
        if kind == "output_text" { ("response.output_text.delta", "response.output_text.done") } else { ("response.refusal.delta", "response.refusal.done") };
    let mut events = vec![at(json!({ "type": "response.content_part.added", "part": empty }))];
    for piece in text_pieces(text, chunks) {
        let mut delta = json!({ "type": delta_type, "delta": piece });
        if kind == "output_text" {
            delta["logprobs"] = json!([]);
        }
        events.push(at(delta));
    }
    for (annotation_index, annotation) in annotations.iter().enumerate() {
        events.push(at(json!({ "type": "response.output_text.annotation.added", "annotation_index": annotation_index, "annotation": annotation })));
    }
    let mut done = json!({ "type": done_type, field: text });
    if kind == "output_text" {
        done["logprobs"] = json!([]);
    }
    events.push(at(done));
    events.push(at(json!({ "type": "response.content_part.done", "part": whole })));
    (events, whole)
}

/// A reasoning item: its summary parts streamed one by one, then its raw
/// reasoning text; the encrypted content arrives whole.
fn reasoning_item(id: String, summary: &[String], text: &str, encrypted: Option<&str>, chunks: &[usize]) -> Item {
    let mut added = json!({ "id": id, "type": "reasoning", "summary": [] });
    if let Some(encrypted) = encrypted {
        added["encrypted_content"] = json!(encrypted);
    }
    let mut whole = added.clone();
    whole["summary"] = summary.iter().map(|text| json!({ "type": "summary_text", "text": text })).collect();
    let lengths: Vec<usize> = summary.iter().map(String::as_str).chain((!text.is_empty()).then_some(text)).map(|t| t.chars().count()).collect();
    let mut sizes = split_sizes(chunks, &lengths).into_iter();
    let mut events = Vec::new();
    for (summary_index, paragraph) in summary.iter().enumerate() {
        let part = |text: &str| json!({ "type": "summary_text", "text": text });
        events.push(json!({ "type": "response.reasoning_summary_part.added", "summary_index": summary_index, "part": part("") }));
        for piece in text_pieces(paragraph, &sizes.next().unwrap_or_default()) {
            events.push(json!({ "type": "response.reasoning_summary_text.delta", "summary_index": summary_index, "delta": piece }));
        }
        events.push(json!({ "type": "response.reasoning_summary_text.done", "summary_index": summary_index, "text": paragraph }));
        events.push(json!({ "type": "response.reasoning_summary_part.done", "summary_index": summary_index, "part": part(paragraph) }));
    }
    if !text.is_empty() {
        whole["content"] = json!([{ "type": "reasoning_text", "text": text }]);
        for piece in text_pieces(text, &sizes.next().unwrap_or_default()) {
            events.push(json!({ "type": "response.reasoning_text.delta", "content_index": 0, "delta": piece }));
        }
        events.push(json!({ "type": "response.reasoning_text.done", "content_index": 0, "text": text }));
    }
    Item { added, events, whole }
}

/// One item's recorded delta sizes shared out over its texts of `lengths`
/// characters, in order (a stream records them for the item as a whole).
fn split_sizes(chunks: &[usize], lengths: &[usize]) -> Vec<Vec<usize>> {
    let mut sizes = chunks.iter().copied();
    lengths
        .iter()
        .map(|&length| {
            let mut taken = Vec::new();
            let mut sum = 0;
            while sum < length {
                let Some(size) = sizes.next() else { break };
                sum += size;
                taken.push(size);
            }
            taken
        })
        .collect()
}
