//! Why a simulated cache break happened: where the request first differs
//! from the one whose cache it lost, to the byte, and what kind of change
//! that is. The simulation ([`crate::replay::cache_sim`], [`crate::replay::anthropic_cache`])
//! only says *that* the previous prefix was not reused; a break is fixed by
//! naming the bytes that moved (a timestamp in the system prompt, a masked
//! tool result), so each one is explained here, against the request itself.
//!
//! The request a break is explained against is the one just before, which
//! held the lost prefix, unless that one belongs to another conversation:
//! a main call that follows a summary request (which declares other tools,
//! or none) is compared with the last request declaring its own tools, the
//! main call before the summary, where the history was rewritten. A request
//! declaring no tools (a summary, a side question) is always compared with
//! the one just before, whose tools it dropped.

use std::collections::HashMap;

use reloop_wire::{Message, Prompt, ToolSpec};
use serde::Serialize;

use crate::replay::tokens::content_hash;

/// The causes a break is classified by, in the order the columns list them
/// (`docs/cache-breaks.md` says what each means and what to do about it).
/// `edited`, `inserted` and `removed` are the request's own view; the report
/// adds which compaction layer, masking pass or strategy made the edit.
pub const CAUSES: [&str; 10] = ["tools", "system", "model", "edited", "inserted", "removed", "breakpoint", "ttl", "min_length", "history"];

/// Longest excerpt of either side of a differing span.
const SPAN_CHARS: usize = 48;

/// Where and why a request lost the cache of the one before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BreakSite {
    /// One of [`CAUSES`].
    pub cause: &'static str,
    /// The request message where the two first differ (system excluded);
    /// `None` when the tools or the system prompt differ, or nothing does.
    pub message: Option<u64>,
    /// `tools`, `system`, or the role of that message (`user`, `assistant`,
    /// `tool_result`); empty when the requests do not differ.
    pub role: &'static str,
    /// The part of it that differs: `text`, `content`, `tool_calls[1].arguments`,
    /// `reasoning[0]`, `role` (another kind of message), `tools[3]`,
    /// `system`; empty when nothing differs or a message is missing.
    pub block: String,
    /// Byte offset of the first differing byte within that block.
    pub byte_offset: Option<u64>,
    /// The differing span, `before → after`, widened to whole words and cut
    /// to a few dozen characters a side.
    pub span: Option<String>,
    /// The tokens of the previous request's cached prefix this one did not read.
    pub lost_tokens: u64,
}

/// What the explanation needs besides the two requests.
#[derive(Debug, Clone, Copy)]
pub struct BreakFacts {
    /// Tokens of the lost prefix.
    pub lost_tokens: u64,
    /// Anthropic: an entry the request would have read had expired.
    pub expired: bool,
    /// The request's longest marked or cacheable prefix is below the model's minimum.
    pub below_minimum: bool,
}

/// The earlier requests breaks are explained against, by tool declarations.
/// Each is a copy that the next request declaring the same tools updates in
/// place ([`update`]): copying every request whole, its history included,
/// was 4 % of a replay's instructions.
#[derive(Debug, Default)]
pub struct Baselines {
    by_tools: HashMap<u64, Prompt>,
    /// The tools key of the request just before.
    last: Option<u64>,
}

impl Baselines {
    /// Explains a break of `request` (when `facts` is given), then keeps it
    /// as the baseline of its conversation; `tools_json` is its tool
    /// declarations as counted.
    pub fn observe(&mut self, request: &Prompt, tools_json: &str, facts: Option<BreakFacts>) -> Option<BreakSite> {
        let tools = content_hash(&tools_json);
        let site = facts.and_then(|facts| {
            let own = self.by_tools.get(&tools).filter(|_| !request.tools.is_empty());
            let baseline = own.or_else(|| self.by_tools.get(&self.last?))?;
            Some(explain(baseline, request, facts))
        });
        match self.by_tools.get_mut(&tools) {
            Some(kept) => update(kept, request),
            None => {
                self.by_tools.insert(tools, request.clone());
            }
        }
        self.last = Some(tools);
        site
    }
}

