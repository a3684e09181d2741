//! The neutral reply to a request: the exchange's ordered parts (or, with
//! no exchange behind it, a turn's text and calls), the finish reason, the
//! usage to report and the response ids, as `reloop_wire::reply::Reply`,
//! which each format's codec encodes.

use reloop_wire::ModelTurn;
use reloop_wire::reply::Reply;

use reloop_recording::{Arguments, Exchange, Part, ToolCallPart};

/// The reply to a request answered with `turn`, from the parts of
/// `exchange` when there is one. The turn's tool calls (ids generated,
/// arguments after a `truncate_arguments` fault) replace the exchange's, in
/// order. With `recorded_usage`, an exchange's recorded usage is reported
/// instead of the server's count.
pub fn answer(turn: &ModelTurn, exchange: Option<&Exchange>, recorded_usage: bool) -> Reply {
    let Some(exchange) = exchange else { return Reply::of_turn(turn) };
    let counted = turn.usage.unwrap_or_default();
    let mut calls = turn.tool_calls.iter();
    let parts = exchange
        .parts
        .iter()
        .map(|part| match (part, part_call(part).and_then(|_| calls.next())) {
            (Part::ToolCall(recorded), Some(call)) => Part::ToolCall(ToolCallPart {
                id: Some(call.id.to_string()),
                arguments: Arguments::Raw(call.arguments.to_string()),
                chunks: if call.arguments == recorded.arguments.to_wire() { recorded.chunks.clone() } else { Vec::new() },
                ..recorded.clone()
            }),
            _ => part.clone(),
        })
        .collect();
    let recorded = exchange.usage.as_ref().filter(|_| recorded_usage);
    Reply {
        parts,
        finish_reason: turn.finish_reason.clone(),
        usage: recorded.map_or(counted, |usage| usage.tokens()),
        wire_usage: recorded.and_then(|usage| usage.wire.clone()),
        // Read off the wire without usage: the response had none to send.
        // Its request says it was read off the wire even when its bytes
        // were not kept (a `--redact-body` match drops them).
        no_usage: recorded_usage && exchange.usage.is_none() && (exchange.raw.is_some() || exchange.request.is_some()),
        ids: exchange.ids.clone(),
        generated_call_ids: exchange.tool_calls().map(|call| call.id.is_none()).collect(),
        extra: exchange.extra.clone(),
        // What the provider's context management did is the request's, set where it is answered.
        context: Default::default(),
    }
}

fn part_call(part: &Part) -> Option<&ToolCallPart> {
    if let Part::ToolCall(call) = part { Some(call) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::{ToolCall, Usage};
    use serde_json::json;

    #[test]
    fn the_turns_calls_replace_the_recorded_ones_in_place() {
        let exchange: Exchange = serde_json::from_value(json!({ "parts": [
            { "type": "text", "text": "a" },
            { "type": "tool_call", "name": "read", "arguments": "{\"p\":1}", "chunks": [3, 4] },
            { "type": "text", "text": "b" },
            { "type": "tool_call", "id": "toolu_1", "name": "ls", "arguments": "{}", "chunks": [2] }
        ], "usage": { "input_tokens": 9, "output_tokens": 2, "wire": { "x": 1 } } }))
        .unwrap();
        let mut turn = exchange.to_turn(2);
        turn.tool_calls[0].arguments = turn.tool_calls[0].arguments[..3].into();
        turn.usage = Some(Usage { input_tokens: 5, ..Usage::default() });
        let reply = answer(&turn, Some(&exchange), false);
        let calls: Vec<_> = reply.tool_calls().map(|c| (c.id.clone().unwrap(), c.arguments.to_wire(), c.chunks.clone())).collect();
        assert_eq!(calls, [("call_002_0".into(), "{\"p".into(), vec![]), ("toolu_1".into(), "{}".into(), vec![2])]);
        assert!(matches!(&reply.parts[2], Part::Text { text, .. } if text == "b"));
        assert_eq!((reply.usage.input_tokens, reply.wire_usage), (5, None));
        let recorded = answer(&turn, Some(&exchange), true);
        assert_eq!((recorded.usage.input_tokens, recorded.wire_usage), (9, Some(json!({ "x": 1 }))));
    }

    /// Issue 43: a response recorded without usage was served with the
    /// server's count when its bytes had not been kept (redacted away),
    /// though the recording says it was read off the wire.
    #[test]
    fn usage_the_recorded_response_did_not_carry_is_not_made_up() {
        let turn = ModelTurn { text: "hi".into(), ..ModelTurn::default() };
        let read_off_the_wire: Exchange =
            serde_json::from_value(json!({ "parts": [{ "type": "text", "text": "hi" }], "request": { "path": "/v1/chat/completions", "body": {} } })).unwrap();
        assert!(answer(&turn, Some(&read_off_the_wire), true).no_usage, "recorded without usage, bytes dropped");
        assert!(!answer(&turn, Some(&read_off_the_wire), false).no_usage, "the server's count, without --recorded-usage");
        let authored: Exchange = serde_json::from_value(json!({ "parts": [{ "type": "text", "text": "hi" }] })).unwrap();
        assert!(!answer(&turn, Some(&authored), true).no_usage, "an authored exchange has the server's count");
    }

    #[test]
    fn a_turn_without_an_exchange_is_its_text_then_its_calls() {
        let turn =
            ModelTurn { text: "hi".into(), tool_calls: vec![ToolCall { id: "c".into(), name: "n".into(), arguments: "{}".into() }], ..ModelTurn::default() };
        let reply = answer(&turn, None, true);
        assert_eq!(reply.parts.len(), 2);
        assert_eq!(reply.text(), "hi");
    }
}
