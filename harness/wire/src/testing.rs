//! Test helpers shared by every format's tests: the real captures in `tests/data/` (see its
//! `SOURCES.md`), decoding a whole stream through SSE framing and a [`StreamDecoder`], and
//! encoding through the codec, the one encoder a server sends bytes with.

use crate::codec::{decode_reply, encode_reply, encode_reply_stream};
use crate::parts::Part;
use crate::reply::{DecodedReply, Reply, ReplyMeta};
use crate::{FinishReason, Format, ModelTurn, SseDecoder, SseFrame, StreamDecoder, StreamDelta, ToolCall, Usage, WireError, decoder_for, sse};

/// One capture file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Capture {
    /// File name.
    pub(crate) name: &'static str,
    /// File contents.
    pub(crate) raw: &'static str,
}

/// `capture!("dir", "file")`: the capture `tests/data/dir/file`, embedded at compile time.
macro_rules! capture {
    ($dir:literal, $file:literal) => {
        $crate::testing::Capture { name: $file, raw: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/", $dir, "/", $file)) }
    };
}
pub(crate) use capture;

impl Capture {
    /// The capture as a client receives it. JSON-per-line files get the SSE framing they lack:
    /// `data: <line>`, preceded by `event: <type>` when the line has a `type` (Responses and
    /// Anthropic events do, Chat Completions chunks do not). Lines are kept byte for byte.
    pub(crate) fn stream(&self) -> String {
        if !self.name.ends_with(".jsonl") {
            return self.raw.to_owned();
        }
        self.raw
            .lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}\n{line}", self.name));
                let kind = value.get("type").and_then(serde_json::Value::as_str);
                sse::encode_frame(kind, line)
            })
            .collect()
    }

    /// Every frame of the stream, including a last one without its blank line.
    pub(crate) fn frames(&self) -> Vec<SseFrame> {
        frames(self.stream().as_bytes())
    }

    /// The `data` of every frame.
    pub(crate) fn data(&self) -> Vec<String> {
        self.frames().into_iter().map(|frame| frame.data).collect()
    }

    /// Every frame of the stream when the network delivers it one byte at a time.
    pub(crate) fn frames_byte_by_byte(&self) -> Vec<SseFrame> {
        let mut decoder = SseDecoder::new();
        let mut frames = Vec::new();
        for byte in self.stream().as_bytes() {
            decoder.push(std::slice::from_ref(byte));
            frames.extend(std::iter::from_fn(|| decoder.next_frame()));
        }
        frames.extend(decoder.finish());
        frames
    }
}

/// Every frame of a whole stream, including a last one without its blank line.
pub(crate) fn frames(stream: &[u8]) -> Vec<SseFrame> {
    let mut decoder = SseDecoder::new();
    decoder.push(stream);
    let mut frames: Vec<SseFrame> = std::iter::from_fn(|| decoder.next_frame()).collect();
    frames.extend(decoder.finish());
    frames
}

/// Decodes a whole stream with `decoder`: every delta up to the first error, and the turn (or
/// that error).
pub(crate) fn decode_stream(stream: &str, decoder: &mut dyn StreamDecoder) -> (Vec<StreamDelta>, Result<ModelTurn, WireError>) {
    let mut deltas = Vec::new();
    for frame in frames(stream.as_bytes()) {
        match decoder.push_frame(&frame) {
            Ok(more) => deltas.extend(more),
            Err(error) => return (deltas, Err(error)),
        }
    }
    (deltas, decoder.finish())
}

impl Capture {
    /// Decodes the capture with `decoder` (see [`decode_stream`]).
    pub(crate) fn decode_with(&self, decoder: &mut dyn StreamDecoder) -> (Vec<StreamDelta>, Result<ModelTurn, WireError>) {
        decode_stream(&self.stream(), decoder)
    }

    /// The turn `decoder` reads from the capture, which must be complete.
    pub(crate) fn turn_with(&self, decoder: &mut dyn StreamDecoder) -> ModelTurn {
        self.decode_with(decoder).1.unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }
}

/// Usage with these counts and no cache activity.
pub(crate) fn usage(input_tokens: u64, output_tokens: u64) -> Option<Usage> {
    Some(Usage { input_tokens, output_tokens, ..Usage::default() })
}

/// A turn with text and no tool calls.
pub(crate) fn text_turn(text: &str, finish_reason: FinishReason, usage: Option<Usage>) -> ModelTurn {
    ModelTurn { text: text.to_owned(), tool_calls: Vec::new(), reasoning: Vec::new(), finish_reason, usage }
}

