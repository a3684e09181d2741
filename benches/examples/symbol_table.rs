//! Generates `harness/agent/src/estimate/symbol_table.rs`: what o200k_base
//! charges for each character of U+0080–U+2FFF but blanks and controls
//! (accented letters, Greek and Cyrillic, punctuation, arrows, check marks,
//! box drawing, math): two bits a character, its tokens when it stands
//! alone (1, 2, or 3 for three or more), and the few characters whose runs
//! o200k holds as one token.
//!
//! The estimate used to charge every such character one price and a run of
//! one character once, as for the rules drawn with `─`. Of the 4,986
//! symbols of the range, 12 merge in runs that way; vitest's `⎯` costs three tokens a
//! character, and a page of them was undercounted by a quarter.
//!
//! ```sh
//! cargo run --release -p reloop-benches --example symbol_table
//! ```

use reloop_benches::estimate_table::TableFile;

/// The characters the table covers.
const FIRST: u32 = 0x80;
const LAST: u32 = 0x2fff;

/// A character the table prices: not a blank or a control.
fn is_priced(c: char) -> bool {
    !(c.is_whitespace() || c.is_control())
}

fn main() {
    let tokenizer = bpe_openai::o200k_base();
    let mut words = vec![0u64; ((LAST - FIRST + 1) as usize).div_ceil(32)];
    let mut merging = Vec::new();
    for code in FIRST..=LAST {
        let Some(c) = char::from_u32(code).filter(|&c| is_priced(c)) else { continue };
        let alone = tokenizer.count(&c.to_string()).min(3) as u64;
        let slot = (code - FIRST) as usize;
        words[slot / 32] |= alone << (2 * (slot % 32));
        if tokenizer.count(&c.to_string().repeat(8)) <= 2 {
            merging.push(code);
        }
    }
    let mut table = TableFile::new("symbol_table", &[], FIRST, LAST);
    table.line("/// The symbols whose runs o200k holds as one token (eight in a row cost at most two).");
    let listed: Vec<String> = merging.iter().map(|code| format!("{code:#x}")).collect();
    table.line(&format!("pub(super) const RUN_MERGING: [u32; {}] = [{}];", merging.len(), listed.join(", ")));
    let doc = ["Bits `2 (c - FIRST)` and up: the tokens of character `c` alone, 3 for three or more; 0", "for blanks and controls."];
    table.words(&doc, "SYMBOL_TOKENS", &words);
    let path = table.write("symbol_table");
    println!(
        "{} characters priced, {} merging in runs, written to {}",
        words.iter().map(|w| (0..32).filter(|i| w >> (2 * i) & 3 != 0).count()).sum::<usize>(),
        merging.len(),
        path.display()
    );
}
