//! The span rules of the retention figures (`docs/metrics.md`, "Retention"):
//! which tokens of an action are candidates for a reference, and where a
//! span occurs in a text.
//!
//! A text is cut into *runs*: maximal runs of token characters, which are
//! the atom characters (letters, digits, `_`) and the joiners `-`, `.`,
//! `/`, `:`. A run trimmed of its joiners at both ends (a leading `/` or
//! `../` kept) is a *token*. A span *occurs* in a
//! text where it is a substring flanked by no atom character on either
//! side: `main.rs` occurs in `src/main.rs:42:`, `42` too, and neither
//! occurs in `main.rsx` or `x42`. [`SpanTable::find_in`] finds every span
//! of a run's table in a text in one pass over the text.

use std::collections::HashMap;

use reloop_wire::Message;
use serde_json::Value;

/// Longest span, in bytes: longer tokens (encoded blobs, minified code) are
/// no reference a model copies by hand, and the bound keeps
/// [`SpanTable::find_in`] linear in the text.
pub const MAX_SPAN_BYTES: usize = 128;

/// Part of a token that is not an atom.
fn is_joiner(c: char) -> bool {
    matches!(c, '-' | '.' | '/' | ':')
}

/// Letters, digits and `_`: what a span may not be flanked by.
fn is_atom(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_token_char(c: char) -> bool {
    is_atom(c) || is_joiner(c)
}

/// How [`SpanTable::find_in`] classes a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Not a token character: it ends a run.
    Separator,
    /// A letter, digit or `_`.
    Atom,
    /// One of [`is_joiner`]'s: a span may start after it or end at it.
    Joiner,
}

impl Class {
    fn of(c: char) -> Self {
        if is_joiner(c) {
            Self::Joiner
        } else if is_atom(c) {
            Self::Atom
        } else {
            Self::Separator
        }
    }
}

/// [`Class::of`] each ASCII byte: [`SpanTable::find_in`] classes a byte
/// with one lookup, which counts over long tool outputs.
const ASCII_CLASSES: [Class; 128] = {
    let mut table = [Class::Separator; 128];
    let mut byte = 0;
    while byte < 128 {
        let c = byte as u8;
        table[byte] = match c {
            b'-' | b'.' | b'/' | b':' => Class::Joiner,
            b'_' => Class::Atom,
            _ if c.is_ascii_alphanumeric() => Class::Atom,
            _ => Class::Separator,
        };
        byte += 1;
    }
    table
};

/// The class of the character at byte `at` of `text`, and its width;
/// `None` at the end. An ASCII byte is classed by [`ASCII_CLASSES`], and
/// only a non-ASCII character is decoded.
fn class_at(text: &str, at: usize) -> Option<(Class, usize)> {
    match *text.as_bytes().get(at)? {
        byte @ 0..0x80 => Some((ASCII_CLASSES[usize::from(byte)], 1)),
        _ => text[at..].chars().next().map(|c| (Class::of(c), c.len_utf8())),
    }
}

/// The maximal runs of token characters of `text`, as byte ranges.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_token_char(c)).filter(|run| !run.is_empty())
}

/// A run trimmed to its token: joiners off both ends, but a leading `/`
/// (an absolute path) or `../` stays, and a leading `./` goes (`./src/x`
/// and `src/x` name one file). A leading `.` goes too: in code it starts a
/// method chain (`.try_init()`) far more often than a dotfile is named
/// alone, and `try_init` then occurs in `builder.try_init()` as well.
/// `None` when no atom is left.
pub fn token(run: &str) -> Option<&str> {
    let mut token = run.trim_end_matches(is_joiner);
    while let Some(rest) = token.strip_prefix("./") {
        token = rest;
    }
    let keep_lead = token.starts_with('/') || token.starts_with("../");
    if !keep_lead {
        token = token.trim_start_matches(is_joiner);
    }
    token.contains(is_atom).then_some(token)
}

/// Whether `token` is a span: a number of two digits or more, a path (it
/// holds a `/`), or an identifier of three characters or
/// more with a distinguishing mark: `_`, a digit, a capital after its
/// first character, or a joiner inside. Plain words (`error`, `Ledger`)
/// are not: they recur in the task, the prompts and the model's prose, so
/// their first appearance in a tool result says nothing of where the model
/// took them from.
pub fn is_span(token: &str) -> bool {
    if token.len() > MAX_SPAN_BYTES {
        return false;
    }
    let digits = token.chars().filter(char::is_ascii_digit).count();
    if token.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return digits >= 2;
    }
    if token.contains('/') && token.chars().count() >= 3 {
        return true;
    }
    let chars: Vec<char> = token.chars().collect();
    if chars.len() < 3 {
        return false;
    }
    let inner = &chars[1..chars.len() - 1];
    token.contains('_') || digits > 0 || chars[1..].iter().any(|c| c.is_uppercase()) || inner.iter().any(|c| is_joiner(*c))
}