/// A tool call.
pub(crate) fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

/// The small turn every format's encoder tests render: two words of text
/// and one `get_weather` call with call id `call_id`.
pub(crate) fn small_tool_turn(call_id: &str, usage: Usage) -> ModelTurn {
    ModelTurn {
        text: "Hi there".to_owned(),
        tool_calls: vec![call(call_id, "get_weather", r#"{"city":"Paris","units":"c"}"#)],
        reasoning: Vec::new(),
        finish_reason: FinishReason::ToolCalls,
        usage: Some(usage),
    }
}

/// The deltas a decoder must report for [`small_tool_turn`]: the text in
/// two pieces, the call, its arguments in two fragments, the finish, the
/// usage and the end.
pub(crate) fn small_tool_turn_deltas(turn: &ModelTurn) -> Vec<StreamDelta> {
    vec![
        StreamDelta::Text("Hi".into()),
        StreamDelta::Text(" there".into()),
        StreamDelta::ToolCallStarted { index: 0, id: turn.tool_calls[0].id.to_string(), name: "get_weather".into() },
        StreamDelta::ToolCallArguments { index: 0, fragment: r#"{"city":"Paris","#.into() },
        StreamDelta::ToolCallArguments { index: 0, fragment: r#""units":"c"}"#.into() },
        StreamDelta::Finished(FinishReason::ToolCalls),
        StreamDelta::Usage(turn.usage.expect("the small turn has usage")),
        StreamDelta::Done,
    ]
}

/// The reply a replay sends for `decoded`, recorded usage and all (none when it carried none).
pub(crate) fn reply_of(decoded: DecodedReply) -> Reply {
    let usage = decoded.usage.clone().unwrap_or_default();
    let generated_call_ids = decoded.parts.iter().filter_map(|part| if let Part::ToolCall(call) = part { Some(call.id.is_none()) } else { None }).collect();
    Reply {
        parts: decoded.parts,
        finish_reason: decoded.finish_reason.unwrap_or(FinishReason::Stop),
        usage: usage.tokens(),
        wire_usage: usage.wire,
        no_usage: decoded.usage.is_none(),
        ids: decoded.ids,
        generated_call_ids,
        extra: decoded.extra,
        context: decoded.context,
    }
}

/// The reply of a turn with no recording behind it: its text and calls
/// ([`crate::parts::of_turn`]), its finish reason and usage; a turn without usage is sent
/// without it where the API allows (Anthropic sends zeros).
pub(crate) fn reply_of_turn(turn: &ModelTurn) -> Reply {
    Reply { no_usage: turn.usage.is_none(), ..Reply::of_turn(turn) }
}

/// What the tests' replies are sent for: the first request of a session, model `m`, usage asked for.
pub(crate) fn reply_meta() -> ReplyMeta {
    ReplyMeta { request_index: 0, model: "m".into(), include_usage: true, tools: Vec::new() }
}

/// `turn` as `format`'s stream, written by the codec.
pub(crate) fn stream_of_turn(format: Format, turn: &ModelTurn) -> Vec<String> {
    encode_reply_stream(format, &reply_of_turn(turn), &reply_meta())
}

/// `turn` as `format`'s whole response body, written by the codec.
pub(crate) fn body_of_turn(format: Format, turn: &ModelTurn) -> String {
    encode_reply(format, &reply_of_turn(turn), &reply_meta())
}

/// Reads every capture of `format` that reads into a reply as a recording
/// does, sends it again through the codec, decodes that as the agent does,
/// and asserts the agent gets the turn the capture itself decodes to;
/// returns how many captures took part.
pub(crate) fn assert_replayed_captures_decode_alike(format: Format, captures: &[Capture]) -> usize {
    let mut checked = 0;
    for capture in captures {
        let (Ok(turn), Ok(recorded)) = (capture.decode_with(decoder_for(format).as_mut()).1, decode_reply(format, &capture.stream(), true)) else {
            continue;
        };
        let (_, again) = decode_stream(&encode_reply_stream(format, &reply_of(recorded), &reply_meta()).concat(), decoder_for(format).as_mut());
        assert_eq!(again.unwrap(), turn, "{}", capture.name);
        checked += 1;
    }
    checked
}

/// Asserts every capture's frames come out the same however the bytes are
/// split on the way in.
pub(crate) fn assert_frames_survive_any_split(captures: &[Capture]) {
    for capture in captures {
        assert_eq!(capture.frames_byte_by_byte(), capture.frames(), "{}", capture.name);
    }
}
