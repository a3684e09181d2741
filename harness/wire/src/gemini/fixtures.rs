//! Tests against the Gemini captures (`tests/data/gemini/`, response bodies
//! of pydantic-ai's cassettes, see `SOURCES.md`): the decoder reads each
//! capture into the turn Google sent, the parts read from a stream encode
//! back (through the codec) into a stream cut the same way, and whole bodies read back alike.

use serde_json::{Value, json};

use super::response::usage_metadata;
use super::{GeminiStreamDecoder, decode_body, decode_events};
use crate::codec::{decode_reply, encode_reply, encode_reply_stream};
use crate::parts::{Extra, Part};
use crate::reply::ReplyMeta;
use crate::testing::{Capture, capture, frames, reply_meta, reply_of};
use crate::{FinishReason, Format, Reasoning, StreamDecoder, StreamDelta, Usage};

const TEXT: Capture = capture!("gemini", "pydantic-ai-model-stream.0.sse");
const SIGNED_CALL: Capture = capture!("gemini", "pydantic-ai-streaming-tool-call-thought-signature.0.sse");
const THOUGHTS: Capture = capture!("gemini", "pydantic-ai-model-thinking-part-iter.0.sse");
const MAX_TOKENS: Capture = capture!("gemini", "pydantic-ai-model-max-tokens.0.json");
const CALLS: Capture = capture!("gemini", "pydantic-ai-instructions-only-with-tool-calls.0.json");

fn chunks(capture: &Capture) -> Vec<Value> {
    frames(capture.raw.as_bytes()).iter().map(|frame| serde_json::from_str(&frame.data).unwrap()).collect()
}

/// The stream the codec sends for `capture` replayed as a recording reads it, for the model it names.
fn replayed(capture: &Capture) -> String {
    let recorded = decode_reply(Format::Gemini, capture.raw, true).unwrap();
    let meta = ReplyMeta { model: recorded.model.clone().unwrap_or_default(), ..reply_meta() };
    encode_reply_stream(Format::Gemini, &reply_of(recorded), &meta).concat()
}

#[test]
fn a_text_stream_reads_with_its_piece_sizes_and_usage() {
    let decoded = decode_events(&chunks(&TEXT)).unwrap();
    assert_eq!(
        decoded.parts,
        [Part::Text { text: "The capital of France is Paris.\n".into(), id: None, annotations: Vec::new(), chunks: vec![3, 18, 11], extra: Extra::new() }]
    );
    let turn = decoded.to_turn();
    assert_eq!((turn.finish_reason.clone(), turn.usage), (FinishReason::Stop, Some(Usage { input_tokens: 13, output_tokens: 8, ..Usage::default() })));
    let mut decoder = GeminiStreamDecoder::new();
    let deltas: Vec<StreamDelta> = frames(TEXT.raw.as_bytes()).iter().flat_map(|frame| decoder.push_frame(frame).unwrap()).collect();
    assert_eq!(deltas[..3], [StreamDelta::Text("The".into()), StreamDelta::Text(" capital of France".into()), StreamDelta::Text(" is Paris.\n".into())]);
    assert_eq!(deltas.last(), Some(&StreamDelta::Done));
    assert_eq!(decoder.finish().unwrap(), turn);
}

#[test]
fn a_signed_call_keeps_its_signature_and_comes_back_as_sent() {
    let decoded = decode_events(&chunks(&SIGNED_CALL)).unwrap();
    let [Part::Thinking { thinking, signature: Some(signature), .. }, Part::ToolCall(call)] = decoded.parts.as_slice() else { panic!("{:?}", decoded.parts) };
    assert!(thinking.is_empty() && signature.starts_with("EpwICpkIAXLI2n"));
    assert_eq!(call.name, "get_country");
    let turn = decoded.to_turn();
    assert_eq!(turn.finish_reason, FinishReason::ToolCalls, "Gemini says STOP beside calls");
    assert_eq!(turn.usage.unwrap().output_tokens, 10 + 202, "thoughts are output");
    assert!(matches!(&turn.reasoning[..], [Reasoning::Thinking { signature: Some(_), .. }]));
    let again = replayed(&SIGNED_CALL);
    let first = frames(again.as_bytes())[0].data.clone();
    assert_eq!(serde_json::from_str::<Value>(&first).unwrap()["candidates"][0]["content"]["parts"][0]["thoughtSignature"], json!(signature));
}

#[test]
fn thoughts_stream_back_cut_as_recorded() {
    let decoded = decode_events(&chunks(&THOUGHTS)).unwrap();
    assert!(matches!(&decoded.parts[0], Part::Thinking { chunks, .. } if chunks.len() > 1), "{:?}", decoded.parts);
    assert!(decoded.parts.iter().any(|part| matches!(part, Part::Text { .. })));
    let again: Vec<Value> = frames(replayed(&THOUGHTS).as_bytes()).iter().map(|frame| serde_json::from_str(&frame.data).unwrap()).collect();
    assert_eq!(decode_events(&again).unwrap(), decoded, "the same parts, cut the same way, each chunk with its own usage");
}

#[test]
fn whole_bodies_read_and_encode_back() {
    for capture in [MAX_TOKENS, CALLS] {
        let body: Value = serde_json::from_str(capture.raw).unwrap();
        let turn = decode_body(&body).unwrap().to_turn();
        let again = encode_reply(Format::Gemini, &reply_of(decode_reply(Format::Gemini, capture.raw, false).unwrap()), &reply_meta());
        assert_eq!(decode_body(&serde_json::from_str(&again).unwrap()).unwrap().to_turn(), turn, "{}", capture.name);
    }
    let truncated = decode_body(&serde_json::from_str(MAX_TOKENS.raw).unwrap()).unwrap().to_turn();
    assert_eq!((truncated.text.as_str(), truncated.finish_reason), ("The capital of France is", FinishReason::Length));
}

#[test]
fn an_error_chunk_is_the_providers_error() {
    let frame = crate::SseFrame { event: None, data: r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#.into() };
    let error = GeminiStreamDecoder::new().push_frame(&frame).unwrap_err();
    assert!(matches!(error, crate::WireError::Provider { ref kind, .. } if kind == "overloaded_error"), "{error:?}");
    let counted = usage_metadata(&Usage { input_tokens: 5000, output_tokens: 7, cache_read_tokens: 4096, cache_write_tokens: 0 });
    assert_eq!(counted, json!({ "promptTokenCount": 5000, "candidatesTokenCount": 7, "totalTokenCount": 5007, "cachedContentTokenCount": 4096 }));
}
