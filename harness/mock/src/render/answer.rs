//! What a neutral reply renders: the exchange's ordered parts (or, with no
//! exchange behind it, a turn's text and calls), the finish reason, the
//! usage to report, the response ids, and how each part is cut into
//! deltas. The three API renderers read only this.

use reloop_wire::{FinishReason, Format, ModelTurn, Usage};
use serde_json::Value;

use crate::recording::{Arguments, Exchange, Part, ResponseIds, ToolCallPart};
use crate::tokens::content_hash;

/// One neutral reply, ready for any API's renderer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The parts in the order the model produced them; every tool call has
    /// its id and its (possibly fault-truncated) arguments as a raw string.
    pub parts: Vec<Part>,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// The counts to report (the server's, or the recorded ones).
    pub usage: Usage,
    /// The provider's own usage object as recorded, sent as is by the API
    /// it was recorded from (every field kept); other APIs convert `usage`.
    pub wire_usage: Option<Value>,
    /// The recorded response ids; absent ones are generated.
    pub ids: ResponseIds,
}

impl Answer {
    /// The reply to a request answered with `turn`, rendered from the parts
    /// of `exchange` when there is one. The turn's tool calls (ids
    /// generated, arguments after a `truncate_arguments` fault) replace the
    /// exchange's, in order. With `recorded_usage`, an exchange's recorded
    /// usage is reported instead of the server's count.
    pub fn new(turn: &ModelTurn, exchange: Option<&Exchange>, recorded_usage: bool) -> Self {
        let counted = turn.usage.unwrap_or_default();
        let Some(exchange) = exchange else {
            return Self { parts: reloop_wire::parts::of_turn(turn), finish_reason: turn.finish_reason.clone(), usage: counted, wire_usage: None, ids: ResponseIds::default() };
        };
        let mut calls = turn.tool_calls.iter();
        let parts = exchange
            .parts
            .iter()
            .map(|part| match (part, part_call(part).and_then(|_| calls.next())) {
                (Part::ToolCall(recorded), Some(call)) => Part::ToolCall(ToolCallPart {
                    id: Some(call.id.clone()),
                    arguments: Arguments::Raw(call.arguments.clone()),
                    chunks: if call.arguments == recorded.arguments.to_wire() { recorded.chunks.clone() } else { Vec::new() },
                    ..recorded.clone()
                }),
                _ => part.clone(),
            })
            .collect();
        let recorded = exchange.usage.as_ref().filter(|_| recorded_usage);
        Self {
            parts,
            finish_reason: turn.finish_reason.clone(),
            usage: recorded.map_or(counted, |usage| usage.tokens()),
            wire_usage: recorded.and_then(|usage| usage.wire.clone()),
            ids: exchange.ids.clone(),
        }
    }

    /// The joined text of every text part (what Chat's `content` carries).
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(|part| if let Part::Text { text, .. } = part { Some(text.as_str()) } else { None }).collect()
    }

    /// The recorded usage object when it is in `format`'s shape (Chat names
    /// `prompt_tokens`, Gemini `promptTokenCount`; Responses, unlike
    /// Anthropic, adds `total_tokens`).
    pub fn wire_usage_in(&self, format: Format) -> Option<&Value> {
        let wire = self.wire_usage.as_ref()?;
        let shape = if wire.get("promptTokenCount").is_some() {
            Format::Gemini
        } else if wire.get("prompt_tokens").is_some() {
            Format::OpenaiChat
        } else if wire.get("total_tokens").is_some() || wire.get("input_tokens_details").is_some() {
            Format::OpenaiResponses
        } else {
            Format::Anthropic
        };
        (shape == format).then_some(wire)
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallPart> {
        self.parts.iter().filter_map(|part| if let Part::ToolCall(call) = part { Some(call) } else { None })
    }
}

fn part_call(part: &Part) -> Option<&ToolCallPart> {
    if let Part::ToolCall(call) = part { Some(call) } else { None }
}

/// The alphabet of Anthropic's and Chat's ids.
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// The alphabet of Responses' ids.
const HEX: &[u8] = b"0123456789abcdef";

/// An id in a provider's real shape (`prefix` then `len` characters of
/// `alphabet`), the same for the same request index and slot run after run.
fn generated(prefix: &str, alphabet: &[u8], len: usize, request_index: usize, slot: &str) -> String {
    let mut state = content_hash(&(request_index, slot)) | 1;
    let mut id = String::with_capacity(prefix.len() + len);
    id.push_str(prefix);
    for _ in 0..len {
        // xorshift64: cheap, deterministic, spreads the hash over every character.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        id.push(char::from(alphabet[(state % alphabet.len() as u64) as usize]));
    }
    id
}

