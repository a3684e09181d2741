//! Tests against the Responses captures (`tests/data/openai-responses/`, see its `SOURCES.md`):
//! every event must re-serialize unchanged, the decoder must read each capture into the turn
//! (or the error) the provider sent, and a capture replayed through the codec must decode to the same turn.
//!
//! The two Codex `.json` templates carry an injected `# path` comment line that makes them
//! invalid JSON as stored; the tests strip it (as `SOURCES.md` explains) and frame each array
//! element as an event. The Codex `.sse` file carries the same kind of line inside an event,
//! which SSE parsing ignores as an unknown field.

use serde_json::Value;

use super::{ResponsesEvent, ResponsesStreamDecoder};
use crate::testing::{Capture, assert_frames_survive_any_split, assert_replayed_captures_decode_alike, call, capture, decode_stream, text_turn, usage};
use crate::{FinishReason, Format, ModelTurn, StreamDecoder, StreamDelta, WireError, sse};

const CODEX_SSE: Capture = capture!("openai-responses", "codex-cli-responses-fixture.sse");
const CODEX_COMPLETED: Capture = capture!("openai-responses", "codex-completed_template.json");
const CODEX_INCOMPLETE: Capture = capture!("openai-responses", "codex-incomplete_sse.json");
const PARALLEL_WRAPPER: Capture = capture!("openai-responses", "vercel-ai-issue-19067-parallel-tool-call-wrapper.chunks.jsonl");
const GPT_5_1_TOOL_CALL: Capture = capture!("openai-responses", "vercel-ai-issue-19493-gpt-5.1-tool-call.chunks.jsonl");
const TEXT: Capture = capture!("openai-responses", "vercel-ai-issue-20047-text.chunks.jsonl");
const CUSTOM_TOOL: Capture = capture!("openai-responses", "vercel-ai-openai-custom-tool.1.chunks.jsonl");
const ERROR_NULL_CODE: Capture = capture!("openai-responses", "vercel-ai-openai-error-null-code.1.chunks.jsonl");
const ERROR_QUOTA: Capture = capture!("openai-responses", "vercel-ai-openai-error.1.chunks.jsonl");
const REASONING_TOOL_CALL: Capture = capture!("openai-responses", "vercel-ai-openai-issue-11239.1-reasoning-encrypted-tool-call.chunks.jsonl");
const TEXT_STORE_FALSE: Capture = capture!("openai-responses", "vercel-ai-openai-issue-11239.2-text-store-false.chunks.jsonl");
const FAILED_ONLY: Capture = capture!("openai-responses", "vercel-ai-openai-response-failed-only.1.chunks.jsonl");

/// Captures that are SSE or JSON per line.
const STREAMS: [Capture; 10] =
    [CODEX_SSE, PARALLEL_WRAPPER, GPT_5_1_TOOL_CALL, TEXT, CUSTOM_TOOL, ERROR_NULL_CODE, ERROR_QUOTA, REASONING_TOOL_CALL, TEXT_STORE_FALSE, FAILED_ONLY];

/// The events of a Codex JSON template, without its injected `#` comment line.
fn codex_events(capture: Capture) -> Vec<Value> {
    let json: String = capture.raw.lines().filter(|line| !line.trim_start().starts_with('#')).collect();
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{}: {e}", capture.name))
}

/// A Codex template as the SSE stream it stands for.
fn codex_stream(capture: Capture) -> String {
    codex_events(capture).iter().map(sse::encode_typed_frame).collect()
}

fn decode(capture: Capture) -> (Vec<StreamDelta>, Result<ModelTurn, WireError>) {
    capture.decode_with(&mut ResponsesStreamDecoder::new())
}

fn turn(capture: Capture) -> ModelTurn {
    capture.turn_with(&mut ResponsesStreamDecoder::new())
}

#[test]
fn every_event_reserializes_to_the_same_json() {
    let streamed = STREAMS.iter().flat_map(|capture| capture.data().into_iter().map(|data| (capture.name, serde_json::from_str::<Value>(&data).unwrap())));
    let templates = codex_events(CODEX_COMPLETED).into_iter().map(|event| (CODEX_COMPLETED.name, event));
    let mut count = 0;
    for (name, original) in streamed.chain(templates) {
        let event: ResponsesEvent = serde_json::from_value(original.clone()).unwrap_or_else(|e| panic!("{name}: {e}\n{original}"));
        assert_eq!(serde_json::to_value(&event).unwrap(), original, "{name}");
        count += 1;
    }
    assert_eq!(count, 66);
}