/// Makes `kept` equal to `request`, copying only the messages past the
/// prefix the two share (found by comparing, which costs no allocation)
/// and the fields that differ. The tools are left as they are: `kept` is
/// the baseline kept under the content hash of these very tools, and
/// comparing every schema again each request took a third of this.
fn update(kept: &mut Prompt, request: &Prompt) {
    let Prompt { model, system, messages, tools: _, tool_choice, max_output_tokens, stream, include_usage, context_management } = request;
    let shared = kept.messages.iter().zip(messages).take_while(|(old, new)| old == new).count();
    kept.messages.truncate(shared);
    kept.messages.extend_from_slice(&messages[shared..]);
    kept.model.clone_from(model);
    kept.system.clone_from(system);
    kept.tool_choice.clone_from(tool_choice);
    kept.context_management.clone_from(context_management);
    (kept.max_output_tokens, kept.stream, kept.include_usage) = (*max_output_tokens, *stream, *include_usage);
}

/// One part of a request in cache order.
#[derive(Clone, Copy, PartialEq)]
enum Part<'a> {
    Tools(&'a [ToolSpec]),
    System(&'a str),
    Message(&'a Message),
}

fn parts(request: &Prompt) -> Vec<Part<'_>> {
    let head = [Some(Part::Tools(&request.tools)), request.system.as_deref().map(Part::System)];
    head.into_iter().flatten().chain(request.messages.iter().map(Part::Message)).collect()
}

/// Classifies the break of `request` against `baseline`.
pub fn explain(baseline: &Prompt, request: &Prompt, facts: BreakFacts) -> BreakSite {
    let site = |cause, role, message: Option<usize>| BreakSite {
        cause,
        message: message.map(|m| m as u64),
        role,
        block: String::new(),
        byte_offset: None,
        span: None,
        lost_tokens: facts.lost_tokens,
    };
    if baseline.model != request.model {
        return site("model", "", None);
    }
    // An expired entry held an unchanged prefix (its key is the chained hash
    // of everything before it): the first loss in prefix order, before any edit.
    if facts.expired {
        return site("ttl", "", None);
    }
    let (old, new) = (parts(baseline), parts(request));
    let Some(at) = old.iter().zip(&new).position(|(a, b)| a != b).or((new.len() < old.len()).then_some(new.len())) else {
        let cause = if facts.below_minimum {
            "min_length"
        } else if facts.lost_tokens > 0 {
            "breakpoint"
        } else {
            "history"
        };
        return site(cause, "", None);
    };
    let first_message = usize::from(baseline.system.is_some()) + 1;
    let message = at.checked_sub(first_message);
    match (old[at], new.get(at).copied()) {
        (Part::Tools(a), Some(Part::Tools(b))) => BreakSite { block: tool_block(a, b), ..site("tools", "tools", None) },
        (Part::System(a), Some(Part::System(b))) => with_span(site("system", "system", None), "system", a, b),
        (Part::Message(a), Some(Part::Message(b))) => {
            let cause = if new[at + 1..].contains(&old[at]) {
                "inserted"
            } else if old[at + 1..].contains(&new[at]) {
                "removed"
            } else {
                "edited"
            };
            let (block, before, after) = differing_block(a, b);
            with_span(site(cause, role(b), message), &block, &before, &after)
        }
        // The request ends where the baseline went on: messages dropped at the end.
        (Part::Message(a), None) => site("removed", role(a), message),
        // A system prompt added or dropped.
        (Part::System(_), _) | (_, Some(Part::System(_))) => site("system", "system", None),
        _ => site("history", "", message),
    }
}

fn role(message: &Message) -> &'static str {
    match message {
        Message::User { .. } => "user",
        Message::Assistant { .. } => "assistant",
        Message::ToolResult { .. } => "tool_result",
    }
}

/// The first tool declaration that differs, as `tools[i]`.
fn tool_block(a: &[ToolSpec], b: &[ToolSpec]) -> String {
    let index = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    format!("tools[{index}]")
}

