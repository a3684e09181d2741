//! What each call sent, for the report's trajectory viewer: the steps
//! table's `sent_messages`, `reply_message` and `messages_first_seen`
//! (`docs/metrics.md`), from the server session's [`SentLog`].
//!
//! The history repeats in every request, so a run numbers its distinct
//! messages in the order it first sent (or received) them, a call lists the
//! numbers it sent as ranges (`0-41,57`), and each body is written once, on
//! the row of the call that first carried it. Against the loop's own
//! transcript, as the run's wire carries it (Chat has no `is_error`,
//! Anthropic wraps arguments that are no JSON object), each message is
//! classed: `original` (a transcript message as it is), `masked` (a tool result shown as a placeholder, with the number
//! of the original when it was sent), `edited` (an assistant turn differing
//! from the transcript's), `compacted` (a message no transcript holds: the
//! compaction's summaries and collapsed rounds) or `system`.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use reloop_agent::{LoopState, Message};
use reloop_mock::sent::{SentLog, SentPart};
use reloop_mock::tokens::content_hash;
use reloop_wire::compact_json::compact_json;
use reloop_wire::format::message_through;
use reloop_wire::{Format, Text};
use serde_json::{Value, json};

use crate::FastHash;
use crate::result::StepRow;

/// Longest text kept of each field of a message body (a tool result's
/// content, a turn's text, a call's arguments), to keep reports small.
const BODY_CHARS: usize = 1_000;

/// The loop's transcripts (sub-agents' included), by content and by call
/// id, each message as it arrives through the run's wire: what a wire
/// cannot carry (a failed result's flag on Chat) is no edit of the loop's.
struct Originals {
    wire: Format,
    /// Content hashes: already hashes, so foldhash's fast mix, as for the
    /// maps below (a lookup per message sent, an insert per message of
    /// every transcript).
    whole: HashSet<u64, FastHash>,
    /// A tool result's hash by its call id; an assistant turn's by its first call's id.
    by_call: HashMap<(bool, Text), u64, FastHash>,
}

impl Originals {
    fn of(state: &LoopState, wire: Format) -> Self {
        let mut originals = Self { wire, whole: HashSet::default(), by_call: HashMap::default() };
        originals.add(state);
        originals
    }

    fn add(&mut self, state: &LoopState) {
        for message in state.transcript.iter().flat_map(|message| message_through(self.wire, message)) {
            let hash = content_hash(&message);
            self.whole.insert(hash);
            if let Some(key) = call_key(&message) {
                self.by_call.entry(key).or_insert(hash);
            }
        }
        for child in &state.sub_agents {
            self.add(child);
        }
    }

    /// How `message` stands to the transcript, and the original's hash
    /// when it stands for one.
    fn class(&self, message: &Message) -> (&'static str, Option<u64>) {
        if self.whole.contains(&content_hash(message)) {
            return ("original", None);
        }
        let original = call_key(message).and_then(|key| self.by_call.get(&key).copied());
        match message {
            Message::ToolResult { .. } => ("masked", original),
            Message::Assistant { .. } => ("edited", original),
            Message::User { .. } => ("compacted", None),
        }
    }
}

/// A tool result's call id, or an assistant turn's first call id.
fn call_key(message: &Message) -> Option<(bool, Text)> {
    match message {
        Message::ToolResult { call_id, .. } => Some((true, call_id.clone())),
        Message::Assistant { tool_calls, .. } => tool_calls.first().map(|call| (false, call.id.clone())),
        Message::User { .. } => None,
    }
}

