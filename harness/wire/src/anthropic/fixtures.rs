//! Tests against the Anthropic captures (`tests/data/anthropic-messages/` and the in-stream
//! error in `tests/data/errors/`, see `SOURCES.md`): every event must re-serialize unchanged
//! (whitespace padding aside), the decoder must read each capture into the turn the provider
//! sent, and a capture replayed through the codec must decode to the same turn.

use serde_json::Value;

use super::{AnthropicEvent, AnthropicStreamDecoder};
use crate::testing::{Capture, assert_frames_survive_any_split, assert_replayed_captures_decode_alike, call, capture, decode_stream, text_turn, usage};
use crate::{FinishReason, Format, ModelTurn, StreamDelta, Usage, WireError};

const BASIC: Capture = capture!("anthropic-messages", "anthropic-sdk-python-basic-response.sse");
const INCOMPLETE_PARTIAL_JSON: Capture = capture!("anthropic-messages", "anthropic-sdk-python-incomplete-partial-json-response.sse");
const REFUSAL_STOP_DETAILS: Capture = capture!("anthropic-messages", "anthropic-sdk-python-refusal-stop-details-response.sse");
const STOP_DETAILS: Capture = capture!("anthropic-messages", "anthropic-sdk-python-stop-details-response.sse");
const TOOL_USE: Capture = capture!("anthropic-messages", "anthropic-sdk-python-tool-use-response.sse");
const SONNET_5_REASONING: Capture = capture!("anthropic-messages", "vercel-ai-anthropic-claude-sonnet-5-reasoning-summarized.chunks.jsonl");
const CLEAR_THINKING: Capture = capture!("anthropic-messages", "vercel-ai-anthropic-clear-thinking.1.chunks.jsonl");
const CODE_EXECUTION_CACHE: Capture = capture!("anthropic-messages", "vercel-ai-anthropic-code-execution-20260120-prompt-cache.1.chunks.jsonl");
const JSON_TOOL: Capture = capture!("anthropic-messages", "vercel-ai-anthropic-json-tool.1.chunks.jsonl");
const DELTA_INPUT_TOKENS: Capture = capture!("anthropic-messages", "vercel-ai-anthropic-message-delta-input-tokens.chunks.jsonl");
const REFUSAL: Capture = capture!("anthropic-messages", "vercel-ai-anthropic-refusal.chunks.jsonl");
const TEXT: Capture = capture!("anthropic-messages", "vercel-ai-anthropic-text.chunks.jsonl");
const TOOL_NO_ARGS: Capture = capture!("anthropic-messages", "vercel-ai-anthropic-tool-no-args.chunks.jsonl");
const OVERLOADED_IN_STREAM: Capture = capture!("errors", "anthropic-overloaded-error.in-stream.anthropic-sdk-python-test.sse");

/// Every stream capture.
const STREAMS: [Capture; 14] = [
    BASIC,
    INCOMPLETE_PARTIAL_JSON,
    REFUSAL_STOP_DETAILS,
    STOP_DETAILS,
    TOOL_USE,
    SONNET_5_REASONING,
    CLEAR_THINKING,
    CODE_EXECUTION_CACHE,
    JSON_TOOL,
    DELTA_INPUT_TOKENS,
    REFUSAL,
    TEXT,
    TOOL_NO_ARGS,
    OVERLOADED_IN_STREAM,
];

fn decode(capture: Capture) -> (Vec<StreamDelta>, Result<ModelTurn, WireError>) {
    capture.decode_with(&mut AnthropicStreamDecoder::new())
}

fn turn(capture: Capture) -> ModelTurn {
    capture.turn_with(&mut AnthropicStreamDecoder::new())
}

#[test]
fn every_event_reserializes_to_the_same_json() {
    let mut count = 0;
    for capture in STREAMS {
        for frame in capture.frames() {
            let original: Value = serde_json::from_str(&frame.data).unwrap_or_else(|e| panic!("{}: {e}\n{}", capture.name, frame.data));
            assert_eq!(frame.event.as_deref(), original["type"].as_str(), "{}", capture.name);
            let event: AnthropicEvent = serde_json::from_value(original.clone()).unwrap_or_else(|e| panic!("{}: {e}\n{original}", capture.name));
            assert!(!matches!(event, AnthropicEvent::Other(_)), "{}: untyped {original}", capture.name);
            assert_eq!(serde_json::to_value(&event).unwrap(), original, "{}", capture.name);
            count += 1;
        }
    }
    assert_eq!(count, 183);
}

#[test]
fn text_streams() {
    assert_eq!(turn(BASIC), text_turn("Hello there!", FinishReason::Stop, usage(11, 6)));
    assert_eq!(turn(STOP_DETAILS), text_turn("hi", FinishReason::Stop, usage(11, 1)));
    assert_eq!(
        turn(TEXT),
        text_turn(
            "Hello! I'm doing well, thank you for asking. How are you doing today? \
             Is there anything I can help you with?",
            FinishReason::Stop,
            usage(12, 30)
        )
    );
}

