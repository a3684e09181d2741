//! Counts of whole long texts, remembered per thread.
//!
//! The message memo ([`super::TokenCounter`]) keys a message by everything
//! in it, so a text that comes back in another message is counted again:
//! a fixture's result under each new call id, a file read twice, the same
//! task in another session. Such texts are long (a tool result is
//! kilobytes), and counting one walks every piece of it, while hashing it
//! is one pass at memory speed; so texts of at least [`SHORTEST`] bytes are
//! remembered by their content hash. Shorter texts are left to the piece
//! memo, for which a second probe would cost more than it saves.
//!
//! The key is a 64-bit content hash, as the message memo's is. The memo
//! lives per thread, like the piece memo, and starts over when full, which
//! bounds it at about 100 KiB.

use std::cell::RefCell;
use std::hash::BuildHasher;

use super::bounded::BoundedCounts;

/// Texts shorter than this are counted piece by piece every time.
pub const SHORTEST: usize = 256;

/// Texts remembered before the memo starts over.
const CAPACITY: usize = 4096;

thread_local! {
    static MEMO: RefCell<TextMemo> = RefCell::new(TextMemo::with_capacity(CAPACITY));
}

/// Tokens of `text`, a long one, as `count` counts it, through this
/// thread's memo.
pub fn count_long(text: &str, count: impl FnOnce(&str) -> u64) -> u64 {
    MEMO.with_borrow_mut(|memo| memo.count(text, count))
}

/// Text counts by content hash, bounded.
#[derive(Debug)]
struct TextMemo {
    counts: BoundedCounts<u64, u64>,
}

impl TextMemo {
    fn with_capacity(capacity: usize) -> Self {
        Self { counts: BoundedCounts::with_capacity(capacity) }
    }

    fn count(&mut self, text: &str, count: impl FnOnce(&str) -> u64) -> u64 {
        let key = foldhash::quality::FixedState::with_seed(0).hash_one(text);
        self.counts.get_or_count(key, || count(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_counted_once_and_texts_are_told_apart() {
        let mut memo = TextMemo::with_capacity(8);
        let mut calls = 0;
        let mut count = |text: &str| {
            memo.count(text, |text| {
                calls += 1;
                text.len() as u64
            })
        };
        let long = "x".repeat(SHORTEST);
        assert_eq!(count(&long), 256);
        assert_eq!(count(&long), 256);
        // Same length, one byte apart; and one byte longer.
        assert_eq!(count(&format!("y{}", &long[1..])), 256);
        assert_eq!(count(&format!("{long}x")), 257);
        assert_eq!(calls, 3);
    }

    #[test]
    fn a_full_memo_starts_over_and_stays_right() {
        let mut memo = TextMemo::with_capacity(2);
        for round in 0..3 {
            for length in 300..306 {
                assert_eq!(memo.count(&"z".repeat(length), |text| text.len() as u64 * 2), length as u64 * 2, "round {round}");
                assert!(memo.counts.len() <= 2);
            }
        }
    }
}
