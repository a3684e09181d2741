//! What a response carried that reloop does not model comes back where it
//! was, on every API, whole and streamed, and only to a client of that API.

use serde_json::{Value, json};

use crate::Format;
use crate::codec::{decode_reply, encode_reply, encode_reply_stream};
use crate::parts::Part;
use crate::reply::{DecodedReply, Reply};
use crate::testing::{reply_meta, reply_of};

/// A recorded response per API, each with fields reloop does not model on
/// the response and on a part; and where each must come back.
fn recorded() -> Vec<(Format, Value, [&'static str; 2])> {
    vec![
        (
            Format::OpenaiChat,
            json!({ "id": "chatcmpl-1", "object": "chat.completion", "created": 7, "model": "m", "service_tier": "default",
                "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": { "role": "assistant", "content": null,
                    "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "f", "arguments": "{}" }, "note": "kept" }] } }],
                "usage": { "prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5 } }),
            ["/service_tier", "/choices/0/message/tool_calls/0/note"],
        ),
        (
            Format::OpenaiResponses,
            json!({ "id": "resp_1", "object": "response", "created_at": 7, "model": "m", "status": "completed", "service_tier": "default",
                "output": [{ "id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "phase": "final_answer",
                    "content": [{ "type": "output_text", "text": "hi", "annotations": [] }] }],
                "usage": { "input_tokens": 3, "output_tokens": 2, "total_tokens": 5 } }),
            ["/service_tier", "/output/0/phase"],
        ),
        (
            Format::Anthropic,
            json!({ "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_details": { "type": "tool" },
                "content": [{ "type": "tool_use", "id": "toolu_1", "name": "f", "input": {}, "caller": { "type": "direct" } }],
                "stop_reason": "tool_use", "stop_sequence": null, "usage": { "input_tokens": 3, "output_tokens": 2 } }),
            ["/stop_details", "/content/0/caller"],
        ),
        (
            Format::Gemini,
            json!({ "candidates": [{ "content": { "role": "model", "parts": [{ "functionCall": { "name": "f", "args": {}, "note": "kept" } }] }, "finishReason": "STOP" }],
                "usageMetadata": { "promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5 }, "modelVersion": "m", "responseId": "r1",
                "createTime": "2026-01-01T00:00:00Z" }),
            ["/createTime", "/candidates/0/content/parts/0/functionCall/note"],
        ),
    ]
}

fn decoded_whole(format: Format, body: &Value) -> DecodedReply {
    decode_reply(format, &body.to_string(), false).unwrap()
}

#[test]
fn unmodelled_fields_come_back_where_they_were_whole_and_streamed() {
    let part_extras = |reply: &DecodedReply| reply.parts.iter().map(|part| part.extra().cloned()).collect::<Vec<_>>();
    for (format, body, paths) in recorded() {
        let decoded = decoded_whole(format, &body);
        assert_eq!(decoded.extra.as_ref().map(|extra| extra.api.as_str()), Some(format.recorded_name()), "{format:?}");
        let reply = reply_of(decoded.clone());
        let whole: Value = serde_json::from_str(&encode_reply(format, &reply, &reply_meta())).unwrap();
        for path in paths {
            assert_eq!(whole.pointer(path), body.pointer(path), "{format:?} whole: {path}");
        }
        // Streamed, then read back: the same fields, on the response and the parts.
        let again = decode_reply(format, &encode_reply_stream(format, &reply, &reply_meta()).concat(), true).unwrap();
        // (What reloop's own rendering adds, the Responses defaults, reads back as extra too.)
        let sent = again.extra.clone().unwrap_or_default().response;
        for (key, value) in decoded.extra.clone().unwrap_or_default().response {
            assert_eq!(sent.get(&key), Some(&value), "{format:?} streamed: {key}");
        }
        assert_eq!(part_extras(&again), part_extras(&decoded), "{format:?} streamed parts");
    }
}

#[test]
fn unmodelled_fields_go_to_a_client_of_their_own_api_only() {
    let (_, anthropic, _) = recorded().into_iter().find(|(format, ..)| *format == Format::Anthropic).unwrap();
    let reply = reply_of(decoded_whole(Format::Anthropic, &anthropic));
    for format in [Format::OpenaiChat, Format::OpenaiResponses, Format::Gemini] {
        let body = encode_reply(format, &reply, &reply_meta());
        assert!(!body.contains("stop_details") && !body.contains("caller"), "{format:?}: {body}");
        assert!(!encode_reply_stream(format, &reply, &reply_meta()).concat().contains("caller"), "{format:?} streamed");
    }
}

#[test]
fn a_gemini_call_recorded_without_an_id_is_sent_without_one() {
    let (_, gemini, _) = recorded().into_iter().find(|(format, ..)| *format == Format::Gemini).unwrap();
    let mut reply = reply_of(decoded_whole(Format::Gemini, &gemini));
    // The replay names the call with its own id, as the loop needs one.
    if let Part::ToolCall(call) = &mut reply.parts[0] {
        call.id = Some("call_000_0".into());
    }
    let whole: Value = serde_json::from_str(&encode_reply(Format::Gemini, &reply, &reply_meta())).unwrap();
    assert_eq!(whole.pointer("/candidates/0/content/parts/0/functionCall/id"), None);
    // Other APIs need the id and get it.
    let chat: Value = serde_json::from_str(&encode_reply(Format::OpenaiChat, &reply, &reply_meta())).unwrap();
    assert_eq!(chat.pointer("/choices/0/message/tool_calls/0/id"), Some(&json!("call_000_0")));
    // A call written by hand without an id (not recorded from Gemini) keeps reloop's, which the client sends back.
    let written = Reply { extra: None, ..reply };
    let whole: Value = serde_json::from_str(&encode_reply(Format::Gemini, &written, &reply_meta())).unwrap();
    assert_eq!(whole.pointer("/candidates/0/content/parts/0/functionCall/id"), Some(&json!("call_000_0")));
}

#[test]
fn a_gemini_stream_sends_each_chunks_recorded_usage_with_the_recorded_usage_only() {
    let chunk = |text: &str, total: u64, finish: bool| {
        let mut candidate = json!({ "content": { "role": "model", "parts": [{ "text": text }] } });
        if finish {
            candidate["finishReason"] = json!("STOP");
        }
        let usage = json!({ "promptTokenCount": 3, "candidatesTokenCount": total, "totalTokenCount": 3 + total });
        format!("data: {}\r\n\r\n", json!({ "candidates": [candidate], "usageMetadata": usage, "modelVersion": "m", "responseId": "r1" }))
    };
    let recorded = reply_of(decode_reply(Format::Gemini, &[chunk("Hel", 1, false), chunk("lo", 2, true)].concat(), true).unwrap());
    let usages = |reply: &Reply| -> Vec<Value> {
        let frames = encode_reply_stream(Format::Gemini, reply, &reply_meta());
        frames
            .iter()
            .map(|frame| serde_json::from_str::<Value>(frame.trim().trim_start_matches("data: ")).unwrap()["usageMetadata"]["candidatesTokenCount"].clone())
            .collect()
    };
    assert_eq!(usages(&recorded), [json!(1), json!(2)]);
    let counted = Reply { wire_usage: None, ..recorded };
    assert_ne!(usages(&counted)[0], json!(1), "the server's count never carries a recorded chunk's usage");
}

#[test]
fn a_gemini_stream_keeps_its_candidates_fields_and_its_finish_only_chunk() {
    // gemini-2.0 sends no candidate `index`; gemini-3 ends with a chunk of only `""` and the finish reason.
    let chunk = |parts: Value, finish: bool| {
        let mut candidate = json!({ "content": { "role": "model", "parts": parts }, "safetyRatings": [] });
        if finish {
            candidate["finishReason"] = json!("STOP");
        }
        let usage = json!({ "promptTokenCount": 3, "totalTokenCount": 3 });
        format!("data: {}\r\n\r\n", json!({ "candidates": [candidate], "usageMetadata": usage, "modelVersion": "m", "responseId": "r1" }))
    };
    let recorded = [chunk(json!([{ "functionCall": { "name": "f", "args": {} } }]), false), chunk(json!([{ "text": "" }]), true)].concat();
    let reply = reply_of(decode_reply(Format::Gemini, &recorded, true).unwrap());
    let sent: Vec<Value> = encode_reply_stream(Format::Gemini, &reply, &reply_meta())
        .iter()
        .map(|frame| serde_json::from_str(frame.trim().trim_start_matches("data: ")).unwrap())
        .collect();
    let candidates: Vec<&Value> = sent.iter().map(|chunk| &chunk["candidates"][0]).collect();
    assert_eq!(candidates.len(), 2, "{sent:?}");
    assert!(candidates.iter().all(|candidate| candidate.get("index").is_none() && candidate["safetyRatings"] == json!([])), "{candidates:?}");
    assert_eq!(candidates[1]["content"]["parts"], json!([{ "text": "" }]));
    assert_eq!(candidates[1]["finishReason"], "STOP");
    assert!(candidates[0].get("finishReason").is_none());
}