/// Generated ids, one shape per API and kind.
#[derive(Debug, Clone, Copy)]
pub enum IdShape {
    /// Chat: `chatcmpl-` + 29 base62.
    ChatCompletion,
    /// Responses: `resp_` + 50 hex.
    Response,
    /// Responses output items: `msg_`, `rs_`, `fc_`, `ws_` + 50 hex.
    Item(&'static str),
    /// Anthropic: `msg_01` + 22 base62.
    Message,
    /// Anthropic server tool calls: `srvtoolu_01` + 22 base62.
    ServerToolUse,
    /// Gemini: a `responseId` of 23 base62.
    GeminiResponse,
}

impl IdShape {
    /// The id of this kind for request `request_index`, at `slot` (the part's position).
    pub fn id(self, request_index: usize, slot: usize) -> String {
        let slot_name = format!("{self:?}{slot}");
        match self {
            Self::ChatCompletion => generated("chatcmpl-", BASE62, 29, request_index, &slot_name),
            Self::Response => generated("resp_", HEX, 50, request_index, &slot_name),
            Self::Item(prefix) => generated(prefix, HEX, 50, request_index, &slot_name),
            Self::Message => generated("msg_01", BASE62, 22, request_index, &slot_name),
            Self::ServerToolUse => generated("srvtoolu_01", BASE62, 22, request_index, &slot_name),
            Self::GeminiResponse => generated("", BASE62, 23, request_index, &slot_name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;
    use serde_json::json;

    #[test]
    fn generated_ids_have_the_real_shapes_and_repeat() {
        let id = IdShape::Message.id(3, 0);
        assert!(id.starts_with("msg_01") && id.len() == 28, "{id}");
        assert_eq!(id, IdShape::Message.id(3, 0));
        assert_ne!(id, IdShape::Message.id(4, 0));
        let resp = IdShape::Response.id(0, 0);
        assert!(resp.len() == 55 && resp[5..].bytes().all(|b| b.is_ascii_hexdigit()), "{resp}");
        assert_eq!(IdShape::ChatCompletion.id(1, 0).len(), 38);
    }

    #[test]
    fn the_turns_calls_replace_the_recorded_ones_in_place() {
        let exchange: Exchange = serde_json::from_value(json!({ "parts": [
            { "type": "text", "text": "a" },
            { "type": "tool_call", "name": "read", "arguments": "{\"p\":1}", "chunks": [3, 4] },
            { "type": "text", "text": "b" },
            { "type": "tool_call", "id": "toolu_1", "name": "ls", "arguments": "{}", "chunks": [2] }
        ], "usage": { "input_tokens": 9, "output_tokens": 2, "wire": { "x": 1 } } })).unwrap();
        let mut turn = exchange.to_turn(2);
        turn.tool_calls[0].arguments.truncate(3);
        turn.usage = Some(Usage { input_tokens: 5, ..Usage::default() });
        let answer = Answer::new(&turn, Some(&exchange), false);
        let calls: Vec<_> = answer.tool_calls().map(|c| (c.id.clone().unwrap(), c.arguments.to_wire(), c.chunks.clone())).collect();
        assert_eq!(calls, [("call_002_0".into(), "{\"p".into(), vec![]), ("toolu_1".into(), "{}".into(), vec![2])]);
        assert!(matches!(&answer.parts[2], Part::Text { text, .. } if text == "b"));
        assert_eq!((answer.usage.input_tokens, answer.wire_usage), (5, None));
        let recorded = Answer::new(&turn, Some(&exchange), true);
        assert_eq!((recorded.usage.input_tokens, recorded.wire_usage), (9, Some(json!({ "x": 1 }))));
    }

    #[test]
    fn a_turn_without_an_exchange_is_its_text_then_its_calls() {
        let turn = ModelTurn { text: "hi".into(), tool_calls: vec![ToolCall { id: "c".into(), name: "n".into(), arguments: "{}".into() }], ..ModelTurn::default() };
        let answer = Answer::new(&turn, None, true);
        assert_eq!(answer.parts.len(), 2);
        assert_eq!(answer.text(), "hi");
    }
}
