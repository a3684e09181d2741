//! Each renderer against the real captures (`harness/wire/tests/data/`):
//! a capture read into parts and rendered again in its own API sends the
//! same events in the same order, and reads back into the same parts,
//! ids, stop reason and usage.

use reloop_wire::Format;
use serde_json::Value;

use super::*;
use crate::recording::Exchange;
use crate::recording::from_wire::{WireResponse, exchange_from_wire, split_events};
use crate::recording::from_wire::tests::{capture, framed};

fn read(api: Format, body: &str) -> Exchange {
    let headers = [("content-type".to_owned(), "text/event-stream".to_owned())];
    exchange_from_wire(api, WireResponse { status: 200, headers: &headers, body: body.as_bytes() }, body.as_bytes()).unwrap()
}

/// The `type` of each event (Chat: what each chunk's delta carries), pings aside.
fn event_kinds(body: &str) -> Vec<String> {
    split_events(body)
        .iter()
        .filter_map(|event| event.lines().find_map(|line| line.strip_prefix("data:")).map(str::trim))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .map(|event| match event["type"].as_str() {
            Some(kind) => kind.to_owned(),
            None => chat_kind(&event),
        })
        .filter(|kind| kind != "ping")
        .collect()
}

fn chat_kind(chunk: &Value) -> String {
    let Some(choice) = chunk["choices"].get(0) else { return "usage".into() };
    if !choice["finish_reason"].is_null() {
        return "finish".into();
    }
    let delta = &choice["delta"];
    let fields = ["role", "reasoning_content", "content", "refusal", "tool_calls"];
    fields.iter().find(|field| delta.get(**field).is_some_and(|v| !v.is_null())).map_or("empty", |field| field).to_owned()
}

/// Renders `body`'s parts again in `api` and checks events and content.
fn round_trip(api: Format, body: &str) {
    let recorded = read(api, body);
    let answer = Answer::new(&recorded.to_turn(0), Some(&recorded), true);
    let meta = ReplyMeta { request_index: 0, model: recorded.model.clone().unwrap_or_default(), include_usage: true, tools: Vec::new() };
    let rendered: String = renderer(api).stream(&answer, &meta).concat();
    assert_eq!(event_kinds(&rendered), event_kinds(body), "event order");
    let again = read(api, &rendered);
    assert_eq!(again.parts, recorded.parts, "parts");
    assert_eq!((&again.ids, &again.finish_reason, &again.model), (&recorded.ids, &recorded.finish_reason, &recorded.model));
    assert_eq!(again.usage, recorded.usage, "usage");
    let whole: Value = serde_json::from_str(&renderer(api).complete(&answer, &meta)).unwrap();
    let from_body = exchange_from_wire(api, WireResponse { status: 200, headers: &[], body: whole.to_string().as_bytes() }, whole.to_string().as_bytes()).unwrap();
    assert_eq!(from_body.tool_calls().count(), recorded.tool_calls().count());
    assert_eq!(from_body.text(), recorded.text());
}

#[test]
fn anthropic_text_and_tool_use() {
    round_trip(Format::Anthropic, capture!("anthropic-messages/anthropic-sdk-python-tool-use-response.sse"));
    round_trip(Format::Anthropic, capture!("anthropic-messages/anthropic-sdk-python-basic-response.sse"));
}

#[test]
fn anthropic_thinking_with_signature() {
    round_trip(Format::Anthropic, &framed(capture!("anthropic-messages/vercel-ai-anthropic-claude-sonnet-5-reasoning-summarized.chunks.jsonl"), true));
    round_trip(Format::Anthropic, &framed(capture!("anthropic-messages/vercel-ai-anthropic-clear-thinking.1.chunks.jsonl"), true));
}

#[test]
fn anthropic_server_tools_and_usage() {
    round_trip(Format::Anthropic, &framed(capture!("anthropic-messages/vercel-ai-anthropic-code-execution-20260120-prompt-cache.1.chunks.jsonl"), true));
    round_trip(Format::Anthropic, &framed(capture!("anthropic-messages/vercel-ai-anthropic-message-delta-input-tokens.chunks.jsonl"), true));
}

#[test]
fn chat_text_usage_and_parallel_calls() {
    round_trip(Format::OpenaiChat, capture!("openai-chat/openai-python-text-usage.sse"));
    round_trip(Format::OpenaiChat, capture!("openai-chat/openai-python-parallel-tool-calls.sse"));
}

#[test]
fn responses_reasoning_encrypted_and_tool_call() {
    round_trip(Format::OpenaiResponses, &framed(capture!("openai-responses/vercel-ai-openai-issue-11239.1-reasoning-encrypted-tool-call.chunks.jsonl"), true));
    round_trip(Format::OpenaiResponses, &framed(capture!("openai-responses/vercel-ai-issue-19493-gpt-5.1-tool-call.chunks.jsonl"), true));
    round_trip(Format::OpenaiResponses, &framed(capture!("openai-responses/vercel-ai-issue-20047-text.chunks.jsonl"), true));
}
