//! Reading the real captures (`harness/wire/tests/data/`, see its
//! `SOURCES.md`) into parts: each API's event order, ids, usage and raw
//! bytes.

use reloop_wire::{FinishReason, Format};
use serde_json::Value;

use super::*;
use crate::testing::{capture, framed};
use crate::{Arguments, Part, ToolCallPart};

fn stream(api: Format, body: &str) -> Exchange {
    let headers = [("content-type".to_owned(), "text/event-stream; charset=utf-8".to_owned()), ("request-id".to_owned(), "req_1".to_owned())];
    let exchange = exchange_from_wire(api, WireResponse { status: 200, headers: &headers, body: body.as_bytes() }, body.as_bytes()).unwrap();
    let raw = exchange.raw.as_ref().unwrap();
    assert_eq!(raw.events.concat(), body, "the raw events are the body, byte for byte");
    assert_eq!(exchange.headers.get("request-id").map(String::as_str), Some("req_1"));
    exchange
}

fn kinds(exchange: &Exchange) -> Vec<&'static str> {
    exchange
        .parts
        .iter()
        .map(|part| match part {
            Part::Text { .. } => "text",
            Part::Reasoning { .. } => "reasoning",
            Part::Thinking { .. } => "thinking",
            Part::RedactedThinking { .. } => "redacted_thinking",
            Part::ToolCall(_) => "tool_call",
            Part::ServerToolUse { .. } => "server_tool_use",
            Part::ServerToolResult { .. } => "server_tool_result",
            Part::Refusal { .. } => "refusal",
        })
        .collect()
}

fn call(exchange: &Exchange, index: usize) -> &ToolCallPart {
    exchange.tool_calls().nth(index).unwrap()
}

#[test]
fn anthropic_thinking_keeps_its_signature_and_chunks() {
    let body = framed(capture!("anthropic-messages/vercel-ai-anthropic-claude-sonnet-5-reasoning-summarized.chunks.jsonl"), true);
    let exchange = stream(Format::Anthropic, &body);
    assert_eq!(kinds(&exchange)[0], "thinking");
    let Part::Thinking { thinking, signature, chunks } = &exchange.parts[0] else { unreachable!() };
    assert!(thinking.starts_with("I'm working through the Euclidean algorithm"), "{thinking}");
    assert!(signature.as_ref().is_some_and(|s| s.len() > 20), "signature_delta accumulated");
    assert_eq!(chunks.iter().sum::<usize>(), thinking.chars().count());
    assert!(kinds(&exchange).contains(&"text"));
    assert_eq!(exchange.finish_reason, Some(FinishReason::Stop));
    assert!(exchange.ids.response.as_deref().unwrap().starts_with("msg_"));
    let usage = exchange.usage.as_ref().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (47, 373), "message_delta's usage wins");
    assert_eq!(usage.wire.as_ref().unwrap()["output_tokens_details"]["thinking_tokens"], 62, "every provider field kept");
}

#[test]
fn anthropic_tool_use_arguments_are_kept_as_streamed() {
    let body = capture!("anthropic-messages/anthropic-sdk-python-tool-use-response.sse");
    let exchange = stream(Format::Anthropic, body);
    let call = call(&exchange, 0);
    assert!(call.id.as_deref().unwrap().starts_with("toolu_"));
    assert!(matches!(&call.arguments, Arguments::Raw(json) if serde_json::from_str::<Value>(json).is_ok()));
    assert_eq!(exchange.finish_reason, Some(FinishReason::ToolCalls));
}

#[test]
fn anthropic_server_tools_keep_their_order_and_results() {
    let body = framed(capture!("anthropic-messages/vercel-ai-anthropic-code-execution-20260120-prompt-cache.1.chunks.jsonl"), true);
    let exchange = stream(Format::Anthropic, &body);
    assert_eq!(kinds(&exchange), ["server_tool_use", "server_tool_result", "server_tool_use", "server_tool_result", "text"]);
    let Part::ServerToolResult { kind, tool_use_id, .. } = &exchange.parts[1] else { unreachable!() };
    assert_eq!(kind, "bash_code_execution_tool_result");
    let Part::ServerToolUse { id, .. } = &exchange.parts[0] else { unreachable!() };
    assert_eq!(tool_use_id, id);
}

