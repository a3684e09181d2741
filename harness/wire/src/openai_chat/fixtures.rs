//! Tests against real Chat Completions captures (`tests/data/openai-chat/`, see its
//! `SOURCES.md`): the types must re-serialize every chunk unchanged, and the decoder must read
//! every capture into the turn the provider actually sent.

use serde_json::Value;

use super::{ChatChunk, ChatStreamAccumulator};
use crate::testing::{Capture, assert_frames_survive_any_split, assert_replayed_captures_decode_alike, call, capture, text_turn, usage};
use crate::{FinishReason, Format, ModelTurn, SseDecoder, StreamDelta, WireError};

const CONTENT_LOGPROBS: Capture = capture!("openai-chat", "openai-python-content-logprobs.sse");
const FINISH_LENGTH: Capture = capture!("openai-chat", "openai-python-finish-length.sse");
const CHOICES_N3: Capture = capture!("openai-chat", "openai-python-multiple-choices-n3.sse");
const PARALLEL_TOOL_CALLS: Capture = capture!("openai-chat", "openai-python-parallel-tool-calls.sse");
const REFUSAL: Capture = capture!("openai-chat", "openai-python-refusal.sse");
const STRICT_TOOL_CALL: Capture = capture!("openai-chat", "openai-python-strict-tool-call.sse");
const TEXT_USAGE: Capture = capture!("openai-chat", "openai-python-text-usage.sse");
const AZURE_MODEL_ROUTER: Capture = capture!("openai-chat", "vercel-ai-azure-model-router.1.chunks.jsonl");

/// The SSE captures: complete streams exactly as the OpenAI API sent them.
const OPENAI_SSE: [Capture; 7] = [CONTENT_LOGPROBS, FINISH_LENGTH, CHOICES_N3, PARALLEL_TOOL_CALLS, REFUSAL, STRICT_TOOL_CALL, TEXT_USAGE];

impl Capture {
    /// Decodes the capture; returns every delta, the refusal text and the turn.
    fn decode(&self) -> (Vec<StreamDelta>, String, Result<ModelTurn, WireError>) {
        let mut accumulator = ChatStreamAccumulator::new();
        let deltas = self.data().iter().flat_map(|data| accumulator.push_data(data).unwrap_or_else(|e| panic!("{}: {e}", self.name))).collect();
        let refusal = accumulator.refusal().to_owned();
        (deltas, refusal, accumulator.finish())
    }

    /// The decoded turn, which must be complete.
    fn turn(&self) -> ModelTurn {
        self.turn_with(&mut ChatStreamAccumulator::new())
    }
}

#[test]
fn every_chunk_reserializes_to_the_same_json() {
    for capture in OPENAI_SSE.iter().chain([&AZURE_MODEL_ROUTER]) {
        let chunks: Vec<String> = capture.data().into_iter().filter(|data| data != "[DONE]").collect();
        assert!(!chunks.is_empty(), "{}", capture.name);
        for data in chunks {
            let chunk: ChatChunk = serde_json::from_str(&data).unwrap_or_else(|e| panic!("{}: {e}\n{data}", capture.name));
            let original: Value = serde_json::from_str(&data).unwrap();
            assert_eq!(serde_json::to_value(&chunk).unwrap(), original, "{}", capture.name);
        }
    }
}

#[test]
fn openai_chunks_reserialize_byte_for_byte() {
    // The field order of the types is the API's, so OpenAI's own chunks come back identical.
    // (Azure's keys are alphabetical, so only JSON equality holds for it.)
    for capture in &OPENAI_SSE {
        for data in capture.data().into_iter().filter(|data| data != "[DONE]") {
            let chunk: ChatChunk = serde_json::from_str(&data).unwrap();
            assert_eq!(serde_json::to_string(&chunk).unwrap(), data, "{}", capture.name);
        }
    }
}

