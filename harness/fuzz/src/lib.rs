//! Inputs for the fuzz targets in `tests/targets.rs`: valid wire traffic
//! encoded by the wire codec (the encoder the mock serves with) from
//! generated turns, then damaged the way a
//! hostile or broken peer would (numbers swapped for extreme ones, bytes
//! cut, flipped or inserted, frames dropped or repeated). Starting from
//! valid traffic reaches deep into the decoders, where random bytes alone
//! stop at the first parse error.
//!
//! Runs on stable Rust (cargo-fuzz needs nightly): `cargo nextest run -p
//! reloop-fuzz`, with `PROPTEST_CASES` setting how many inputs per target.
//! A failing input is shrunk and saved under `tests/*.proptest-regressions`,
//! replayed first on every later run; a crash found once also becomes a
//! named test beside the code it broke.

use proptest::prelude::*;
use reloop_wire::codec::{encode_reply, encode_reply_stream};
use reloop_wire::reply::{Reply, ReplyMeta};
use reloop_wire::{FinishReason, Format, ModelTurn, ToolCall, Usage};

/// Numbers that break careless arithmetic.
const EXTREMES: [&str; 10] = ["18446744073709551615", "18446744073709551616", "9223372036854775807", "-1", "0", "1e20", "4294967295", "-0", "1.5", "null"];

/// A model turn with text, tool calls and usage anywhere in `u64`.
pub fn turn() -> impl Strategy<Value = ModelTurn> {
    let call = ("[a-z_]{1,8}", "\\PC{0,20}");
    (
        "\\PC{0,40}",
        prop::collection::vec(call, 0..3),
        prop::sample::select(vec![FinishReason::Stop, FinishReason::ToolCalls, FinishReason::Length, FinishReason::ContentFilter]),
        prop::option::of((any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>())),
    )
        .prop_map(|(text, calls, finish_reason, usage)| ModelTurn {
            text,
            tool_calls: calls
                .into_iter()
                .enumerate()
                .map(|(i, (name, arguments))| ToolCall { id: format!("call_{i}").into(), name: name.into(), arguments: arguments.into() })
                .collect(),
            reasoning: Vec::new(),
            finish_reason,
            usage: usage.map(|(input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)| Usage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cache_write_tokens,
            }),
        })
}

fn meta() -> ReplyMeta {
    ReplyMeta { request_index: 0, model: "fuzz".into(), include_usage: true, tools: Vec::new() }
}

/// The SSE frames the mock sends for `turn` in `format`.
pub fn stream_frames(format: Format, turn: &ModelTurn) -> Vec<String> {
    encode_reply_stream(format, &Reply::of_turn(turn), &meta())
}

/// The whole (non-streamed) response body for `turn` in `format`.
pub fn complete_body(format: Format, turn: &ModelTurn) -> String {
    encode_reply(format, &Reply::of_turn(turn), &meta())
}

/// One way to damage a text.
#[derive(Debug, Clone)]
pub enum Damage {
    /// Replace a number with an extreme one.
    Number {
        /// Which number (wrapping around).
        nth: usize,
        /// Its replacement.
        with: &'static str,
    },
    /// Cut the text short.
    Truncate {
        /// Where, per mille of the length.
        at: u16,
    },
    /// Set one byte.
    Flip {
        /// Where, per mille of the length.
        at: u16,
        /// The new value.
        to: u8,
    },
    /// Insert bytes.
    Insert {
        /// Where, per mille of the length.
        at: u16,
        /// What.
        bytes: Vec<u8>,
    },
}

/// Any damage.
pub fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        3 => (0..40usize, prop::sample::select(EXTREMES.to_vec())).prop_map(|(nth, with)| Damage::Number { nth, with }),
        1 => (0..1000u16).prop_map(|at| Damage::Truncate { at }),
        2 => (0..1000u16, any::<u8>()).prop_map(|(at, to)| Damage::Flip { at, to }),
        1 => (0..1000u16, prop::collection::vec(any::<u8>(), 1..8)).prop_map(|(at, bytes)| Damage::Insert { at, bytes }),
    ]
}

fn position(len: usize, per_mille: u16) -> usize {
    len * usize::from(per_mille.min(1000)) / 1000
}

/// `text` with every damage applied, as bytes (it may no longer be UTF-8).
pub fn apply(text: &str, damages: &[Damage]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for damage in damages {
        match damage {
            Damage::Number { nth, with } => bytes = replace_number(&bytes, *nth, with),
            Damage::Truncate { at } => bytes.truncate(position(bytes.len(), *at)),
            Damage::Flip { at, to } => {
                if !bytes.is_empty() {
                    let i = position(bytes.len() - 1, *at);
                    bytes[i] = *to;
                }
            }
            Damage::Insert { at, bytes: extra } => {
                let i = position(bytes.len(), *at);
                bytes.splice(i..i, extra.iter().copied());
            }
        }
    }
    bytes
}

/// Replaces the `nth` (wrapping) run of ASCII digits in `bytes` with `with`.
fn replace_number(bytes: &[u8], nth: usize, with: &str) -> Vec<u8> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            runs.push(start..i);
        } else {
            i += 1;
        }
    }
    let Some(run) = runs.get(nth % runs.len().max(1)).cloned() else { return bytes.to_vec() };
    let mut out = bytes[..run.start].to_vec();
    out.extend_from_slice(with.as_bytes());
    out.extend_from_slice(&bytes[run.end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_replaced_in_place() {
        assert_eq!(apply("a 12 b 345", &[Damage::Number { nth: 1, with: "-1" }]), b"a 12 b -1");
        assert_eq!(apply("abc", &[Damage::Truncate { at: 500 }]), b"a");
        assert_eq!(apply("abc", &[Damage::Insert { at: 0, bytes: vec![b'x'] }]), b"xabc");
    }
}