#[test]
fn anthropic_whole_message_counts_cached_input_in_the_neutral_total() {
    let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"redacted_thinking","data":"Em"},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":7}}"#;
    let exchange = exchange_from_wire(Format::Anthropic, WireResponse { status: 200, headers: &[], body: body.as_bytes() }, body.as_bytes()).unwrap();
    assert_eq!(kinds(&exchange), ["redacted_thinking", "tool_call"]);
    assert_eq!(call(&exchange, 0).arguments, Arguments::Json(serde_json::json!({ "path": "a" })));
    let usage = exchange.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens), (125, 100, 20));
    assert_eq!(exchange.raw.unwrap().body, Some(RawBody::Text(body.into())));
}

#[test]
fn chat_parallel_calls_keep_ids_order_and_argument_chunks() {
    let body = capture!("openai-chat/openai-python-parallel-tool-calls.sse");
    let exchange = stream(Format::OpenaiChat, body);
    assert_eq!(kinds(&exchange), ["tool_call", "tool_call"]);
    for i in 0..2 {
        let call = call(&exchange, i);
        assert!(call.id.as_deref().unwrap().starts_with("call_"));
        let Arguments::Raw(arguments) = &call.arguments else { unreachable!() };
        assert_eq!(call.chunks.iter().sum::<usize>(), arguments.chars().count());
    }
    assert_eq!(exchange.finish_reason, Some(FinishReason::ToolCalls));
    assert!(exchange.ids.response.as_deref().unwrap().starts_with("chatcmpl-"));
    assert_eq!(exchange.ids.system_fingerprint.as_deref(), Some("fp_5050236cbd"));
}

#[test]
fn chat_text_usage_and_refusal() {
    let exchange = stream(Format::OpenaiChat, capture!("openai-chat/openai-python-text-usage.sse"));
    assert_eq!(kinds(&exchange), ["text"]);
    assert!(exchange.usage.is_some_and(|u| u.input_tokens > 0 && u.output_tokens > 0));
    let refusal = stream(Format::OpenaiChat, capture!("openai-chat/openai-python-refusal.sse"));
    assert_eq!(kinds(&refusal), ["refusal"]);
}

#[test]
fn responses_reasoning_items_keep_ids_and_encrypted_content() {
    let body = framed(capture!("openai-responses/vercel-ai-openai-issue-11239.1-reasoning-encrypted-tool-call.chunks.jsonl"), true);
    let exchange = stream(Format::OpenaiResponses, &body);
    assert_eq!(kinds(&exchange)[0], "reasoning");
    let Part::Reasoning { id, encrypted_content, .. } = &exchange.parts[0] else { unreachable!() };
    assert!(id.as_deref().unwrap().starts_with("rs_"));
    assert!(encrypted_content.as_deref().unwrap().starts_with("gAAAAA"));
    let call = call(&exchange, 0);
    assert!(call.id.as_deref().unwrap().starts_with("call_"), "the call id the tool result refers to");
    assert!(call.item_id.as_deref().unwrap().starts_with("fc_"), "the item id, kept apart");
    assert_eq!(exchange.finish_reason, Some(FinishReason::ToolCalls));
    assert!(exchange.ids.response.as_deref().unwrap().starts_with("resp_"));
    assert!(exchange.usage.as_ref().unwrap().reasoning_tokens.is_some());
}

#[test]
fn responses_text_has_its_message_id_and_chunks() {
    let body = framed(capture!("openai-responses/vercel-ai-issue-20047-text.chunks.jsonl"), true);
    let exchange = stream(Format::OpenaiResponses, &body);
    let Some(Part::Text { text, id, chunks, .. }) = exchange.parts.iter().find(|p| matches!(p, Part::Text { .. })) else { panic!("no text") };
    assert!(id.as_deref().unwrap().starts_with("msg_"));
    assert_eq!(chunks.iter().sum::<usize>(), text.chars().count());
}

#[test]
fn bodies_that_are_not_text_are_kept_in_base64() {
    let gzip = [0x1f, 0x8b, 0x08, 0x00, 0xff];
    let raw = raw_response(Format::Anthropic, WireResponse { status: 200, headers: &[], body: &gzip }, false);
    assert_eq!(raw.body, Some(RawBody::Base64 { base64: "H4sIAP8=".into() }));
    assert_eq!(raw.body.unwrap().to_bytes().unwrap(), gzip);
}

#[test]
fn broken_streams_are_errors_not_guesses() {
    let error = exchange_from_wire(Format::Anthropic, WireResponse { status: 200, headers: &[], body: b"data: {\"type\"\n\n" }, b"data: {\"type\"\n\n");
    assert!(matches!(error, Err(FromWireError::NotJson(_))), "{error:?}");
}
