//! The loop's own token estimate, which drives compaction decisions before
//! the provider has counted anything.
//!
//! The agent carries no tokenizer: it is the system under test, and agents
//! in the wild estimate (Roku: bytes/4). The estimate here is still a
//! heuristic, but one that counts what the tokenizer counts: the pieces
//! o200k's pre-tokenizer cuts a text into (words, digit groups,
//! punctuation runs, line breaks, CJK characters by script) and what makes
//! a piece cost more than one token ([`ratios`] has the figures and their
//! source). Each chunk of a text is also classified ([`TextClass`]) for the
//! reports. [`Calibration`] then corrects what is left, from the provider's
//! reported usage.

mod calibration;
mod class;
mod classify;
mod features;
mod han_table;
mod masks;
mod non_ascii;
pub mod ratios;
mod symbol_table;

pub use calibration::{Calibration, MAX_SCALE, MIN_SCALE, WINDOW};
pub use class::TextClass;

use crate::message::Message;
use features::{Features, scan};
use ratios::{DOMINANT_SHARE, TOKENS_PER};

/// Framing tokens per message, as in OpenAI's counting guide ("every message
/// follows <|start|>{role/name}\n{content}<|end|>\n").
pub const TOKENS_PER_MESSAGE: u64 = 3;
/// Tokens of a role name (`system`, `user`, `assistant`, `tool`: one each).
pub const TOKENS_PER_ROLE: u64 = 1;
/// Tokens priming the reply, from the same guide.
pub const REPLY_PRIMING_TOKENS: u64 = 3;

/// What the estimator made of one text.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TextEstimate {
    /// Estimated tokens, unrounded (sums of many small texts stay unbiased).
    pub tokens: f64,
    /// Bytes of the text in chunks of each class, indexed by [`TextClass::index`].
    pub bytes_by_class: [usize; 4],
}

impl TextEstimate {
    /// Estimated tokens, rounded.
    pub fn rounded(&self) -> u64 {
        self.tokens.round() as u64
    }

    /// The class holding most of the bytes, unless none holds
    /// [`DOMINANT_SHARE`] of them (a mixed text) or the text is empty.
    pub fn dominant_class(&self) -> Option<TextClass> {
        let total: usize = self.bytes_by_class.iter().sum();
        let class = TextClass::ALL.into_iter().max_by_key(|c| self.bytes_by_class[c.index()])?;
        let share = self.bytes_by_class[class.index()] as f64;
        (total > 0 && share >= DOMINANT_SHARE * total as f64).then_some(class)
    }
}

/// Classifies and estimates `text`, chunk by chunk.
pub fn analyze(text: &str) -> TextEstimate {
    let mut estimate = TextEstimate::default();
    scan(text, |chunk| {
        let class = classify::classify(chunk);
        estimate.tokens += chunk_tokens(chunk);
        estimate.bytes_by_class[class.index()] += chunk.bytes;
    });
    estimate
}

/// Estimated tokens of one text.
pub fn estimate_text(text: &str) -> u64 {
    analyze(text).rounded()
}

/// Estimated prompt tokens of a request, uncalibrated: the system prompt,
/// the tool declarations as JSON, the messages, and their framing.
pub fn estimate_prompt(system: &str, messages: &[Message], tools_json: &str) -> u64 {
    let texts = text_tokens(system) + text_tokens(tools_json) + messages.iter().map(message_text_tokens).sum::<f64>();
    prompt_tokens(messages.len(), texts)
}

/// A prompt's estimate from its parts: `messages` framed messages whose
/// texts (system prompt and tool declarations included) sum to
/// `text_tokens`. Lets the loop keep per-message figures and sum them
/// instead of re-scanning the prompt every step.
pub fn prompt_tokens(messages: usize, text_tokens: f64) -> u64 {
    let framing = (TOKENS_PER_MESSAGE + TOKENS_PER_ROLE) * (messages as u64 + 1) + REPLY_PRIMING_TOKENS;
    framing + text_tokens.round() as u64
}

/// Estimated tokens of one message, framing included.
pub fn estimate_message(message: &Message) -> u64 {
    framed_message_tokens(message_text_tokens(message))
}

/// A message's estimate, framing included, from its unrounded text tokens.
pub fn framed_message_tokens(text_tokens: f64) -> u64 {
    TOKENS_PER_MESSAGE + TOKENS_PER_ROLE + text_tokens.round() as u64
}

