//! Counts of o200k pre-tokenizer pieces, remembered per thread.
//!
//! o200k_base first cuts text into pieces (a word with the blank before it,
//! up to three digits, a punctuation run) and runs its BPE on each piece
//! alone, so a piece's count never depends on its neighbours, and
//! `count(text)` is the sum of its pieces' counts. Agent traffic repeats
//! the same pieces endlessly (identifiers, JSON keys, common words): over
//! the estimator corpus, 290 K pieces hold 30 K distinct ones. Remembering
//! the count of each short piece replaces BPE (and its two allocations per
//! piece) with one hash probe.
//! Hugging Face's `tokenizers` keeps a word cache for the same reason.
//!
//! Keys are pieces of at most 15 bytes packed into a `u128`, so a probe
//! touches no heap; longer pieces (rare: long numbers are cut in threes,
//! words rarely run that long) go straight to BPE. The memo lives per
//! thread, so sessions on the mock's worker threads share it without a
//! lock, and it is cleared when full, which bounds it at about 2 MiB.

use std::cell::RefCell;

use super::bounded::BoundedCounts;
use super::ranks;

/// Pieces remembered before the memo starts over.
const CAPACITY: usize = 1 << 16;

thread_local! {
    static MEMO: RefCell<PieceMemo> = RefCell::new(PieceMemo::with_capacity(CAPACITY));
}

/// Tokens of a text cut into `pieces` by o200k's pre-tokenizer, through
/// this thread's memo; equal to o200k's count of the text (o200k_base does
/// not normalize).
pub fn count_pieces<'a>(pieces: impl Iterator<Item = &'a str>) -> u64 {
    MEMO.with_borrow_mut(|memo| pieces.map(|piece| memo.count(piece.as_bytes())).sum())
}

/// Piece counts by packed key ([`packed`]), bounded.
#[derive(Debug)]
struct PieceMemo {
    counts: BoundedCounts<u128, u32>,
}

impl PieceMemo {
    fn with_capacity(capacity: usize) -> Self {
        Self { counts: BoundedCounts::with_capacity(capacity) }
    }

    /// Tokens of one pre-tokenizer `piece`.
    fn count(&mut self, piece: &[u8]) -> u64 {
        let Some(key) = packed(piece) else { return ranks::count_piece(piece) };
        u64::from(self.counts.get_or_count(key, || ranks::count_piece(piece) as u32))
    }
}

/// `piece` as a key: its bytes, zero-padded, with its length in the last
/// byte, so two pieces share a key only if they are equal. `None` past 15
/// bytes.
fn packed(piece: &[u8]) -> Option<u128> {
    if piece.len() >= 16 {
        return None;
    }
    let mut key = [0u8; 16];
    key[..piece.len()].copy_from_slice(piece);
    key[15] = piece.len() as u8;
    Some(u128::from_le_bytes(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTS: &[&str] = &[
        "fn main() { println!(\"hello, world\"); }\n",
        "{\"type\":\"function\",\"name\":\"read_file\",\"parameters\":{\"path\":\"src/lib.rs\"}}",
        "Der Zug fährt um 12:45 Uhr ab — 東京行きの列車は遅れています。 안녕하세요 🙂🙂",
        "0123456789012345678901234567 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n\n\n    \t  ",
        "supercalifragilisticexpialidocious antidisestablishmentarianism ⎯⎯⎯⎯⎯⎯",
        "",
    ];

    #[test]
    fn the_memo_counts_what_the_tokenizer_counts_cold_and_warm() {
        let tokenizer = bpe_openai::o200k_base();
        for pass in ["cold", "warm"] {
            for text in TEXTS {
                assert_eq!(count_pieces(tokenizer.split(text)), tokenizer.count(*text) as u64, "{pass}: {text:?}");
            }
        }
    }

    #[test]
    fn a_full_memo_starts_over_and_stays_right() {
        let tokenizer = bpe_openai::o200k_base();
        let mut memo = PieceMemo::with_capacity(4);
        for text in TEXTS.iter().chain(TEXTS) {
            let counted: u64 = tokenizer.split(text).map(|piece| memo.count(piece.as_bytes())).sum();
            assert_eq!(counted, tokenizer.count(*text) as u64, "{text:?}");
            assert!(memo.counts.len() <= 4);
        }
    }

    #[test]
    fn keys_tell_pieces_apart_by_length_and_stop_past_fifteen_bytes() {
        assert_ne!(packed(b"a"), packed(b"a\0"));
        assert_ne!(packed(b""), packed(b"\0"));
        assert_eq!(packed(b"same"), packed(b"same"));
        assert!(packed(&[b'x'; 15]).is_some());
        assert_eq!(packed(&[b'x'; 16]), None);
    }
}
