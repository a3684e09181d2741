//! Each renderer against the real captures (`harness/wire/tests/data/`):
//! a capture read into parts and rendered again in its own API sends the
//! same events in the same order, and reads back into the same parts,
//! ids, stop reason and usage.

use reloop_wire::Format;
use serde_json::Value;

use reloop_wire::codec::{encode_reply, encode_reply_stream};
use reloop_wire::reply::{Reply, ReplyMeta};

use super::*;
use reloop_recording::Exchange;
use reloop_recording::from_wire::{WireResponse, exchange_from_wire, split_events};
use reloop_recording::testing::{capture, framed};

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
    let reply = answer(&recorded.to_turn(0), Some(&recorded), true);
    let meta = ReplyMeta { request_index: 0, model: recorded.model.clone().unwrap_or_default(), include_usage: true, tools: Vec::new() };
    let rendered: String = encode_reply_stream(api, &reply, &meta).concat();
    assert_eq!(event_kinds(&rendered), event_kinds(body), "event order");
    let again = read(api, &rendered);
    assert_eq!(again.parts, recorded.parts, "parts");
    assert_eq!((&again.ids, &again.finish_reason, &again.model), (&recorded.ids, &recorded.finish_reason, &recorded.model));
    assert_eq!(again.usage, recorded.usage, "usage");
    let whole: Value = serde_json::from_str(&encode_reply(api, &reply, &meta)).unwrap();
    let from_body =
        exchange_from_wire(api, WireResponse { status: 200, headers: &[], body: whole.to_string().as_bytes() }, whole.to_string().as_bytes()).unwrap();
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

/// Every capture read in its own API, rendered in all three (streamed and
/// whole, with and without chat usage, recorded or counted usage), plus a
/// reply with no exchange behind it (generated ids): the length and hash of
/// each rendering, so a change to the bytes on the wire fails here.
#[test]
fn the_rendered_bytes_stay_the_same() {
    let mut digests = Vec::new();
    for (api, dir) in [(Format::OpenaiChat, "openai-chat"), (Format::OpenaiResponses, "openai-responses"), (Format::Anthropic, "anthropic-messages")] {
        for (name, body) in streamed_captures(api, dir) {
            let headers = [("content-type".to_owned(), "text/event-stream".to_owned())];
            let Ok(recorded) = exchange_from_wire(api, WireResponse { status: 200, headers: &headers, body: body.as_bytes() }, body.as_bytes()) else {
                digests.push(format!("{dir}/{name}: unreadable"));
                continue;
            };
            for recorded_usage in [true, false] {
                let reply = answer(&recorded.to_turn(3), Some(&recorded), recorded_usage);
                digests.extend(renderings(&format!("{dir}/{name} recorded_usage={recorded_usage}"), &reply, recorded.model.clone().unwrap_or_default()));
            }
        }
    }
    let turn = reloop_wire::ModelTurn {
        text: "Hello \"world\"\n\u{e9}\u{4e2d}".into(),
        tool_calls: vec![reloop_wire::ToolCall { id: "call_1".into(), name: "read".into(), arguments: "{\"path\":\"a/b.txt\",\"n\":[1,2,3]}".into() }],
        usage: Some(reloop_wire::Usage { input_tokens: 120, output_tokens: 7, ..reloop_wire::Usage::default() }),
        ..reloop_wire::ModelTurn::default()
    };
    digests.extend(renderings("no exchange", &answer(&turn, None, false), "gpt-test".into()));
    insta::assert_snapshot!(digests.join("\n"));
}

fn renderings(case: &str, reply: &Reply, model: String) -> Vec<String> {
    let digest = |bytes: &str| format!("{} bytes {:016x}", bytes.len(), crate::replay::tokens::content_hash(&bytes));
    let mut lines = Vec::new();
    for api in [Format::OpenaiChat, Format::OpenaiResponses, Format::Anthropic] {
        for include_usage in [true, false] {
            // The Responses body echoes the request's tools; one set of renderings declares one.
            let tools = if include_usage {
                vec![reloop_wire::ToolSpec { name: "read".into(), description: "Reads a file.".into(), parameters: serde_json::json!({ "type": "object" }) }]
            } else {
                Vec::new()
            };
            let meta = ReplyMeta { request_index: 3, model: model.clone(), include_usage, tools };
            let stream = encode_reply_stream(api, reply, &meta);
            let frames = stream.len();
            lines.push(format!(
                "{case} as {api:?} include_usage={include_usage}: stream {frames} frames {}, complete {}",
                digest(&stream.concat()),
                digest(&encode_reply(api, reply, &meta))
            ));
        }
    }
    lines
}

/// Every streamed capture of `api` in `wire/tests/data/DIR`, by file name
/// in order, as the SSE body a provider sent (`.sse` as it is, a
/// `.chunks.jsonl` framed).
fn streamed_captures(api: Format, dir: &str) -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wire/tests/data").join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&root).unwrap().map(|entry| entry.unwrap().path()).collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|file| {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&file).unwrap();
            let body = if name.ends_with(".chunks.jsonl") {
                framed(&text, api != Format::OpenaiChat)
            } else if name.ends_with(".sse") {
                text
            } else {
                return None;
            };
            Some((name, body))
        })
        .collect()
}

/// The kinds of event that carry usage in a stream (Chat: what the chunk's
/// delta carries, `usage` for a chunk without choices; Gemini: `chunk`).
fn usage_carriers(body: &str) -> std::collections::BTreeSet<String> {
    split_events(body)
        .iter()
        .filter_map(|event| event.lines().find_map(|line| line.strip_prefix("data:")).map(str::trim))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter_map(|event| {
            let carried =
                ["/usage", "/message/usage", "/response/usage", "/usageMetadata"].iter().any(|at| event.pointer(at).is_some_and(|usage| !usage.is_null()));
            let kind = match event["type"].as_str() {
                Some(kind) => kind.to_owned(),
                None if event.get("candidates").is_some() => "chunk".to_owned(),
                None => chat_kind(&event),
            };
            carried.then_some(kind)
        })
        .collect()
}

/// Every streamed capture of every API replayed with its recorded usage to
/// a client of its own API that asks as the recorded one did (Chat's
/// `include_usage`: whether a usage chunk came): usage comes in exactly the
/// kinds of event that carried it when recorded, and nowhere when none did.
#[test]
fn usage_is_streamed_only_where_the_recording_streamed_it() {
    let dirs = [
        (Format::OpenaiChat, "openai-chat"),
        (Format::OpenaiResponses, "openai-responses"),
        (Format::Anthropic, "anthropic-messages"),
        (Format::Gemini, "gemini"),
    ];
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    for (api, dir) in dirs {
        for (name, body) in streamed_captures(api, dir) {
            let headers = [("content-type".to_owned(), "text/event-stream".to_owned())];
            let Ok(recorded) = exchange_from_wire(api, WireResponse { status: 200, headers: &headers, body: body.as_bytes() }, body.as_bytes()) else {
                continue;
            };
            let carriers = usage_carriers(&body);
            let reply = answer(&recorded.to_turn(0), Some(&recorded), true);
            let include_usage = !carriers.is_empty();
            let meta = ReplyMeta { request_index: 0, model: recorded.model.clone().unwrap_or_default(), include_usage, tools: Vec::new() };
            let rendered = encode_reply_stream(api, &reply, &meta).concat();
            assert_eq!(usage_carriers(&rendered), carriers, "{dir}/{name}");
            *checked.entry(dir).or_default() += 1;
        }
    }
    assert_eq!(checked.len(), 4, "every API has streamed captures: {checked:?}");
}