#[test]
fn tool_use_input_is_the_streamed_json() {
    assert_eq!(
        turn(TOOL_USE),
        ModelTurn {
            text: "I'll check the current weather in Paris for you.".into(),
            tool_calls: vec![call("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", r#"{"location": "Paris"}"#)],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: usage(377, 65),
        }
    );
    assert_eq!(
        turn(JSON_TOOL),
        ModelTurn {
            text: String::new(),
            tool_calls: vec![call(
                "toolu_01KFbKqPYSuAKujiL6mTfzYA",
                "json",
                r#"{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}"#
            )],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: usage(849, 47),
        }
    );
}

#[test]
fn a_tool_without_arguments_gets_its_start_input() {
    assert_eq!(
        turn(TOOL_NO_ARGS),
        ModelTurn {
            text: "I'll update the issue list for you.".into(),
            tool_calls: vec![call("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", "{}")],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: usage(565, 48),
        }
    );
}

#[test]
fn max_tokens_leaves_the_input_unfinished() {
    let turn = turn(INCOMPLETE_PARTIAL_JSON);
    assert_eq!(turn.finish_reason, FinishReason::Length);
    assert_eq!(
        turn.text,
        "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a \
         file called taxes.txt. Let me do that for you now."
    );
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(turn.tool_calls[0].name, "make_file");
    assert!(turn.tool_calls[0].arguments.starts_with(r#"{"filename": "taxes.txt", "lines_of_text": ["#));
    assert!(turn.tool_calls[0].arguments.ends_with("\n\"Filing taxes"));
    assert_eq!(turn.usage, usage(450, 124));
}

#[test]
fn thinking_is_not_text_but_reasoning_with_its_signature() {
    let clear = turn(CLEAR_THINKING);
    let Some(crate::Reasoning::Thinking { thinking, signature }) = clear.reasoning.first() else { panic!("the thinking block is kept: {clear:?}") };
    assert!(thinking.starts_with("The previous result was 925") && signature.as_deref().is_some_and(|s| s.starts_with("EvQB")));
    assert_eq!(ModelTurn { reasoning: Vec::new(), ..clear }, text_turn("925 ÷ 5 = 185", FinishReason::Stop, usage(69, 53)));
    let sonnet = turn(SONNET_5_REASONING);
    assert!(sonnet.text.starts_with("# Finding GCD(1071, 462) Using the Euclidean Algorithm"));
    assert!(sonnet.text.ends_with("- 462 = 21 × 22 ✓"));
    assert!(!sonnet.text.contains("Euclidean algorithm to find"), "thinking leaked");
    assert_eq!(sonnet.usage, usage(47, 373));
}

#[test]
fn refusals_are_other_stop_reasons() {
    assert_eq!(turn(REFUSAL), text_turn("", FinishReason::Other("refusal".into()), usage(18, 5)));
    assert_eq!(turn(REFUSAL_STOP_DETAILS), text_turn("", FinishReason::Other("refusal".into()), usage(20, 0)));
}

#[test]
fn cached_prompt_tokens_count_as_input() {
    // message_start says 2 input + 3068 written; message_delta updates to 6 input, 3337
    // written, 6289 read. Server tool blocks are not client tool calls.
    assert_eq!(
        turn(CODE_EXECUTION_CACHE),
        text_turn(
            "The sum of the squares of the numbers 1 through 12 is **650**.",
            FinishReason::Stop,
            Some(Usage { input_tokens: 6 + 3337 + 6289, output_tokens: 198, cache_read_tokens: 6289, cache_write_tokens: 3337 })
        )
    );
}

#[test]
fn message_delta_input_tokens_replace_the_start() {
    assert_eq!(turn(DELTA_INPUT_TOKENS), text_turn("pong", FinishReason::Stop, usage(61, 2)));
}

#[test]
fn an_error_event_is_a_provider_error() {
    let (deltas, result) = decode(OVERLOADED_IN_STREAM);
    assert!(deltas.is_empty());
    assert!(matches!(&result, Err(WireError::Provider { kind, message }) if kind == "overloaded_error" && message == "Overloaded"), "{result:?}");
    // Mid-stream too: what streamed before stays delivered, and finish reports the error.
    let mut stream = BASIC.stream();
    let cut = stream.find("event: content_block_stop").unwrap();
    stream.replace_range(cut.., OVERLOADED_IN_STREAM.raw);
    let mut decoder = AnthropicStreamDecoder::new();
    let (deltas, result) = decode_stream(&stream, &mut decoder);
    assert!(deltas.contains(&StreamDelta::Text("Hello".into())));
    assert!(matches!(result, Err(WireError::Provider { .. })));
    assert!(matches!(
        crate::StreamDecoder::finish(&mut decoder),
        Err(WireError::Provider { kind, .. }) if kind == "overloaded_error"
    ));
}

#[test]
fn replayed_captures_decode_to_the_same_turn() {
    assert_eq!(assert_replayed_captures_decode_alike(Format::Anthropic, &STREAMS), 13);
}

#[test]
fn captures_decode_the_same_fed_byte_by_byte() {
    assert_frames_survive_any_split(&STREAMS);
}