/// The spans of a free text: its tokens that are spans, and the content of
/// each quoted string (`"…"`, `'…'`, `` `…` ``) that is a single token of
/// three characters or more, even a plain word: quoting says the writer
/// means that exact string (`grep "timeout"`). A quoted string of several
/// words adds nothing beyond its own tokens. Each span once, in order.
pub fn text_spans(text: &str, out: &mut Vec<String>) {
    let mut push = |span: &str| {
        if !out.iter().any(|known| known == span) {
            out.push(span.to_owned());
        }
    };
    for run in runs(text) {
        if let Some(token) = token(run).filter(|t| is_span(t)) {
            push(token);
        }
    }
    for quote in ['"', '\'', '`'] {
        let mut pieces = text.split(quote).skip(1).step_by(2);
        // `split` alternates outside and inside; an unclosed quote's tail is no quoted string.
        let closed = text.matches(quote).count() / 2;
        for content in pieces.by_ref().take(closed) {
            let whole = content.chars().all(is_token_char);
            if let Some(token) = token(content).filter(|t| whole && t.len() == content.len() && t.chars().count() >= 3 && t.len() <= MAX_SPAN_BYTES) {
                push(token);
            }
        }
    }
}

/// The texts of a tool call's arguments: every string value of its JSON
/// (keys are the tool's vocabulary, not the model's data) and every
/// number, as written; the raw text when it is not JSON.
pub fn argument_texts(arguments: &str) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(text) => out.push(text.clone()),
            Value::Number(number) => out.push(number.to_string()),
            Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
            Value::Object(fields) => fields.values().for_each(|item| walk(item, out)),
            Value::Bool(_) | Value::Null => {}
        }
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(value) => {
            let mut out = Vec::new();
            walk(&value, &mut out);
            out
        }
        Err(_) => vec![arguments.to_owned()],
    }
}

/// The spans of a reply's action: its tool calls' arguments, or, when it
/// calls no tool, its text (the final answer). A reply's prose beside its
/// tool calls is commentary, not an action.
pub fn action_spans(reply: &Message) -> Vec<String> {
    let mut spans = Vec::new();
    if let Message::Assistant { text, tool_calls, .. } = reply {
        if tool_calls.is_empty() {
            text_spans(text, &mut spans);
        }
        for call in tool_calls {
            for value in argument_texts(&call.arguments) {
                text_spans(&value, &mut spans);
            }
        }
    }
    spans
}

/// What of a sent part can hold a span: the system prompt, a user's or a
/// tool result's text, and an assistant turn's text with its calls'
/// argument values (decoded, so `\n` in the JSON is no letter `n`).
pub fn part_texts(message: &Message) -> Vec<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    match message {
        Message::User { text } => vec![Cow::Borrowed(text.as_str())],
        Message::ToolResult { content, .. } => vec![Cow::Borrowed(content.as_str())],
        Message::Assistant { text, tool_calls, .. } => {
            std::iter::once(Cow::Borrowed(text.as_str())).chain(tool_calls.iter().flat_map(|call| argument_texts(&call.arguments)).map(Cow::Owned)).collect()
        }
    }
}

/// The bit of a span length in [`SpanTable::lengths`] (spans are 1 to
/// [`MAX_SPAN_BYTES`] bytes long).
fn length_bit(len: usize) -> u128 {
    1u128 << (len.clamp(1, MAX_SPAN_BYTES) - 1)
}

/// The spans of a run, numbered: what texts are searched for.
#[derive(Debug, Default)]
pub struct SpanTable {
    ids: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
    names: Vec<Box<str>>,
    /// Bit `n − 1` set when some span is `n` bytes long.
    lengths: u128,
    /// A bit per pair of first two bytes some span begins with (every span
    /// has two bytes or more): most candidates are skipped unhashed.
    starts: Vec<u64>,
}

impl SpanTable {
    /// The number of `span`, added if new.
    pub fn intern(&mut self, span: &str) -> u32 {
        if let Some(id) = self.ids.get(span) {
            return *id;
        }
        let id = self.names.len() as u32;
        self.names.push(span.into());
        self.ids.insert(span.into(), id);
        self.lengths |= length_bit(span.len());
        if self.starts.is_empty() {
            self.starts = vec![0; 1 << 10];
        }
        if let [first, second, ..] = span.as_bytes() {
            let pair = usize::from(*first) << 8 | usize::from(*second);
            self.starts[pair / 64] |= 1 << (pair % 64);
        }
        id
    }