/// The first differing block of two messages and both sides' text of it.
fn differing_block(a: &Message, b: &Message) -> (String, String, String) {
    let blocks = |message: &Message| -> Vec<(String, String)> {
        match message {
            Message::User { text } => vec![("text".to_owned(), text.to_string())],
            Message::ToolResult { call_id, content, .. } => {
                vec![("call_id".to_owned(), call_id.to_string()), ("content".to_owned(), content.to_string())]
            }
            Message::Assistant { text, tool_calls, reasoning } => {
                let reasoning = reasoning.iter().enumerate().map(|(i, r)| (format!("reasoning[{i}]"), serde_json::to_string(r).unwrap_or_default()));
                let calls = tool_calls.iter().enumerate().flat_map(|(i, call)| {
                    [(format!("tool_calls[{i}].name"), call.name.to_string()), (format!("tool_calls[{i}].arguments"), call.arguments.to_string())]
                });
                std::iter::once(("text".to_owned(), text.to_string())).chain(reasoning).chain(calls).collect()
            }
        }
    };
    if std::mem::discriminant(a) != std::mem::discriminant(b) {
        return ("role".to_owned(), role(a).to_owned(), role(b).to_owned());
    }
    let (old, new) = (blocks(a), blocks(b));
    let empty = (String::new(), String::new());
    let at = old.iter().zip(&new).position(|(x, y)| x != y).unwrap_or(old.len().min(new.len()));
    let (name, before) = old.get(at).unwrap_or(&empty);
    let (other, after) = new.get(at).unwrap_or(&empty);
    (if name.is_empty() { other.clone() } else { name.clone() }, before.clone(), after.clone())
}

/// `site` with the block named and the first differing byte and span of `before` and `after`.
fn with_span(site: BreakSite, block: &str, before: &str, after: &str) -> BreakSite {
    let start = common_prefix(before, after);
    let end_trim = common_suffix(&before[start..], &after[start..]);
    let widen_left = before[..start].char_indices().rev().take_while(|(_, c)| !c.is_whitespace()).last().map_or(start, |(i, _)| i);
    let (old_end, new_end) = (before.len() - end_trim, after.len() - end_trim);
    let widen_right = |text: &str, end: usize| text[end..].find(char::is_whitespace).map_or(text.len(), |i| end + i);
    let excerpt = |text: &str, end: usize| -> String {
        let span = &text[widen_left..widen_right(text, end).max(widen_left)];
        let cut: String = span.chars().take(SPAN_CHARS).collect();
        if cut.len() < span.len() { format!("{cut}…") } else { cut }
    };
    let span = format!("{:?} → {:?}", excerpt(before, old_end), excerpt(after, new_end));
    BreakSite { block: block.to_owned(), byte_offset: Some(start as u64), span: Some(span), ..site }
}

/// Bytes the two share at the start, on a character boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices().zip(b.chars()).find(|((_, x), y)| x != y).map_or(a.len().min(b.len()), |((i, _), _)| i)
}

