//! What the provider's context management did travels in the reply: Anthropic's applied edits
//! and compaction block, Responses' compaction item, whole and streamed, read back the same,
//! and read by the agent's decoders as they read the provider's own.

use serde_json::{Value, json};

use crate::codec::{decode_reply, decode_response, encode_reply, encode_reply_stream};
use crate::context_management::{AppliedContext, AppliedEdit, Compaction};
use crate::parts::Part;
use crate::testing::{capture, decode_stream, reply_meta, reply_of, reply_of_turn, text_turn};
use crate::{FinishReason, Format, ModelTurn, Reasoning, decoder_for};

fn applied(pause: bool, id: Option<&str>) -> AppliedContext {
    let edit = AppliedEdit { kind: "clear_tool_uses_20250919".into(), cleared_tool_uses: Some(2), cleared_thinking_turns: None, cleared_input_tokens: 900 };
    AppliedContext { applied_edits: Some(vec![edit]), compaction: Some(Compaction { id: id.map(str::to_owned), content: "summary".into(), pause }) }
}

/// The texts of `parts` (ids and delta sizes aside, which a replay generates).
fn texts(parts: &[Part]) -> Vec<&str> {
    parts.iter().filter_map(|part| if let Part::Text { text, .. } = part { Some(text.as_str()) } else { None }).collect()
}

fn answer() -> ModelTurn {
    text_turn("Done.", FinishReason::Stop, Some(crate::Usage::default()))
}

#[test]
fn anthropic_sends_the_compaction_block_first_and_the_applied_edits_and_reads_them_back() {
    let reply = crate::reply::Reply { context: applied(false, None), ..reply_of_turn(&answer()) };
    let body: Value = serde_json::from_str(&encode_reply(Format::Anthropic, &reply, &reply_meta())).unwrap();
    assert_eq!(body["content"][0], json!({"type": "compaction", "content": "summary"}));
    assert_eq!(body["content"][1]["text"], "Done.");
    assert_eq!(
        body["context_management"]["applied_edits"][0],
        json!({"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2, "cleared_input_tokens": 900})
    );
    let frames = encode_reply_stream(Format::Anthropic, &reply, &reply_meta());
    let events: Vec<Value> = frames.iter().map(|frame| serde_json::from_str(crate::sse_events::data(frame).unwrap()).unwrap()).collect();
    assert_eq!(events[3]["delta"], json!({"type": "compaction_delta", "content": "summary"}));
    assert_eq!(events[5]["index"], 1, "the answer's blocks come after it");
    assert_eq!(events[events.len() - 2]["context_management"]["applied_edits"][0]["cleared_tool_uses"], 2);
    for (text, streamed) in [(body.to_string(), false), (frames.concat(), true)] {
        let read = decode_reply(Format::Anthropic, &text, streamed).unwrap();
        assert_eq!((read.context, texts(&read.parts)), (reply.context.clone(), vec!["Done."]), "streamed: {streamed}");
    }
    assert_eq!(decode_stream(&frames.concat(), decoder_for(Format::Anthropic).as_mut()).1.unwrap(), answer(), "the agent reads the answer past the block");
    assert_eq!(decode_response(Format::Anthropic, body.to_string().as_bytes()).unwrap(), answer());
    // Paused: the compaction alone, stopped for it.
    let paused = crate::reply::Reply { context: applied(true, None), ..reply_of_turn(&answer()) };
    let body: Value = serde_json::from_str(&encode_reply(Format::Anthropic, &paused, &reply_meta())).unwrap();
    assert_eq!((body["content"].as_array().unwrap().len(), body["stop_reason"].as_str()), (1, Some("compaction")));
    let read = decode_reply(Format::Anthropic, &encode_reply_stream(Format::Anthropic, &paused, &reply_meta()).concat(), true).unwrap();
    assert_eq!((read.context, texts(&read.parts)), (paused.context, Vec::new()));
}

#[test]
fn responses_sends_the_compaction_item_first_and_reads_it_back() {
    let reply = crate::reply::Reply { context: AppliedContext { applied_edits: None, ..applied(false, Some("cmp_1")) }, ..reply_of_turn(&answer()) };
    let item = json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "summary"});
    let body: Value = serde_json::from_str(&encode_reply(Format::OpenaiResponses, &reply, &reply_meta())).unwrap();
    assert_eq!((body["output"][0].clone(), body["output"][1]["type"].as_str()), (item.clone(), Some("message")));
    let frames = encode_reply_stream(Format::OpenaiResponses, &reply, &reply_meta());
    let events: Vec<Value> = frames.iter().map(|frame| serde_json::from_str(crate::sse_events::data(frame).unwrap()).unwrap()).collect();
    let kinds: Vec<&str> = events.iter().map(|event| event["type"].as_str().unwrap()).collect();
    assert_eq!(kinds[2..5], ["response.output_item.added", "response.output_item.done", "response.output_item.added"]);
    assert_eq!((events[2]["item"].clone(), events[4]["output_index"].as_u64()), (item.clone(), Some(1)));
    assert_eq!(events.last().unwrap()["response"]["output"][0], item);
    for (text, streamed) in [(body.to_string(), false), (frames.concat(), true)] {
        let read = decode_reply(Format::OpenaiResponses, &text, streamed).unwrap();
        assert_eq!((read.context, texts(&read.parts)), (reply.context.clone(), vec!["Done."]), "streamed: {streamed}");
    }
    let compaction = Reasoning::ResponsesCompaction { id: Some("cmp_1".into()), encrypted_content: "summary".into() };
    let turn = decode_stream(&frames.concat(), decoder_for(Format::OpenaiResponses).as_mut()).1.unwrap();
    assert_eq!(turn, ModelTurn { reasoning: vec![compaction], ..answer() }, "the agent keeps the item to send back");
    let paused = crate::reply::Reply { context: AppliedContext { applied_edits: None, ..applied(true, Some("cmp_1")) }, ..reply_of_turn(&answer()) };
    let body: Value = serde_json::from_str(&encode_reply(Format::OpenaiResponses, &paused, &reply_meta())).unwrap();
    assert_eq!(body["output"], json!([item]));
    assert_eq!(decode_reply(Format::OpenaiResponses, &body.to_string(), false).unwrap().context, paused.context);
}

/// A real stream (claude-sonnet-4-5 with context editing) reports its applied edits in
/// `message_delta`, which read into the reply and go back out the same.
#[test]
fn a_real_stream_s_applied_edits_read_and_replay() {
    let capture = capture!("anthropic-messages", "vercel-ai-anthropic-clear-thinking.1.chunks.jsonl");
    let read = decode_reply(Format::Anthropic, &capture.stream(), true).unwrap();
    assert_eq!(read.context, AppliedContext { applied_edits: Some(Vec::new()), compaction: None });
    let again = decode_reply(Format::Anthropic, &encode_reply_stream(Format::Anthropic, &reply_of(read.clone()), &reply_meta()).concat(), true).unwrap();
    assert_eq!(again.context, read.context);
}