    /// The span numbered `id`.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// How many spans there are; they are numbered from 0.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no spans.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The numbers of the spans that occur in `text`, added to `found`
    /// (sorted and unique once every text of a part is in). A span can
    /// only start at a run's start or after a joiner, and only end at a
    /// joiner or the run's end, so one pass over the text cuts it into
    /// runs and notes each run's joiners, and each run tries only those
    /// starts (whose first two bytes begin some span) against those ends up
    /// to [`MAX_SPAN_BYTES`] on. ASCII bytes are classed by a table
    /// ([`ASCII_CLASSES`]) and only a non-ASCII character is decoded, so a
    /// long tool output costs one pass and few lookups.
    fn find_in(&self, text: &str, found: &mut Vec<u32>, joiners: &mut Vec<usize>) {
        let mut at = 0;
        loop {
            while let Some((Class::Separator, width)) = class_at(text, at) {
                at += width;
            }
            let start = at;
            joiners.clear();
            while let Some((class, width)) = class_at(text, at)
                && class != Class::Separator
            {
                if class == Class::Joiner {
                    joiners.push(at - start);
                }
                at += width;
            }
            if start == at {
                return;
            }
            self.find_in_run(&text[start..at], joiners, found);
        }
    }

    /// [`Self::find_in`] within one run, whose joiners are at the byte
    /// offsets `joiners`, ascending. Joiners are ASCII: a start after one
    /// and an end at one are character boundaries.
    fn find_in_run(&self, run: &str, joiners: &[usize], found: &mut Vec<u32>) {
        let bytes = run.as_bytes();
        let starts = std::iter::once(0).chain(joiners.iter().map(|joiner| joiner + 1));
        // The `index`th start is the run's start or follows joiner `index - 1`:
        // the joiners from `index` on are those past it.
        for (index, start) in starts.enumerate() {
            if start + 1 >= bytes.len() {
                return;
            }
            if !self.may_start(bytes[start], bytes[start + 1]) {
                continue;
            }
            let ends = joiners[index..].iter().copied().chain(std::iter::once(bytes.len()));
            for end in ends.skip_while(|end| *end < start + 2).take_while(|end| *end <= start + MAX_SPAN_BYTES) {
                if self.lengths & length_bit(end - start) != 0
                    && let Some(id) = self.ids.get(&run[start..end])
                {
                    found.push(*id);
                }
            }
        }
    }

    /// Whether some span begins with the bytes `first`, `second`.
    fn may_start(&self, first: u8, second: u8) -> bool {
        let pair = usize::from(first) << 8 | usize::from(second);
        self.starts[pair / 64] & 1 << (pair % 64) != 0
    }