/// Fills the sent-message columns of `steps`, whose `call_index` is the
/// request's place in `sent`; `state` is the built-in loop's with the wire
/// it spoke (`None` for a black-box agent, whose messages go unclassed).
pub(crate) fn fill(steps: &mut [StepRow], sent: &SentLog, state: Option<(&LoopState, Format)>) {
    let originals = state.map(|(state, wire)| Originals::of(state, wire));
    // Keyed by hashes already: foldhash, not SipHash, for a lookup per
    // message per request.
    let mut numbers: HashMap<u64, u64, FastHash> = HashMap::default();
    // The number of each message sent so far, by the transcript's hash.
    let mut by_content: HashMap<u64, u64, FastHash> = HashMap::default();
    for step in steps {
        let index = step.call_index as usize;
        let Some(hashes) = sent.requests.get(index) else { continue };
        let mut first_seen = Vec::new();
        let mut number_of = |hash: u64, first_seen: &mut Vec<Value>| -> u64 {
            if let Some(number) = numbers.get(&hash) {
                return *number;
            }
            let number = numbers.len() as u64;
            numbers.insert(hash, number);
            let mut entry = json!({ "n": number, "hash": format!("{hash:016x}") });
            match sent.bodies.get(&hash) {
                Some(SentPart::System(text)) => {
                    entry["shown"] = json!("system");
                    entry["body"] = cut_texts(json!({ "role": "system", "text": text }));
                }
                Some(SentPart::Message(message)) => {
                    by_content.entry(content_hash(message)).or_insert(number);
                    if let Some((class, original)) = originals.as_ref().map(|o| o.class(message)) {
                        entry["shown"] = json!(class);
                        if let Some(of) = original.and_then(|hash| by_content.get(&hash)) {
                            entry["of"] = json!(of);
                        }
                    }
                    entry["body"] = serde_json::to_value(message).map_or(Value::Null, cut_texts);
                }
                None => {}
            }
            first_seen.push(entry);
            number
        };
        let sent_here: Vec<u64> = hashes.iter().map(|hash| number_of(*hash, &mut first_seen)).collect();
        step.reply_message = sent.replies.get(index).copied().flatten().map(|hash| number_of(hash, &mut first_seen));
        step.sent_messages = Some(reloop_text::ranges::write(&sent_here));
        step.messages_first_seen = (!first_seen.is_empty()).then(|| compact_json(&Value::Array(first_seen)));
    }
}

/// `body` with each text longer than [`BODY_CHARS`] cut, saying how many
/// bytes were left out ([`reloop_text::cut`], as the viewer cuts). In place:
/// rebuilding every object and array around the few long texts was a
/// third of these columns' cost.
fn cut_texts(mut body: Value) -> Value {
    cut_in_place(&mut body);
    body
}