#[test]
fn parallel_tool_calls() {
    assert_eq!(
        PARALLEL_TOOL_CALLS.turn(),
        ModelTurn {
            text: String::new(),
            tool_calls: vec![
                call("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs", r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#),
                call("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price", r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#),
            ],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: usage(149, 60),
        }
    );
}

#[test]
fn strict_tool_call_started_in_the_role_chunk() {
    assert_eq!(
        STRICT_TOOL_CALL.turn(),
        ModelTurn {
            text: String::new(),
            tool_calls: vec![call("call_CTf1nWJLqSeRgDqaCG27xZ74", "get_weather", r#"{"city":"San Francisco","state":"CA"}"#)],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: usage(48, 19),
        }
    );
}

#[test]
fn text_with_usage() {
    let text = "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, \
                I recommend checking a reliable weather website or a weather app.";
    assert_eq!(TEXT_USAGE.turn(), text_turn(text, FinishReason::Stop, usage(14, 30)));
}

#[test]
fn finish_length() {
    assert_eq!(FINISH_LENGTH.turn(), text_turn("{\"", FinishReason::Length, usage(79, 1)));
}

#[test]
fn content_with_logprobs() {
    assert_eq!(CONTENT_LOGPROBS.turn(), text_turn("Foo!", FinishReason::Stop, usage(9, 2)));
}

#[test]
fn n3_keeps_choice_zero_only() {
    let turn = CHOICES_N3.turn();
    assert_eq!(turn, text_turn(r#"{"city":"San Francisco","temperature":65,"units":"f"}"#, FinishReason::Stop, usage(79, 42)));
    let (deltas, _, _) = CHOICES_N3.decode();
    let finishes = deltas.iter().filter(|delta| matches!(delta, StreamDelta::Finished(_))).count();
    assert_eq!(finishes, 1, "the finish reasons of choices 1 and 2 are ignored");
    // The recordings' reader (import, record) keeps the same choice alone.
    let events: Vec<Value> = CHOICES_N3.data().iter().filter(|data| *data != "[DONE]").map(|data| serde_json::from_str(data).unwrap()).collect();
    let texts: Vec<String> = super::read_reply::from_events(&events)
        .unwrap()
        .parts
        .into_iter()
        .filter_map(|part| if let crate::parts::Part::Text { text, .. } = part { Some(text) } else { None })
        .collect();
    assert_eq!(texts, [r#"{"city":"San Francisco","temperature":65,"units":"f"}"#]);
}

#[test]
fn refusal_is_kept_out_of_the_text() {
    let (deltas, refusal, turn) = REFUSAL.decode();
    assert_eq!(refusal, "I'm sorry, I can't assist with that request.");
    assert_eq!(turn.unwrap(), text_turn("", FinishReason::Stop, usage(79, 11)));
    assert!(!deltas.iter().any(|delta| matches!(delta, StreamDelta::Text(_))));
}

#[test]
fn azure_capture_decodes_but_has_no_done() {
    let (deltas, _, turn) = AZURE_MODEL_ROUTER.decode();
    assert!(matches!(turn, Err(WireError::StreamEndedEarly)), "{turn:?}");
    let text: String = deltas
        .iter()
        .filter_map(|delta| match delta {
            StreamDelta::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Capital of Denmark.");
    assert!(deltas.contains(&StreamDelta::Finished(FinishReason::Stop)));
    assert!(deltas.contains(&StreamDelta::Usage(usage(15, 78).unwrap())));

    // With the missing terminator added, it is a complete turn.
    let mut accumulator = ChatStreamAccumulator::new();
    for data in AZURE_MODEL_ROUTER.data().iter().map(String::as_str).chain(["[DONE]"]) {
        accumulator.push_data(data).unwrap();
    }
    assert_eq!(accumulator.finish().unwrap(), text_turn("Capital of Denmark.", FinishReason::Stop, usage(15, 78)));
}

#[test]
fn replayed_captures_decode_to_the_same_turn() {
    for capture in &OPENAI_SSE {
        assert!(capture.turn().usage.is_some(), "{}", capture.name);
    }
    assert_eq!(assert_replayed_captures_decode_alike(Format::OpenaiChat, &OPENAI_SSE), OPENAI_SSE.len());
}

#[test]
fn a_capture_decodes_the_same_split_at_every_byte_offset() {
    let stream = FINISH_LENGTH.stream();
    let whole = FINISH_LENGTH.data();
    for split in 0..=stream.len() {
        let mut decoder = SseDecoder::new();
        let mut data = Vec::new();
        for piece in [&stream.as_bytes()[..split], &stream.as_bytes()[split..]] {
            decoder.push(piece);
            data.extend(std::iter::from_fn(|| decoder.next_frame()).map(|frame| frame.data));
        }
        data.extend(decoder.finish().map(|frame| frame.data));
        assert_eq!(data, whole, "split at byte {split}");
    }
}

#[test]
fn captures_decode_the_same_fed_byte_by_byte() {
    let captures: Vec<Capture> = OPENAI_SSE.iter().copied().chain([AZURE_MODEL_ROUTER]).collect();
    assert_frames_survive_any_split(&captures);
}

/// The chunk layout `from_events` keeps for a capture, if any.
fn kept_layout(capture: &Capture) -> Vec<super::ChunkLayout> {
    let events: Vec<Value> = capture.data().iter().filter(|data| *data != "[DONE]").map(|data| serde_json::from_str(data).unwrap()).collect();
    let decoded = super::read_reply::from_events(&events).unwrap_or_else(|e| panic!("{}: {e}", capture.name));
    decoded.extra.map(|extra| extra.chunks).unwrap_or_default()
}

/// OpenAI's streams keep no layout: their chunks differ only in the
/// random `obfuscation` padding. Azure's do: its chunks carry content
/// filter results that an SDK keeps from the chunks they came in (the
/// first chunk's `prompt_filter_results`, the first choice's
/// `content_filter_results`), so they are sent chunk for chunk.
#[test]
fn openai_streams_keep_no_chunk_layout_but_a_refusal_and_azures_keep_theirs() {
    for capture in OPENAI_SSE.iter().filter(|capture| capture.name != REFUSAL.name) {
        let layout = kept_layout(capture);
        assert!(layout.is_empty(), "{}: {layout:?}", capture.name);
    }
    let azure = kept_layout(&AZURE_MODEL_ROUTER);
    assert!(azure[0].envelope.as_ref().is_some_and(|envelope| envelope.contains_key("prompt_filter_results")), "{azure:?}");
    assert!(azure[1..azure.len() - 1].iter().all(|chunk| chunk.choice.contains_key("content_filter_results")), "{azure:?}");
    // OpenAI opens a refusal with `content: null`, which the SDK keeps;
    // reloop's own layout opens every reply without calls with `""`.
    let refusal = kept_layout(&REFUSAL);
    assert_eq!(refusal[0].with, [super::ChunkField::Role, super::ChunkField::ContentNull, super::ChunkField::RefusalEmpty]);
}
