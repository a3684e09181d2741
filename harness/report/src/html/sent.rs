//! The messages the viewer shows as sent: the steps table's
//! `messages_first_seen` bodies of every run, kept once in one page-wide
//! table (the runs of a sweep send the same task and tool results under
//! each strategy), which a run's data points into by number. The report
//! already cut each body's texts, so none is cut here.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

/// The page's messages, each once: `[role, class, text, original]`.
#[derive(Default)]
pub(super) struct Messages {
    entries: Vec<Value>,
    index: HashMap<String, usize>,
}

impl Messages {
    /// The page-wide index of each of a run's messages, by the run's
    /// number, from its rows' `messages_first_seen` in call order; an
    /// unreadable cell (a hand-edited report) leaves its messages out.
    pub(super) fn add_run<'a>(&mut self, first_seen: impl Iterator<Item = Option<&'a str>>) -> Vec<Option<usize>> {
        let mut by_number: Vec<Option<usize>> = Vec::new();
        for cell in first_seen.flatten() {
            let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(cell) else { continue };
            for entry in entries {
                // A run numbers its messages densely in the order they were
                // first seen; a number far past them (a hand-edited report)
                // is skipped rather than allocated for.
                let Some(number) = entry["n"].as_u64().map(|n| n as usize).filter(|&n| n <= by_number.len() + MAX_NUMBER_GAP) else { continue };
                let original = entry["of"].as_u64().and_then(|of| by_number.get(of as usize).copied().flatten());
                let shown = [
                    json!(entry["body"]["role"].as_str().unwrap_or("?")),
                    json!(entry["shown"].as_str().unwrap_or("")),
                    json!(text_of(&entry["body"])),
                    json!(original),
                ];
                let key = Value::from(shown.to_vec()).to_string();
                let next = self.entries.len();
                let at = *self.index.entry(key).or_insert(next);
                if at == next {
                    self.entries.push(Value::from(shown.to_vec()));
                }
                if by_number.len() <= number {
                    by_number.resize(number + 1, None);
                }
                by_number[number] = Some(at);
            }
        }
        by_number
    }

    /// The table as one inert script element, parsed when a run is first opened.
    pub(super) fn write(&self, html: &mut String) {
        let _ = write!(html, r#"<script type="application/json" id="messages">{}</script>"#, super::script_json(&Value::from(self.entries.clone())));
    }
}

/// A run's calls' `sent_messages` as the page keeps them: the history
/// repeats, so each list is the length of its common start with the
/// previous list of its kind (main or compaction calls), then the rest as
/// ranges: `41|57,43-56`. Calls are taken in the order the viewer reads them.
#[derive(Default)]
pub(super) struct SentLists {
    previous: HashMap<bool, Vec<u64>>,
}

impl SentLists {
    pub(super) fn shorten(&mut self, call: &mut Value) {
        let Some(numbers) = call["sent_messages"].as_str().map(numbers) else { return };
        let previous = self.previous.insert(call["purpose"] == "compaction", numbers.clone()).unwrap_or_default();
        let common = previous.iter().zip(&numbers).take_while(|(before, now)| before == now).count();
        call["sent_messages"] = json!(format!("{common}|{}", reloop_text::ranges::write(&numbers[common..])));
    }
}

/// How far past the numbers seen so far a message's number may be, and how
/// long one range may be: reloop writes neither anywhere near this, so a
/// larger one is a hand-edited report, skipped instead of allocated for.
const MAX_NUMBER_GAP: usize = 1 << 20;

/// The numbers of `0-3,9`; an absurdly long range (a hand-edited report)
/// is skipped.
fn numbers(ranges: &str) -> Vec<u64> {
    reloop_text::ranges::read(ranges).filter(|range| range.end() - range.start() <= MAX_NUMBER_GAP as u64).flatten().collect()
}

