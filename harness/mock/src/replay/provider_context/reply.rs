//! What the provider adds to its reply when it managed the context: the
//! compaction it made, first in the content (Anthropic) or output
//! (Responses), and Anthropic's `context_management.applied_edits`, in the
//! whole body and, streamed, in `message_delta`. A paused Anthropic
//! compaction (`pause_after_compaction`) replies with the compaction alone
//! and `stop_reason: "compaction"`; a paused Responses one (Codex's
//! `compaction_trigger`) with the compaction item as its only output.

use reloop_wire::Format;
use reloop_wire::sse::encode_typed_frame;
use reloop_wire::sse_events::data;
use serde_json::{Value, json};

use super::ServerSide;

/// The `stop_reason` of a paused compaction.
const PAUSED: &str = "compaction";

/// Whether `side` changes the reply of `format` at all.
pub fn amends(format: Format, side: &ServerSide) -> bool {
    match format {
        Format::Anthropic => side.applied_edits.is_some() || side.compaction.is_some(),
        Format::OpenaiResponses => side.compaction.is_some(),
        Format::OpenaiChat | Format::Gemini => false,
    }
}

/// A whole reply body with `side` added.
pub fn amend_body(format: Format, body: &str, side: &ServerSide) -> String {
    let Ok(mut value) = serde_json::from_str::<Value>(body) else { return body.to_owned() };
    let list = if format == Format::Anthropic { "content" } else { "output" };
    if let Some(compaction) = &side.compaction {
        let mut items = match value[list].take() {
            Value::Array(items) if !compaction.pause => items,
            _ => Vec::new(),
        };
        items.insert(0, compaction.returned.clone());
        value[list] = Value::Array(items);
        if compaction.pause && format == Format::Anthropic {
            value["stop_reason"] = json!(PAUSED);
        }
    }
    if let (Format::Anthropic, Some(edits)) = (format, &side.applied_edits) {
        value["context_management"] = json!({ "applied_edits": edits });
    }
    value.to_string()
}

/// A streamed reply with `side` added: the compaction's events before the
/// first output, the indices after it shifted, the applied edits in
/// `message_delta` (Anthropic), the sequence renumbered (Responses).
pub fn amend_frames(format: Format, frames: Vec<String>, side: &ServerSide) -> Vec<String> {
    let events: Vec<Value> = frames.iter().filter_map(|frame| data(frame).and_then(|d| serde_json::from_str(d).ok())).collect();
    if events.len() != frames.len() {
        return frames;
    }
    let amended = match format {
        Format::Anthropic => anthropic_events(events, side),
        _ => responses_events(events, side),
    };
    amended.iter().map(encode_typed_frame).collect()
}

fn anthropic_events(events: Vec<Value>, side: &ServerSide) -> Vec<Value> {
    let mut out = Vec::with_capacity(events.len() + 3);
    let pause = side.compaction.as_ref().is_some_and(|c| c.pause);
    for mut event in events {
        let kind = event["type"].as_str().unwrap_or_default().to_owned();
        if let Some(compaction) = side.compaction.as_ref().filter(|_| kind == "ping") {
            out.push(event);
            out.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "compaction", "content": ""}}));
            out.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta", "content": compaction.returned["content"]}}));
            out.push(json!({"type": "content_block_stop", "index": 0}));
            continue;
        }
        if kind.starts_with("content_block_") && side.compaction.is_some() {
            if pause {
                continue;
            }
            event["index"] = json!(event["index"].as_u64().unwrap_or_default() + 1);
        }
        if kind == "message_delta" {
            if pause {
                event["delta"]["stop_reason"] = json!(PAUSED);
            }
            if let Some(edits) = &side.applied_edits {
                event["context_management"] = json!({ "applied_edits": edits });
            }
        }
        out.push(event);
    }
    out
}

