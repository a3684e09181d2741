//! Reference token counts: the o200k_base BPE (GPT-4o and later), through
//! `bpe-openai`, memoized per message so that a request costs tokenization
//! of its new messages only, however long the history it resends.
//!
//! `bpe-openai` over `tiktoken-rs`: the same vocabulary, about twice the
//! throughput measured here (10 vs 5 MB/s single-threaded), and no regex
//! backtracking crate in the build.
//!
//! Counting works on the provider-neutral [`Prompt`], so one conversation
//! costs the same whichever wire format carried it, and follows OpenAI's
//! published recipe for chat messages: 3 framing tokens per message, the
//! tokens of its role and texts, and 3 priming the reply. Tool declarations
//! are counted as their JSON text (the providers' internal rendering is not
//! published; this is close and stable).
//!
//! Below the messages, a long text's count is remembered per thread
//! whatever message it comes back in ([`text_memo`]), each pre-tokenizer
//! piece's count is remembered per thread ([`piece_memo`]), ASCII text is
//! cut into pieces without the regex ([`ascii_pieces`]), so new text mostly costs one pass and a hash
//! probe per piece, and a piece's BPE runs over tables compiled into the
//! binary ([`ranks`]), so a process that counts starts with no work.
//!
//! Each message is keyed by a hash of its content (role and fields), the
//! same key the prompt-cache simulation compares prefixes by, so a request
//! is tokenized only where it is new. The hash is foldhash's (with a fixed
//! seed) rather than std's SipHash, which took 8 % of a replay's
//! instructions. A session's counter also keeps the latest request it
//! answered ([`TokenCounter::count_and_keep`]), and the next request takes
//! the hashes and counts of the prefix it shares with it by comparing the
//! parts, which is cheaper than hashing them: a request hashes only what
//! follows that prefix, not its whole history again.

mod ascii_pieces;
mod bounded;
mod piece_memo;
mod rank_hash;
mod ranks;
mod text_memo;

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex};

use reloop_wire::format::message_through;
use reloop_wire::{Format, Message, Prompt, ToolSpec};

/// Framing tokens per message.
pub const TOKENS_PER_MESSAGE: u64 = 3;
/// Tokens priming the assistant's reply.
pub const REPLY_PRIMING_TOKENS: u64 = 3;

/// Tokens of `text` under o200k_base.
///
/// ASCII text is cut by hand and every piece is counted over tables in the
/// binary's read-only data ([`ranks`]), so this costs no start-up work;
/// other text is cut by `bpe-openai`'s pre-tokenizer, which loads its
/// tables the first time such text is counted. Long texts go through the
/// thread's memo of whole texts first.
pub fn count_text(text: &str) -> u64 {
    if text.len() >= text_memo::SHORTEST { text_memo::count_long(text, count_pieces) } else { count_pieces(text) }
}

/// Tokens of `text`, summed over its pieces.
fn count_pieces(text: &str) -> u64 {
    if text.is_ascii() { piece_memo::count_pieces(ascii_pieces::ascii_pieces(text)) } else { piece_memo::count_pieces(bpe_openai::o200k_base().split(text)) }
}

/// A memoizing counter; one per session keeps contention away.
#[derive(Debug, Default)]
pub struct TokenCounter {
    memo: Mutex<Memo>,
}

#[derive(Debug, Default)]
struct Memo {
    /// Tokens by content hash ([`content_hash`]).
    tokens: ByHash<u64>,
    /// The parts of the latest request [`TokenCounter::count_and_keep`]
    /// counted, in order, each with its hash and tokens.
    latest: Vec<Counted>,
    /// That request's tool declarations, their JSON and its tokens: a
    /// conversation declares the same tools every turn, and comparing them
    /// costs less than writing their JSON again (1 % of a replay's
    /// instructions).
    latest_tools: Option<(Vec<ToolSpec>, Arc<str>, u64)>,
}

/// One part of a kept request: what it was, its content hash and tokens.
#[derive(Debug)]
struct Counted {
    part: OwnedPart,
    hash: u64,
    tokens: u64,
}