#[test]
fn known_events_are_typed_and_the_rest_kept_verbatim() {
    let others: Vec<String> = STREAMS
        .iter()
        .flat_map(Capture::data)
        .filter_map(|data| match serde_json::from_str(&data).unwrap() {
            ResponsesEvent::Other(value) => Some(value["type"].as_str().unwrap().to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(others, ["response.custom_tool_call_input.delta"; 3], "only the custom tool's input deltas are not typed");
}

#[test]
fn gpt_5_1_tool_call() {
    assert_eq!(
        turn(GPT_5_1_TOOL_CALL),
        ModelTurn {
            text: String::new(),
            tool_calls: vec![call("call_2FQdm3Br7Qb35YUBSkDR7kue", "get_weather", r#"{"city":"Beijing"}"#)],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: usage(45, 25),
        }
    );
    let (deltas, _) = decode(GPT_5_1_TOOL_CALL);
    let fragments = deltas.iter().filter(|delta| matches!(delta, StreamDelta::ToolCallArguments { .. })).count();
    assert_eq!(fragments, 6, "one delta per argument fragment, none for `done`");
}

#[test]
fn reasoning_item_is_kept_and_the_call_keeps_position_zero() {
    let decoded = turn(REASONING_TOOL_CALL);
    let Some(crate::Reasoning::ResponsesItem { id, encrypted_content, .. }) = decoded.reasoning.first() else {
        panic!("the reasoning item is kept: {decoded:?}")
    };
    assert_eq!(id.as_deref(), Some("rs_0039ff4ed0aeca1e016ac948b4e4c887d2bbf14d31fdc26ccd"));
    assert!(encrypted_content.as_deref().is_some_and(|c| c.starts_with("gAAAAABqyUi1")));
    assert_eq!(
        ModelTurn { reasoning: Vec::new(), ..decoded },
        ModelTurn {
            text: String::new(),
            tool_calls: vec![call("call_LUBOONF2cY8HDQdBwiEQ9fk1", "lookupCode", "{}")],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: usage(55, 25),
        }
    );
}

#[test]
fn text_streams() {
    assert_eq!(turn(TEXT), text_turn("OK", FinishReason::Stop, usage(12, 2)));
    assert_eq!(turn(TEXT_STORE_FALSE), text_turn("blue-42", FinishReason::Stop, usage(91, 7)));
}

#[test]
fn parallel_wrapper_is_one_call_named_parallel() {
    let arguments = r#"{"tool_uses":[{"recipient_name":"functions.weather","parameters":{"location":"San Francisco"}},{"recipient_name":"functions.cityAttractions","parameters":{"city":"Rome"}}]}"#;
    assert_eq!(
        turn(PARALLEL_WRAPPER),
        ModelTurn {
            text: String::new(),
            tool_calls: vec![call("call_parallel", "parallel", arguments)],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: usage(34, 28),
        }
    );
}

#[test]
fn custom_tool_calls_are_not_function_calls() {
    assert_eq!(turn(CUSTOM_TOOL), text_turn("", FinishReason::Stop, usage(50, 20)));
}

#[test]
fn codex_fixtures_take_text_from_the_done_item() {
    assert_eq!(turn(CODEX_SSE), text_turn("fixture hello", FinishReason::Stop, None));
    let (_, completed) = decode_stream(&codex_stream(CODEX_COMPLETED), &mut ResponsesStreamDecoder::new());
    assert_eq!(completed.unwrap(), text_turn("", FinishReason::Stop, usage(0, 0)));
    // The "incomplete" template's only event lacks the `output_index` and `item` every real
    // `response.output_item.done` has.
    let (_, incomplete) = decode_stream(&codex_stream(CODEX_INCOMPLETE), &mut ResponsesStreamDecoder::new());
    assert!(matches!(incomplete, Err(WireError::Json { .. })), "{incomplete:?}");
}

/// Asserts the capture decodes to a provider error of this kind and message.
fn assert_provider_error(capture: Capture, expected_kind: &str, message_start: &str) {
    let (deltas, result) = decode(capture);
    assert!(deltas.is_empty(), "{}", capture.name);
    match result {
        Err(WireError::Provider { kind, message }) => {
            assert_eq!(kind, expected_kind, "{}", capture.name);
            assert!(message.starts_with(message_start), "{}: {message}", capture.name);
        }
        other => panic!("{}: {other:?}", capture.name),
    }
}

#[test]
fn errors_in_the_stream_are_provider_errors() {
    assert_provider_error(ERROR_QUOTA, "insufficient_quota", "You exceeded your current quota");
    assert_provider_error(ERROR_NULL_CODE, "server_error", "Sorry, something went wrong.");
    assert_provider_error(FAILED_ONLY, "rate_limit_exceeded", "Request too large for gpt-4o-mini");

    // A client that carries on after the `error` event sees `response.failed` as an error too,
    // and `finish` reports the error rather than an early end.
    let mut decoder = ResponsesStreamDecoder::new();
    let results: Vec<_> = ERROR_QUOTA.frames().iter().map(|frame| decoder.push_frame(frame)).collect();
    assert!(results[..2].iter().all(Result::is_ok));
    assert!(results[2..].iter().all(|result| matches!(result, Err(WireError::Provider { .. }))));
    assert!(decoder.is_done());
    assert!(matches!(decoder.finish(), Err(WireError::Provider { kind, .. }) if kind == "insufficient_quota"));
}

#[test]
fn replayed_captures_decode_to_the_same_turn() {
    // A custom tool call replays as a function call, which the agent then reads as a call:
    // the neutral parts have no call the agent would skip.
    let replayable: Vec<Capture> = STREAMS.into_iter().filter(|capture| capture.name != CUSTOM_TOOL.name).collect();
    assert_eq!(assert_replayed_captures_decode_alike(Format::OpenaiResponses, &replayable), 6);
}

#[test]
fn captures_decode_the_same_fed_byte_by_byte() {
    assert_frames_survive_any_split(&STREAMS);
}