fn responses_events(events: Vec<Value>, side: &ServerSide) -> Vec<Value> {
    let Some(compaction) = &side.compaction else { return events };
    let mut out = Vec::with_capacity(events.len() + 2);
    for mut event in events {
        let kind = event["type"].as_str().unwrap_or_default().to_owned();
        if let Some(index) = event["output_index"].as_u64() {
            if compaction.pause {
                continue;
            }
            event["output_index"] = json!(index + 1);
        }
        if let Some(output) =
            event.get_mut("response").and_then(|r| r.get_mut("output")).filter(|_| kind != "response.created" && kind != "response.in_progress")
        {
            let mut items = match output.take() {
                Value::Array(items) if !compaction.pause => items,
                _ => Vec::new(),
            };
            items.insert(0, compaction.returned.clone());
            *output = Value::Array(items);
        }
        out.push(event);
        if kind == "response.in_progress" {
            out.push(json!({"type": "response.output_item.added", "output_index": 0, "item": compaction.returned}));
            out.push(json!({"type": "response.output_item.done", "output_index": 0, "item": compaction.returned}));
        }
    }
    for (sequence_number, event) in out.iter_mut().enumerate() {
        event["sequence_number"] = json!(sequence_number);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::provider_context::Compaction;
    use reloop_wire::context_management::AppliedEdit;

    fn side(pause: bool, returned: Value) -> ServerSide {
        let edit = AppliedEdit { kind: "clear_tool_uses_20250919".into(), cleared_tool_uses: Some(2), cleared_thinking_turns: None, cleared_input_tokens: 900 };
        ServerSide { applied_edits: Some(vec![edit]), compaction: Some(Compaction { summary: "s".into(), returned, pause }), note: None }
    }

    #[test]
    fn an_anthropic_body_gets_the_block_first_and_the_applied_edits() {
        let body = json!({"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}).to_string();
        let amended: Value = serde_json::from_str(&amend_body(Format::Anthropic, &body, &side(false, json!({"type": "compaction", "content": "s"})))).unwrap();
        assert_eq!(amended["content"][0]["type"], "compaction");
        assert_eq!(amended["content"][1]["text"], "hi");
        assert_eq!(
            amended["context_management"]["applied_edits"][0],
            json!({"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2, "cleared_input_tokens": 900})
        );
        let paused: Value = serde_json::from_str(&amend_body(Format::Anthropic, &body, &side(true, json!({"type": "compaction", "content": "s"})))).unwrap();
        assert_eq!((paused["content"].as_array().unwrap().len(), paused["stop_reason"].as_str()), (1, Some("compaction")));
    }

    #[test]
    fn streams_carry_the_compaction_first_with_later_indices_shifted() {
        let anthropic = ["message_start", "ping", "content_block_start", "content_block_stop", "message_delta", "message_stop"]
            .map(|kind| encode_typed_frame(&json!({"type": kind, "index": 0, "delta": {"stop_reason": "end_turn"}})));
        let frames = amend_frames(Format::Anthropic, anthropic.to_vec(), &side(false, json!({"type": "compaction", "content": "s"})));
        let events: Vec<Value> = frames.iter().map(|f| serde_json::from_str(data(f).unwrap()).unwrap()).collect();
        assert_eq!(events[3]["delta"], json!({"type": "compaction_delta", "content": "s"}));
        assert_eq!(events[5]["index"], 1);
        assert_eq!(events[7]["context_management"]["applied_edits"][0]["cleared_tool_uses"], 2);
        let item = json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "x"});
        let responses = ["response.created", "response.in_progress", "response.output_item.added", "response.completed"]
            .map(|kind| encode_typed_frame(&json!({"type": kind, "output_index": 0, "response": {"output": []}})));
        let frames = amend_frames(Format::OpenaiResponses, responses.to_vec(), &side(false, item.clone()));
        let events: Vec<Value> = frames.iter().map(|f| serde_json::from_str(data(f).unwrap()).unwrap()).collect();
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds[2..5], ["response.output_item.added", "response.output_item.done", "response.output_item.added"]);
        assert_eq!((events[2]["item"].clone(), events[4]["output_index"].as_u64()), (item.clone(), Some(1)));
        assert_eq!(events[5]["response"]["output"][0], item);
        assert!(events.iter().enumerate().all(|(i, e)| e["sequence_number"] == i));
    }
}