/// A [`Part`] owned, to compare the next request's parts with.
#[derive(Debug)]
enum OwnedPart {
    System(String),
    Message(Message),
}

impl OwnedPart {
    fn of(part: &Part<'_>) -> Self {
        match part {
            Part::System(text) => Self::System((*text).to_owned()),
            Part::Message(message) => Self::Message((*message).clone()),
        }
    }

    fn is(&self, part: &Part<'_>) -> bool {
        match (self, part) {
            (Self::System(kept), Part::System(text)) => kept == text,
            (Self::Message(kept), Part::Message(message)) => kept == *message,
            _ => false,
        }
    }
}

/// The token counts of one chat request, with the content hash of each
/// part they were memoized by.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptCount {
    /// Tokens of the tool declarations.
    pub tools: u64,
    /// The tool declarations as JSON (what they are counted and cached as);
    /// shared with the counter's memo, which gives the next request with
    /// the same tools the same text.
    pub tools_json: Arc<str>,
    /// Tokens of each message, framing included, in request order; the
    /// system prompt first when there is one.
    pub messages: Vec<u64>,
    /// The content hash of each of those messages.
    pub message_hashes: Vec<u64>,
    /// Everything, priming included.
    pub total: u64,
}

/// One counted part of a request: the system prompt or a message.
#[derive(Hash)]
enum Part<'a> {
    System(&'a str),
    Message(&'a Message),
}

/// A map keyed by content hashes ([`content_hash`]) or hashes made of
/// them: the keys are hashes already, so foldhash's fast mix rather than
/// SipHash again.
pub type ByHash<V> = HashMap<u64, V, foldhash::fast::FixedState>;

/// A stable-within-the-process hash of `value`: equal contents, equal keys.
pub fn content_hash(value: &impl Hash) -> u64 {
    foldhash::quality::FixedState::with_seed(0).hash_one(value)
}

/// The content hash a request's message is counted (and logged) under, as
/// in [`PromptCount::message_hashes`].
pub fn message_hash(message: &Message) -> u64 {
    content_hash(&Part::Message(message))
}

impl TokenCounter {
    /// A counter with an empty memo.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts a whole request, tokenizing only parts not seen before and
    /// hashing only those past the prefix it shares with the kept request.
    pub fn count_prompt(&self, prompt: &Prompt) -> PromptCount {
        self.count(prompt, false)
    }

    /// [`Self::count_prompt`], then keeps `prompt`'s parts (copying those
    /// past the shared prefix) for the next request to compare with: the
    /// session's path for each request it answers.
    pub fn count_and_keep(&self, prompt: &Prompt) -> PromptCount {
        self.count(prompt, true)
    }

    fn count(&self, prompt: &Prompt, keep: bool) -> PromptCount {
        let system = prompt.system.as_deref().map(Part::System);
        let parts: Vec<Part<'_>> = system.into_iter().chain(prompt.messages.iter().map(Part::Message)).collect();
        let mut memo = self.memo.lock().expect("token memo poisoned");
        let memo = &mut *memo;
        let (tools_json, tools) = memo.tools(&prompt.tools, keep);
        let shared = memo.latest.iter().zip(&parts).take_while(|(kept, part)| kept.part.is(part)).count();
        let (mut message_hashes, mut messages) = (Vec::with_capacity(parts.len()), Vec::with_capacity(parts.len()));
        message_hashes.extend(memo.latest[..shared].iter().map(|kept| kept.hash));
        messages.extend(memo.latest[..shared].iter().map(|kept| kept.tokens));
        if keep {
            memo.latest.truncate(shared);
        }
        for part in &parts[shared..] {
            let hash = content_hash(part);
            let tokens = *memo.tokens.entry(hash).or_insert_with(|| count_part(part));
            if keep {
                memo.latest.push(Counted { part: OwnedPart::of(part), hash, tokens });
            }
            message_hashes.push(hash);
            messages.push(tokens);
        }
        let total = tools + messages.iter().sum::<u64>() + REPLY_PRIMING_TOKENS;
        PromptCount { tools, tools_json, messages, message_hashes, total }
    }

    /// Counts each of `messages` as it arrives in `format`
    /// ([`message_through`]), framing included. With a logged request's
    /// system and tool figures, this prices another conversation under the
    /// same system prompt and tools (the uncompacted counterfactual) without
    /// assembling a request; messages the session already saw are memo hits.
    pub fn count_messages(&self, format: Format, messages: &[Message]) -> Vec<u64> {
        messages.iter().map(|message| message_through(format, message).iter().map(|m| self.count_message(m)).sum()).collect()
    }

    /// Counts one message, framing included.
    pub fn count_message(&self, message: &Message) -> u64 {
        let part = Part::Message(message);
        *self.memo.lock().expect("token memo poisoned").tokens.entry(content_hash(&part)).or_insert_with(|| count_part(&part))
    }
}

impl Memo {
    /// The JSON of `tools` and its tokens, taken from the kept request's
    /// when they are its tools; kept for the next request when `keep`.
    fn tools(&mut self, tools: &[ToolSpec], keep: bool) -> (Arc<str>, u64) {
        if tools.is_empty() {
            return (Arc::default(), 0);
        }
        if let Some((kept, json, tokens)) = &self.latest_tools
            && same_text(kept, tools)
        {
            return (Arc::clone(json), *tokens);
        }
        let json: Arc<str> = serde_json::to_string(tools).unwrap_or_default().into();
        let tokens = *self.tokens.entry(content_hash(&json)).or_insert_with(|| count_text(&json));
        if keep {
            self.latest_tools = Some((tools.to_vec(), Arc::clone(&json), tokens));
        }
        (json, tokens)
    }
}

/// Whether `a` and `b` write the same JSON. `Value`'s `==` compares maps
/// regardless of key order, but a schema whose keys moved is other text to a
/// provider: other tokens, and a broken prompt cache.
fn same_text(a: &[ToolSpec], b: &[ToolSpec]) -> bool {
    fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value;
        match (a, b) {
            (Value::Object(a), Value::Object(b)) => a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && same(va, vb)),
            (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
            _ => a == b,
        }
    }
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.name == b.name && a.description == b.description && same(&a.parameters, &b.parameters))
}