/// Bytes the two share at the end, on a character boundary.
fn common_suffix(a: &str, b: &str) -> usize {
    a.chars().rev().zip(b.chars().rev()).take_while(|(x, y)| x == y).map(|(x, _)| x.len_utf8()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(system: &str, messages: Vec<Message>) -> Prompt {
        Prompt { model: "m".into(), system: Some(system.into()), messages, ..Prompt::default() }
    }

    const FACTS: BreakFacts = BreakFacts { lost_tokens: 1_500, expired: false, below_minimum: false };

    #[test]
    fn a_changed_timestamp_in_the_system_prompt_is_named_with_its_span() {
        let before = prompt("You are helpful. Now: 2026-11-27T01:00:00Z. Be brief.", vec![Message::user("hi")]);
        let after = prompt("You are helpful. Now: 2026-11-27T01:05:00Z. Be brief.", vec![Message::user("hi")]);
        let site = explain(&before, &after, FACTS);
        assert_eq!((site.cause, site.role, site.block.as_str()), ("system", "system", "system"));
        assert_eq!(site.byte_offset, Some(37), "the first differing digit");
        assert_eq!(site.span.as_deref(), Some("\"2026-11-27T01:00:00Z.\" → \"2026-11-27T01:05:00Z.\""));
        assert_eq!(site.lost_tokens, 1_500);
    }

    #[test]
    fn a_masked_tool_result_is_an_edit_at_its_message_and_block() {
        let result = |content: &str| Message::ToolResult { call_id: "c1".into(), tool_name: "read".into(), content: content.into(), is_error: false };
        let before = prompt("s", vec![Message::user("task"), result("fn main() {}"), Message::user("next")]);
        let after = prompt("s", vec![Message::user("task"), result("[output cleared]"), Message::user("next"), Message::user("more")]);
        let site = explain(&before, &after, FACTS);
        assert_eq!((site.cause, site.message, site.role, site.block.as_str(), site.byte_offset), ("edited", Some(1), "tool_result", "content", Some(0)));
    }

    #[test]
    fn insertions_removals_tools_model_and_unchanged_prefixes_are_told_apart() {
        let (a, b, c) = (Message::user("a"), Message::user("b"), Message::user("c"));
        let base = prompt("s", vec![a.clone(), b.clone(), c.clone()]);
        assert_eq!(explain(&base, &prompt("s", vec![a.clone(), Message::user("x"), b.clone(), c.clone()]), FACTS).cause, "inserted");
        assert_eq!(explain(&base, &prompt("s", vec![a.clone(), c.clone()]), FACTS).cause, "removed");
        assert_eq!(explain(&base, &prompt("s", vec![a.clone()]), FACTS).cause, "removed");
        let tool = ToolSpec { name: "read".into(), description: "Read".into(), parameters: serde_json::Value::Null };
        let with_tools = Prompt { tools: vec![tool], ..base.clone() };
        let site = explain(&base, &with_tools, FACTS);
        assert_eq!((site.cause, site.block.as_str()), ("tools", "tools[0]"));
        assert_eq!(explain(&base, &Prompt { model: "other".into(), ..base.clone() }, FACTS).cause, "model");
        assert_eq!(explain(&base, &base, BreakFacts { expired: true, ..FACTS }).cause, "ttl");
        let edited = prompt("s", vec![Message::user("A"), b.clone(), c.clone()]);
        assert_eq!(explain(&base, &edited, BreakFacts { expired: true, ..FACTS }).cause, "ttl", "an expired entry comes first in the prefix");
        assert_eq!(explain(&base, &base, BreakFacts { below_minimum: true, ..FACTS }).cause, "min_length");
        assert_eq!(explain(&base, &base, FACTS).cause, "breakpoint");
    }

    #[test]
    fn a_break_is_explained_against_the_last_request_of_its_conversation() {
        let tool = ToolSpec { name: "read".into(), description: "Read".into(), parameters: serde_json::Value::Null };
        let main = |messages| Prompt { tools: vec![tool.clone()], ..prompt("s", messages) };
        let mut baselines = Baselines::default();
        assert_eq!(baselines.observe(&main(vec![Message::user("a"), Message::user("b")]), "read", Some(FACTS)), None, "nothing to compare with");
        let summary = baselines.observe(&prompt("summarize", vec![Message::user("a")]), "", Some(FACTS)).unwrap();
        assert_eq!(summary.cause, "tools");
        baselines.observe(&main(vec![Message::user("summary"), Message::user("b")]), "read", None);
        let again = baselines.observe(&prompt("summarize", vec![Message::user("summary")]), "", Some(FACTS)).unwrap();
        assert_eq!(again.cause, "tools", "against the main call before it, not the earlier summary");
        let after = baselines.observe(&main(vec![Message::user("summary 2"), Message::user("b")]), "read", Some(FACTS)).unwrap();
        assert_eq!((after.cause, after.message), ("edited", Some(0)), "against the main call before the summary");
    }

    /// A baseline updated in place is the request it was updated to, however
    /// that request differs from it: grown, edited mid-history, cut short,
    /// another system prompt, model or limit.
    #[test]
    fn a_baseline_updated_in_place_equals_the_request() {
        let (a, b, c) = (Message::user("a"), Message::user("b"), Message::user("c"));
        let requests = [
            prompt("s", vec![a.clone()]),
            prompt("s", vec![a.clone(), b.clone(), c.clone()]),
            prompt("s", vec![a.clone(), Message::user("B"), c.clone()]),
            prompt("s", vec![a.clone()]),
            Prompt { model: "other".into(), max_output_tokens: Some(9), stream: true, ..prompt("t", vec![b.clone(), a.clone()]) },
            Prompt { system: None, ..prompt("s", vec![b, a, c]) },
        ];
        let mut baselines = Baselines::default();
        for request in &requests {
            baselines.observe(request, "", Some(FACTS));
            assert_eq!(baselines.by_tools[&content_hash(&"")], *request);
        }
    }
}