    /// The spans of every text in `texts`, sorted and unique.
    pub fn find_in_all<'a>(&self, texts: impl IntoIterator<Item = &'a str>) -> Vec<u32> {
        let mut found = Vec::new();
        if self.is_empty() {
            return found;
        }
        let mut joiners = Vec::new();
        for text in texts {
            self.find_in(text, &mut found, &mut joiners);
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;

    fn spans(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        text_spans(text, &mut out);
        out
    }

    #[test]
    fn the_byte_table_classes_ascii_as_the_character_rule_does() {
        for byte in 0..128u8 {
            assert_eq!(ASCII_CLASSES[usize::from(byte)], Class::of(char::from(byte)), "{byte}");
        }
    }

    /// Where the spans of `table` occur in `text` by the definition: every
    /// substring that is a span and is flanked by no atom character.
    fn occurrences_by_definition(table: &SpanTable, text: &str) -> Vec<u32> {
        let bounds: Vec<usize> = text.char_indices().map(|(at, _)| at).chain([text.len()]).collect();
        let atom_before = |at: usize| text[..at].chars().next_back().is_some_and(is_atom);
        let atom_after = |at: usize| text[at..].chars().next().is_some_and(is_atom);
        let mut found: Vec<u32> = bounds
            .iter()
            .flat_map(|&start| bounds.iter().filter(move |&&end| end > start).map(move |&end| (start, end)))
            .filter(|&(start, end)| !atom_before(start) && !atom_after(end))
            .filter_map(|(start, end)| table.ids.get(&text[start..end]).copied())
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    proptest::proptest! {
        /// The one-pass search finds what the definition finds, over texts
        /// of atoms, joiners (runs of them too), separators and non-ASCII
        /// letters and marks.
        #[test]
        fn the_search_finds_every_occurrence_the_definition_does(
            text in "[ab1_./:\\- é«,]{0,40}",
            spans in proptest::collection::vec("[ab1_./:\\-é]{1,6}", 1..8),
        ) {
            let mut table = SpanTable::default();
            for span in spans.iter().filter_map(|span| token(span)).filter(|span| span.len() >= 2) {
                table.intern(span);
            }
            proptest::prop_assert_eq!(table.find_in_all([text.as_str()]), occurrences_by_definition(&table, &text));
        }
    }

    #[test]
    fn tokens_drop_trailing_joiners_a_leading_dot_and_dot_slash_but_keep_paths() {
        assert_eq!(token("src/main.rs:42:"), Some("src/main.rs:42"));
        assert_eq!(token("./src/x.rs."), Some("src/x.rs"));
        assert_eq!(token("/etc/hosts"), Some("/etc/hosts"));
        assert_eq!(token("../lib"), Some("../lib"));
        assert_eq!(token(".try_init"), Some("try_init"));
        assert_eq!(token(".github/ci.yml"), Some("github/ci.yml"));
        assert_eq!(token("--dry-run"), Some("dry-run"));
        assert_eq!(token("..."), None);
        assert_eq!(token("-:-"), None);
    }

    #[test]
    fn paths_marked_identifiers_and_numbers_are_spans_plain_words_are_not() {
        for span in [
            "src/main.rs",
            "/etc/hosts",
            "main.rs",
            "ledger_url",
            "PaymentService",
            "HTTP",
            "v1.2",
            "abc1",
            "ledger-svc",
            "std::fs",
            "8080",
            "42",
            "3.14",
            "a1b2c3d",
        ] {
            assert!(is_span(span), "{span}");
        }
        for word in ["error", "Ledger", "the", "ab", "a1", "7", "rn", "a/"] {
            assert!(!is_span(word), "{word}");
        }
        assert!(!is_span(&"x_".repeat(MAX_SPAN_BYTES)), "longer than the bound");
    }

    #[test]
    fn a_texts_spans_are_its_marked_tokens_and_its_single_token_quotes() {
        assert_eq!(spans("grep -rn \"timeout\" src/ for LedgerService, not 'two words' or ledger"), ["LedgerService", "timeout"]);
        assert_eq!(spans("see `PaymentService.charge` at src/pay.rs:42."), ["PaymentService.charge", "src/pay.rs:42"]);
        assert_eq!(spans("it's the user's file"), Vec::<String>::new(), "apostrophes quote nothing of one token");
        assert_eq!(spans("an \"unclosed quote"), Vec::<String>::new());
    }

    #[test]
    fn an_actions_spans_are_its_argument_values_or_its_final_answer() {
        let call = ToolCall { id: "c".into(), name: "read".into(), arguments: r#"{"path": "src/a.rs", "line": 142, "mode": "fast", "all": true}"#.into() };
        let with_call = Message::assistant("Reading src/b.rs now", vec![call]);
        let mut found = action_spans(&with_call);
        found.sort();
        assert_eq!(found, ["142", "src/a.rs"], "prose beside a call is no action; keys, plain values and booleans are no spans");
        assert_eq!(action_spans(&Message::assistant("Fixed in src/b.rs", vec![])), ["src/b.rs"]);
        let raw = ToolCall { id: "c".into(), name: "sh".into(), arguments: "cat a_b.txt".into() };
        assert_eq!(action_spans(&Message::assistant("", vec![raw])), ["a_b.txt"], "arguments that are not JSON are read as text");
    }

    #[test]
    fn a_span_occurs_only_where_no_atom_flanks_it() {
        let mut table = SpanTable::default();
        let ids: Vec<u32> = ["main.rs", "42", "src/main.rs", "PaymentService", "/etc/hosts", "dry-run"].iter().map(|s| table.intern(s)).collect();
        assert_eq!(table.find_in_all(["at ./src/main.rs:42: fn"]), vec![ids[0], ids[1], ids[2]]);
        assert_eq!(table.find_in_all(["main.rsx x42 PaymentServiceImpl /etc/hostsfile"]), Vec::<u32>::new());
        assert_eq!(table.find_in_all(["cat /etc/hosts --dry-run"]), vec![ids[4], ids[5]]);
        assert_eq!(table.find_in_all(["(PaymentService)", "none"]), vec![ids[3]], "punctuation is a boundary");
        assert_eq!(table.find_in_all(["« main.rs » émain.rs 42é"]), vec![ids[0]], "a letter beyond ASCII is an atom, other characters are boundaries");
    }
}
