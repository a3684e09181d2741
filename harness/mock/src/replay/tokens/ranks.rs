//! o200k_base's byte-pair merge over tables kept in the binary's read-only
//! data (written by `build.rs`), so counting needs no start-up work: a
//! process that counts one request touches a few pages of the tables
//! instead of loading `bpe-openai`'s (about 350 M instructions and 50 MB).
//!
//! The merge is tiktoken's: start from single bytes and join, again and
//! again, the adjacent pair whose joined bytes have the lowest rank, until
//! no adjacent pair is a token. A token's id is its rank. `bpe-openai`
//! reaches the same encoding by another route for o200k (it checks this
//! against tiktoken), and the tests here compare counts with it.
//!
//! The merge is quadratic in the piece's length, as tiktoken's is; pieces
//! are words, numbers of up to three digits and punctuation runs, so long
//! ones are rare, and those past [`LONGEST_MERGED`] bytes are left to
//! `bpe-openai` (loaded on first use).

use super::rank_hash::rank_hash;

static TOKENS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_tokens.bin"));
static STARTS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_starts.bin"));
static SLOTS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_slots.bin"));

/// Pieces longer than this are counted by `bpe-openai`'s linear encoder.
const LONGEST_MERGED: usize = 4096;

/// Tokens of one pre-tokenizer piece under o200k_base.
pub fn count_piece(piece: &[u8]) -> u64 {
    if piece.len() > LONGEST_MERGED {
        return bpe_openai::o200k_base().bpe.count(piece) as u64;
    }
    if piece.len() <= 1 || rank(piece).is_some() {
        return piece.len().min(1) as u64;
    }
    merged_parts(piece) as u64
}

/// The little-endian `u32` at `index` of `table`.
fn word(table: &[u8], index: usize) -> u32 {
    u32::from_le_bytes(table[4 * index..4 * index + 4].try_into().expect("four bytes"))
}

/// The rank (id) of the token whose bytes are `bytes`, if o200k has one.
fn rank(bytes: &[u8]) -> Option<u32> {
    let mask = SLOTS.len() / 4 - 1;
    let mut slot = rank_hash(bytes) as usize & mask;
    loop {
        let id = word(SLOTS, slot).checked_sub(1)?;
        let (start, end) = (word(STARTS, id as usize) as usize, word(STARTS, id as usize + 1) as usize);
        if &TOKENS[start..end] == bytes {
            return Some(id);
        }
        slot = (slot + 1) & mask;
    }
}

/// The number of tokens the merge leaves of `piece` (two bytes or more).
fn merged_parts(piece: &[u8]) -> usize {
    // Each part's start, and the rank of it joined with the next part.
    let pair_rank = |starts: &[(usize, u32)], i: usize| match starts.get(i + 2) {
        Some(&(end, _)) => rank(&piece[starts[i].0..end]).unwrap_or(u32::MAX),
        None => u32::MAX,
    };
    let mut parts: Vec<(usize, u32)> = (0..=piece.len()).map(|start| (start, u32::MAX)).collect();
    for i in 0..piece.len() - 1 {
        parts[i].1 = pair_rank(&parts, i);
    }
    loop {
        let Some((i, _)) = parts.iter().enumerate().filter(|(_, part)| part.1 != u32::MAX).min_by_key(|(_, part)| part.1) else {
            return parts.len() - 1;
        };
        parts.remove(i + 1);
        parts[i].1 = pair_rank(&parts, i);
        if i > 0 {
            parts[i - 1].1 = pair_rank(&parts, i - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `bpe-openai`'s count of `text`, piece by piece.
    fn reference(text: &str) -> u64 {
        bpe_openai::o200k_base().count(text) as u64
    }

    fn counted(text: &str) -> u64 {
        bpe_openai::o200k_base().split(text).map(|piece| count_piece(piece.as_bytes())).sum()
    }

    #[test]
    fn every_token_is_found_with_its_own_rank() {
        let bpe = &bpe_openai::o200k_base().bpe;
        assert_eq!(STARTS.len() / 4 - 1, bpe.num_tokens());
        for id in 0..bpe.num_tokens() as u32 {
            assert_eq!(rank(bpe.token_bytes(id)), Some(id));
        }
        assert_eq!(rank(b"no such token in o200k, surely"), None);
    }

    #[test]
    fn counts_match_bpe_openai_on_every_corpus_file() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
        let mut files = 0;
        for entry in walk(&corpus) {
            let Ok(text) = std::fs::read_to_string(&entry) else { continue };
            assert_eq!(counted(&text), reference(&text), "{}", entry.display());
            files += 1;
        }
        assert!(files > 100, "the corpus holds {files} text files");
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).expect("the corpus is readable").flatten() {
            let path = entry.path();
            if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
        }
        files
    }

    #[test]
    fn a_piece_past_the_merge_limit_is_counted_alike() {
        let long = "z".repeat(LONGEST_MERGED + 7);
        assert_eq!(count_piece(long.as_bytes()), bpe_openai::o200k_base().bpe.count(long.as_bytes()) as u64);
        let at_limit = "q".repeat(LONGEST_MERGED);
        assert_eq!(count_piece(at_limit.as_bytes()), bpe_openai::o200k_base().bpe.count(at_limit.as_bytes()) as u64);
    }

    proptest! {
        #[test]
        fn counts_match_bpe_openai_on_any_text(text in "(\\PC|[ \\n\\t]){0,80}") {
            prop_assert_eq!(counted(&text), reference(&text));
        }

        #[test]
        fn counts_match_bpe_openai_on_words_and_code(text in "([a-zA-Z]{1,12}|[0-9]{1,5}|[ .,:;(){}<>=\"'_/-]{1,3}|\\n){0,40}") {
            prop_assert_eq!(counted(&text), reference(&text));
        }
    }
}