fn cut_in_place(body: &mut Value) {
    match body {
        Value::String(text) => {
            if let Cow::Owned(cut) = reloop_text::cut(text, BODY_CHARS) {
                *text = cut;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(cut_in_place),
        Value::Object(fields) => fields.values_mut().for_each(cut_in_place),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;

    fn result(id: &str, content: &str) -> Message {
        Message::ToolResult { call_id: id.into(), tool_name: "read".into(), content: content.into(), is_error: false }
    }

    fn call(id: &str) -> Message {
        Message::Assistant { text: "".into(), tool_calls: vec![ToolCall { id: id.into(), name: "read".into(), arguments: "{}".into() }], reasoning: vec![] }
    }

    /// A log of `requests`, each a list of parts, hashed by position in `parts`.
    fn log(parts: &[SentPart], requests: &[&[usize]], replies: &[Option<usize>]) -> SentLog {
        SentLog {
            requests: requests.iter().map(|r| r.iter().map(|i| *i as u64 + 100).collect()).collect(),
            replies: replies.iter().map(|r| r.map(|i| i as u64 + 100)).collect(),
            bodies: parts.iter().enumerate().map(|(i, part)| (i as u64 + 100, part.clone())).collect(),
        }
    }

    #[test]
    fn each_message_is_written_once_and_masked_and_compacted_ones_are_named() {
        let mut state = LoopState::new("task", 10);
        state.transcript = vec![Message::user("task"), call("c1"), result("c1", "fn main() {}")];
        let parts = [
            SentPart::System("sys".into()),
            SentPart::Message(Message::user("task")),
            SentPart::Message(call("c1")),
            SentPart::Message(result("c1", "fn main() {}")),
            SentPart::Message(result("c1", "[masked: read, 12 bytes]")),
            SentPart::Message(Message::user("summary of the work so far")),
        ];
        let sent = log(&parts, &[&[0, 1], &[0, 1, 2, 3], &[0, 5, 2, 4]], &[Some(2), None, None]);
        let mut steps: Vec<StepRow> = (0..3).map(|i| StepRow { call_index: i, ..StepRow::default() }).collect();
        fill(&mut steps, &sent, Some((&state, Format::OpenaiChat)));
        assert_eq!(steps[0].sent_messages.as_deref(), Some("0-1"));
        assert_eq!(steps[0].reply_message, Some(2), "the reply is numbered where it was received");
        assert_eq!(steps[1].sent_messages.as_deref(), Some("0-3"));
        assert_eq!(steps[2].sent_messages.as_deref(), Some("0,4,2,5"));
        let first: Vec<Value> = serde_json::from_str(steps[0].messages_first_seen.as_deref().unwrap()).unwrap();
        assert_eq!(first.iter().map(|m| m["shown"].as_str().unwrap()).collect::<Vec<_>>(), ["system", "original", "original"]);
        assert_eq!(first[0]["body"], json!({ "role": "system", "text": "sys" }));
        let second: Vec<Value> = serde_json::from_str(steps[1].messages_first_seen.as_deref().unwrap()).unwrap();
        assert_eq!(second.len(), 1, "only the tool result is new at the second call");
        let third: Vec<Value> = serde_json::from_str(steps[2].messages_first_seen.as_deref().unwrap()).unwrap();
        assert_eq!((third[0]["n"].as_u64(), third[0]["shown"].as_str()), (Some(4), Some("compacted")));
        assert_eq!((third[1]["n"].as_u64(), third[1]["shown"].as_str()), (Some(5), Some("masked")));
        assert_eq!(third[1]["of"], 3, "the masked result names the original it stands for");
        assert_eq!(third[1]["body"]["content"], "[masked: read, 12 bytes]");
    }

    /// What the run's wire cannot carry is no edit: Chat has no flag for a
    /// failed result, and Anthropic sends arguments that are no JSON object
    /// wrapped in one; the same message over a wire that carries the flag
    /// differs from the transcript.
    #[test]
    fn a_message_is_compared_with_the_transcript_as_its_wire_carries_it() {
        let failed = |is_error| Message::ToolResult { call_id: "c1".into(), tool_name: "read".into(), content: "not JSON".into(), is_error };
        let truncated = |arguments: &str| Message::Assistant {
            text: "".into(),
            tool_calls: vec![ToolCall { id: "c1".into(), name: "read".into(), arguments: arguments.into() }],
            reasoning: vec![],
        };
        let mut state = LoopState::new("task", 10);
        state.transcript = vec![Message::user("task"), truncated(r#"{"path": "sr"#), failed(true)];
        let shown = |wire: Format, sent: [Message; 2]| {
            let parts: Vec<SentPart> = sent.into_iter().map(SentPart::Message).collect();
            let mut steps = vec![StepRow::default()];
            fill(&mut steps, &log(&parts, &[&[0, 1]], &[None]), Some((&state, wire)));
            let first: Vec<Value> = serde_json::from_str(steps[0].messages_first_seen.as_deref().unwrap()).unwrap();
            first.iter().map(|m| m["shown"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
        };
        assert_eq!(shown(Format::OpenaiChat, [truncated(r#"{"path": "sr"#), failed(false)]), ["original", "original"]);
        assert_eq!(shown(Format::Anthropic, [truncated(r#"{"_raw":"{\"path\": \"sr"}"#), failed(true)]), ["original", "original"]);
        assert_eq!(shown(Format::Anthropic, [truncated(r#"{"_raw":"{\"path\": \"sr"}"#), failed(false)]), ["original", "masked"]);
    }

    #[test]
    fn a_black_box_agents_messages_go_unclassed() {
        let sent = log(&[SentPart::Message(Message::user("hi"))], &[&[0]], &[None]);
        let mut steps = vec![StepRow::default()];
        fill(&mut steps, &sent, None);
        let first: Vec<Value> = serde_json::from_str(steps[0].messages_first_seen.as_deref().unwrap()).unwrap();
        assert_eq!(first[0].get("shown"), None);
    }

    #[test]
    fn long_texts_of_a_body_are_cut_and_say_how_much() {
        let body = cut_texts(json!({ "role": "tool_result", "content": "x".repeat(BODY_CHARS + 5), "is_error": false }));
        assert_eq!(body["content"], format!("{}… (5 more bytes)", "x".repeat(BODY_CHARS)));
        assert_eq!(body["is_error"], false);
        let long = "y".repeat(BODY_CHARS + 2);
        let nested = cut_texts(json!({ "tool_calls": [{ "id": "c", "arguments": long }], "reasoning": [[long]] }));
        let cut = format!("{}… (2 more bytes)", "y".repeat(BODY_CHARS));
        assert_eq!(nested, json!({ "tool_calls": [{ "id": "c", "arguments": cut }], "reasoning": [[cut]] }));
    }
}
