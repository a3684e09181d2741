//! Generates `harness/agent/src/estimate/han_table.rs`: one bit per Han
//! character of U+4E00–U+9FFF, set when o200k_base never merges the
//! character with a neighbour, that is when no token of its vocabulary
//! holds it beside another CJK character (Han or kana).
//!
//! o200k's vocabulary merges the frequent words of simplified Chinese and
//! Japanese into single tokens; the characters of traditional Chinese, and
//! rare ones, stand alone (one token, or two or three byte pieces). A chunk
//! where many Han characters stand alone is traditional Chinese, which costs
//! about a third more per character (`estimate::ratios`).
//!
//! ```sh
//! cargo run --release -p reloop-benches --example han_table
//! ```

use std::collections::HashSet;

use reloop_benches::estimate_table::TableFile;

/// The Han block the table covers (CJK Unified Ideographs).
const FIRST: u32 = 0x4e00;
const LAST: u32 = 0x9fff;

fn is_han(c: char) -> bool {
    (FIRST..=LAST).contains(&u32::from(c))
}

/// Kana or Han: the characters o200k merges into CJK words.
fn is_cjk_letter(c: char) -> bool {
    (0x3040..=LAST).contains(&u32::from(c))
}

/// The Han characters that some o200k token holds beside another CJK character.
fn merged_han() -> HashSet<char> {
    let bpe = &bpe_openai::o200k_base().bpe;
    let mut merged = HashSet::new();
    for id in 0..bpe.num_tokens() as u32 {
        let Ok(token) = std::str::from_utf8(bpe.token_bytes(id)) else { continue };
        if token.chars().filter(|&c| is_cjk_letter(c)).count() >= 2 {
            merged.extend(token.chars().filter(|&c| is_han(c)));
        }
    }
    merged
}

fn main() {
    let merged = merged_han();
    let mut words = vec![0u64; ((LAST - FIRST + 1) as usize).div_ceil(64)];
    for code in FIRST..=LAST {
        let c = char::from_u32(code).expect("the Han block holds no surrogates");
        if !merged.contains(&c) {
            let bit = (code - FIRST) as usize;
            words[bit / 64] |= 1 << (bit % 64);
        }
    }
    let lone: u32 = words.iter().map(|w| w.count_ones()).sum();
    let summary = [format!("{lone} of the {} Han characters of U+4E00–U+9FFF stand alone in o200k_base.", LAST - FIRST + 1)];
    let mut table = TableFile::new("han_table", &summary, FIRST, LAST);
    table.words(&["Bit `c - FIRST`: o200k holds Han character `c` in no token beside another CJK character."], "LONE_HAN", &words);
    let path = table.write("han_table");
    println!("{lone} lone Han characters written to {}", path.display());
}