/// A message body (the wire's `Message` as JSON, or `{role: system, text}`)
/// as the viewer shows it: the text; an assistant turn's reasoning first and
/// its tool calls after; a tool result with its tool and call id.
fn text_of(body: &Value) -> String {
    let field = |name: &str| body[name].as_str().unwrap_or_default();
    match field("role") {
        "assistant" => {
            let mut lines: Vec<String> = Vec::new();
            for reasoning in body["reasoning"].as_array().into_iter().flatten() {
                let summary = || reasoning["summary"].as_array().map(|s| s.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "));
                let text = reasoning["thinking"].as_str().or(reasoning["text"].as_str()).map(str::to_owned).or_else(summary);
                lines.push(format!("[reasoning] {}", text.filter(|t| !t.is_empty()).as_deref().unwrap_or("(encrypted)")));
            }
            if !field("text").is_empty() {
                lines.push(field("text").to_owned());
            }
            for call in body["tool_calls"].as_array().into_iter().flatten() {
                let part = |name: &str| call[name].as_str().unwrap_or_default().to_owned();
                lines.push(format!("→ {}({}) [{}]", part("name"), part("arguments"), part("id")));
            }
            lines.join("\n")
        }
        "tool_result" => {
            let error = if body["is_error"].as_bool() == Some(true) { " error" } else { "" };
            format!("[{} {}{error}] {}", field("tool_name"), field("call_id"), field("content"))
        }
        _ => field("text").to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_sending_the_same_messages_share_them_and_a_masked_one_points_to_its_original() {
        let mut messages = Messages::default();
        let cells = [
            Some(
                r#"[{"n":0,"shown":"system","body":{"role":"system","text":"sys"}},{"n":1,"shown":"original","body":{"role":"tool_result","call_id":"c1","tool_name":"read","content":"fn main() {}","is_error":false}}]"#,
            ),
            None,
            Some(r#"[{"n":2,"shown":"masked","of":1,"body":{"role":"tool_result","call_id":"c1","tool_name":"read","content":"[masked]","is_error":false}}]"#),
        ];
        let first = messages.add_run(cells.into_iter());
        let second = messages.add_run(cells.into_iter());
        assert_eq!(first, vec![Some(0), Some(1), Some(2)]);
        assert_eq!(second, first, "a second run sending the same messages adds none");
        assert_eq!(messages.entries[1], json!(["tool_result", "original", "[read c1] fn main() {}", null]));
        assert_eq!(messages.entries[2], json!(["tool_result", "masked", "[read c1] [masked]", 1]));
    }

    #[test]
    fn absurd_numbers_of_a_hand_edited_report_are_skipped_not_allocated() {
        assert_eq!(numbers("0-18446744073709551615,3,9-2"), [3], "an endless or reversed range is skipped");
        let mut messages = Messages::default();
        let cell =
            r#"[{"n":0,"shown":"system","body":{"role":"system","text":"s"}},{"n":1000000000000000000,"shown":"original","body":{"role":"user","text":"u"}}]"#;
        assert_eq!(messages.add_run([Some(cell)].into_iter()), vec![Some(0)]);
    }

    #[test]
    fn a_call_keeps_only_what_differs_from_the_previous_call_of_its_kind() {
        let mut lists = SentLists::default();
        let mut calls = [
            json!({ "purpose": "main", "sent_messages": "0-3" }),
            json!({ "purpose": "compaction", "sent_messages": "0-3,5" }),
            json!({ "purpose": "main", "sent_messages": "0-3,6-8" }),
            json!({ "purpose": "main", "sent_messages": "0,9,2-3,6-8,10" }),
        ];
        calls.iter_mut().for_each(|call| lists.shorten(call));
        let shortened: Vec<&str> = calls.iter().map(|call| call["sent_messages"].as_str().unwrap()).collect();
        assert_eq!(shortened, ["0|0-3", "0|0-3,5", "4|6-8", "1|9,2-3,6-8,10"]);
        assert_eq!(numbers("0,9,2-3,x-1"), [0, 9, 2, 3]);
    }

    #[test]
    fn an_assistant_turn_shows_its_reasoning_text_and_calls() {
        let body = json!({ "role": "assistant", "text": "Reading.", "reasoning": [{ "type": "reasoning_content", "text": "look first" }],
                           "tool_calls": [{ "id": "c1", "name": "read", "arguments": "{\"path\":\"a\"}" }] });
        assert_eq!(text_of(&body), "[reasoning] look first\nReading.\n→ read({\"path\":\"a\"}) [c1]");
    }
}