fn count_part(part: &Part<'_>) -> u64 {
    match part {
        Part::System(text) => count_fields("system", &[text]),
        Part::Message(Message::User { text }) => count_fields("user", &[text]),
        Part::Message(Message::Assistant { text, tool_calls, .. }) => {
            let calls: Vec<String> = tool_calls.iter().map(|c| format!("{}{}", c.name, c.arguments)).collect();
            let fields: Vec<&str> = std::iter::once(text.as_str()).chain(calls.iter().map(String::as_str)).collect();
            count_fields("assistant", &fields)
        }
        Part::Message(Message::ToolResult { call_id, content, .. }) => count_fields("tool", &[call_id, content]),
    }
}

fn count_fields(role: &str, fields: &[&str]) -> u64 {
    TOKENS_PER_MESSAGE + count_text(role) + fields.iter().map(|field| count_text(field)).sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_o200k_counts() {
        // Reference values from OpenAI's tokenizer for o200k_base.
        assert_eq!(count_text("hello world"), 2);
        assert_eq!(count_text(""), 0);
    }

    /// Texts long enough for the memo of whole texts count as the tokenizer
    /// counts them, the first time and when they come back.
    #[test]
    fn long_texts_count_as_the_tokenizer_counts_them_cold_and_warm() {
        let tokenizer = bpe_openai::o200k_base();
        let texts = [
            "fn main() { println!(\"hello\"); }\n".repeat(20),
            "Der Zug fährt um 12:45 Uhr ab — 東京行きの列車は遅れています。 ".repeat(10),
            format!("{}!", "fn main() { println!(\"hello\"); }\n".repeat(20)),
        ];
        for pass in ["cold", "warm"] {
            for text in &texts {
                assert!(text.len() >= text_memo::SHORTEST);
                assert_eq!(count_text(text), tokenizer.count(text) as u64, "{pass}: {text:?}");
            }
        }
    }

    #[test]
    fn memo_gives_the_same_answer_and_tells_contents_apart() {
        let counter = TokenCounter::new();
        let long = "fn main() { println!(\"hello\"); }\n".repeat(20);
        let prompt = |content: &str| Prompt {
            system: Some(content.to_owned()),
            messages: vec![
                Message::User { text: content.into() },
                Message::ToolResult { call_id: "c".into(), tool_name: reloop_wire::Text::default(), content: content.into(), is_error: false },
            ],
            ..Prompt::default()
        };
        let first = counter.count_prompt(&prompt(&long));
        assert_eq!(counter.count_prompt(&prompt(&long)), first);
        let fresh = TokenCounter::new().count_prompt(&prompt(&long));
        assert_eq!(fresh, first);
        assert_eq!(first.messages[1], TOKENS_PER_MESSAGE + count_text("user") + count_text(&long));
        // The same text as system prompt, user turn and tool result: three keys.
        assert_eq!(first.message_hashes.iter().collect::<std::collections::HashSet<_>>().len(), 3);
        let short = counter.count_prompt(&prompt("hi"));
        assert_eq!(short.messages[1], TOKENS_PER_MESSAGE + count_text("user") + count_text("hi"));
        assert_eq!(counter.count_message(&Message::User { text: "hi".into() }), short.messages[1]);
    }

    /// The kept request's tools give the next request their JSON only when
    /// they write the same text: a schema whose keys moved (equal as
    /// `Value`s) is other text, with its own JSON and cache key.
    #[test]
    fn tools_are_written_again_unless_they_write_the_same_text() {
        let counter = TokenCounter::new();
        let tools = |parameters: serde_json::Value, description: &str| Prompt {
            tools: vec![ToolSpec { name: "read".into(), description: description.into(), parameters }],
            ..Prompt::default()
        };
        let ordered = serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let moved = serde_json::json!({"properties": {"path": {"type": "string"}}, "type": "object"});
        assert_eq!(ordered, moved, "Value's == ignores the order");
        let first = counter.count_and_keep(&tools(ordered.clone(), "Read a file."));
        let again = counter.count_and_keep(&tools(ordered.clone(), "Read a file."));
        assert!(Arc::ptr_eq(&first.tools_json, &again.tools_json), "the same tools share the kept JSON");
        for other in [tools(moved, "Read a file."), tools(ordered, "Read one file.")] {
            let count = counter.count_and_keep(&other);
            assert_eq!(&*count.tools_json, serde_json::to_string(&other.tools).unwrap(), "{other:?}");
            assert_eq!(count.tools, count_text(&count.tools_json));
        }
    }

    /// The prefix a request shares with the kept one is taken by comparing
    /// parts, not hashing them: however the next request differs (grown, a
    /// result masked mid-history, cut short, another or no system prompt),
    /// it counts exactly as a fresh counter counts it.
    #[test]
    fn a_request_after_a_kept_one_counts_as_a_fresh_counter_does() {
        let message = |i: usize| match i % 2 {
            0 => Message::User { text: format!("question {i}").into() },
            _ => Message::ToolResult {
                call_id: format!("c{i}").into(),
                tool_name: reloop_wire::Text::default(),
                content: "fn x() {}\n".repeat(i * 10).into(),
                is_error: false,
            },
        };
        let prompt =
            |system: Option<&str>, messages: &[Message]| Prompt { system: system.map(str::to_owned), messages: messages.to_vec(), ..Prompt::default() };
        let history: Vec<Message> = (0..8).map(message).collect();
        let mut masked = history.clone();
        masked[3] = Message::ToolResult { call_id: "c3".into(), tool_name: reloop_wire::Text::default(), content: "[masked]".into(), is_error: false };
        let kept = TokenCounter::new();
        let requests = [
            prompt(Some("s"), &history[..4]),
            prompt(Some("s"), &history),
            prompt(Some("s"), &masked),
            prompt(Some("s"), &history[..2]),
            prompt(Some("t"), &history),
            prompt(None, &history),
            prompt(Some("s"), &history),
        ];
        for request in &requests {
            let fresh = TokenCounter::new().count_prompt(request);
            assert_eq!(kept.count_prompt(request), fresh, "before keeping {request:?}");
            assert_eq!(kept.count_and_keep(request), fresh, "keeping {request:?}");
        }
    }
}