/// Unrounded estimated tokens of a message's texts, framing excluded: the
/// figure kept beside each message and summed.
pub fn message_text_tokens(message: &Message) -> f64 {
    match message {
        Message::User { text } => text_tokens(text),
        Message::Assistant { text, tool_calls, .. } => {
            text_tokens(text) + tool_calls.iter().map(|c| text_tokens(&c.name) + text_tokens(&c.arguments)).sum::<f64>()
        }
        Message::ToolResult { call_id, content, .. } => text_tokens(call_id) + text_tokens(content),
    }
}

/// Unrounded estimated tokens of one text.
pub fn text_tokens(text: &str) -> f64 {
    analyze(text).tokens
}

fn chunk_tokens(f: &Features) -> f64 {
    weighted(&f.charged())
}

/// How many figures [`charged`] gives, one per constant of
/// [`ratios::TOKENS_PER`].
pub const FIGURES: usize = 17;

/// What the estimate charges in `text`: the pieces o200k's pre-tokenizer
/// cuts it into, by kind, and what makes a piece cost more than one token,
/// one figure per constant of [`ratios::TOKENS_PER`], in its order
/// (`Features::charged` names them). The estimate is their sum weighted by
/// those constants, so fitting the constants to a tokenizer's counts needs
/// these figures alone (`benches/examples/fit_estimator.rs`).
pub fn charged(text: &str) -> [f64; FIGURES] {
    let mut row = [0.0; FIGURES];
    scan(text, |chunk| row.iter_mut().zip(chunk.charged()).for_each(|(sum, figure)| *sum += figure));
    row
}

/// Estimated tokens of a row of charged figures.
fn weighted(row: &[f64; FIGURES]) -> f64 {
    row.iter().zip(TOKENS_PER).map(|(figure, cost)| figure * cost.1).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_charged_figures_give_the_estimate() {
        let text = "## Results\n====\n  n: 1234, id: 4f0c ─ 数据备份\n";
        assert!((weighted(&charged(text)) - analyze(text).tokens).abs() < 1e-9);
        // `=====` is one punctuation run with no long-punctuation charge.
        let mut punct = (0, 0);
        scan(text, |chunk| punct = (punct.0 + chunk.punct_runs, punct.1 + chunk.long_punct));
        assert_eq!(punct, (5, 0));
    }

    #[test]
    fn empty_text_costs_nothing() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(analyze("").dominant_class(), None);
    }

    #[test]
    fn prose_is_cheaper_per_byte_than_json_of_the_same_length() {
        let prose = "The worker retries a failed delivery later, and marks the endpoint as failing after three tries in a row.";
        let json = r#"{"id":"whk_8Hq2xLmP0aZ4","attempts":[1709540100,1709540160,1709540460],"status":503,"ok":false}"#;
        let (p, j) = (analyze(prose), analyze(json));
        assert_eq!(p.dominant_class(), Some(TextClass::Prose));
        assert_eq!(j.dominant_class(), Some(TextClass::Json));
        assert!(p.tokens / (prose.len() as f64) < j.tokens / (json.len() as f64), "{p:?} {j:?}");
    }

    #[test]
    fn a_text_of_two_halves_is_mixed() {
        let code = "    let value = compute(input)?;\n".repeat(20);
        let prose = "This paragraph explains in plain words what the function above computes.\n".repeat(9);
        let e = analyze(&(code + &prose));
        assert!(e.bytes_by_class[TextClass::Code.index()] > 0 && e.bytes_by_class[TextClass::Prose.index()] > 0, "{e:?}");
        assert_eq!(e.dominant_class(), None);
    }

    #[test]
    fn a_prompt_adds_framing_per_message() {
        let messages = [Message::user("hi"), Message::user("hi")];
        let one = estimate_prompt("", &messages[..1], "");
        let two = estimate_prompt("", &messages, "");
        let text = (two - one - TOKENS_PER_MESSAGE - TOKENS_PER_ROLE) as f64;
        assert!((text - analyze("hi").tokens).abs() <= 1.0, "rounding only: {text}");
        assert_eq!(estimate_prompt("", &[], ""), TOKENS_PER_MESSAGE + TOKENS_PER_ROLE + REPLY_PRIMING_TOKENS);
    }
}
