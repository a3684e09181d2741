//! Codex's truncation policy for tool output: past a budget in bytes or
//! tokens, keep the head and the tail (where errors and summaries sit) and
//! replace the middle by a marker saying how much was left out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the budget counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TruncationUnit {
    /// UTF-8 bytes.
    Bytes,
    /// The loop's token estimate (`estimate::text_tokens`).
    Tokens,
}

impl TruncationUnit {
    /// The unit's name in markers and events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bytes => "bytes",
            Self::Tokens => "tokens",
        }
    }
}

/// The budget of one tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Truncation {
    /// The most a result may keep (at least 16), in `unit`.
    pub max: u64,
    /// Bytes or tokens.
    pub unit: TruncationUnit,
}

/// A truncated output and how much of it was left out, in the budget's unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// Head, marker, tail.
    pub text: String,
    /// Bytes or tokens omitted.
    pub omitted: u64,
}

/// `text` cut to `budget` keeping head and tail halves; `None` when it fits.
pub fn truncate_middle(text: &str, budget: Truncation) -> Option<Truncated> {
    let size = measure(text, budget.unit);
    if size <= budget.max {
        return None;
    }
    // Bytes to keep: the budget scaled to bytes for tokens, split in halves
    // on character boundaries.
    let keep_bytes = (text.len() as u128 * u128::from(budget.max) / u128::from(size.max(1))) as usize;
    let head_end = floor_char_boundary(text, keep_bytes / 2);
    let tail_start = ceil_char_boundary(text, text.len() - keep_bytes / 2);
    let (head, tail) = (&text[..head_end], &text[tail_start..]);
    let omitted = size - measure(head, budget.unit) - measure(tail, budget.unit);
    let marker = format!("\n[… {omitted} {} omitted …]\n", budget.unit.as_str());
    Some(Truncated { text: format!("{head}{marker}{tail}"), omitted })
}

fn measure(text: &str, unit: TruncationUnit) -> u64 {
    match unit {
        TruncationUnit::Bytes => text.len() as u64,
        TruncationUnit::Tokens => crate::estimate::text_tokens(text).ceil() as u64,
    }
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_survive_with_the_omitted_count() {
        let text = format!("HEAD{}TAIL", "x".repeat(992));
        let cut = truncate_middle(&text, Truncation { max: 100, unit: TruncationUnit::Bytes }).expect("over budget");
        assert!(cut.text.starts_with("HEAD") && cut.text.ends_with("TAIL"), "{}", cut.text);
        assert_eq!(cut.omitted, 900);
        assert!(cut.text.contains("[… 900 bytes omitted …]"));
    }

    #[test]
    fn output_within_budget_is_untouched() {
        assert_eq!(truncate_middle("short", Truncation { max: 100, unit: TruncationUnit::Bytes }), None);
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "é".repeat(500);
        let cut = truncate_middle(&text, Truncation { max: 101, unit: TruncationUnit::Bytes }).expect("over budget");
        assert!(cut.omitted >= 898, "{}", cut.omitted);
    }

    #[test]
    fn a_token_budget_keeps_about_that_many_tokens() {
        let text = "word ".repeat(2_000);
        let cut = truncate_middle(&text, Truncation { max: 200, unit: TruncationUnit::Tokens }).expect("over budget");
        let kept = crate::estimate::text_tokens(&cut.text);
        assert!((150.0..260.0).contains(&kept), "{kept}");
        assert!(cut.text.contains("tokens omitted"));
    }
}
