//! What a non-ASCII character costs, read from its bytes: its script
//! (kana, Hangul, CJK punctuation, or none of them), whether o200k merges a
//! Han character with its neighbours (`han_table`), and what o200k charges
//! any other character alone (`symbol_table`).

use super::han_table::{FIRST as HAN_FIRST, LAST as HAN_LAST, LONE_HAN};
use super::symbol_table::{FIRST as SYMBOL_FIRST, LAST as SYMBOL_LAST, RUN_MERGING, SYMBOL_TOKENS};

/// What o200k charges for non-ASCII character `c` alone (from
/// `symbol_table`; 2 past the table's end, where emoji and rarer scripts
/// cost 1 to 4).
pub(super) fn symbol_tokens(c: char) -> usize {
    let code = u32::from(c);
    if code > SYMBOL_LAST {
        return 2;
    }
    let slot = code.checked_sub(SYMBOL_FIRST).expect("non-ASCII") as usize;
    (SYMBOL_TOKENS[slot / 32] >> (2 * (slot % 32)) & 3) as usize
}

/// Whether o200k holds a run of `c` as one token (`─`, `…`).
pub(super) fn is_run_merging(c: char) -> bool {
    RUN_MERGING.contains(&u32::from(c))
}

/// The script of the character that starts at `at` of valid UTF-8, and
/// its length. Every CJK script is of three bytes, whose code point is a
/// few shifts away: no decoding through `char`, since most non-ASCII
/// characters of a text are kana or Hangul.
pub(super) fn script_at(bytes: &[u8], at: usize) -> (Script, usize) {
    let lead = bytes[at];
    if !(0xe0..=0xef).contains(&lead) {
        return (Script::Other, if lead < 0xe0 { 2 } else { 4 });
    }
    let code = u32::from(lead & 0x0f) << 12 | u32::from(bytes[at + 1] & 0x3f) << 6 | u32::from(bytes[at + 2] & 0x3f);
    (script_of(code), 3)
}

/// The script of code point `code`.
fn script_of(code: u32) -> Script {
    match code {
        0x3040..=0x30ff => Script::Kana,
        0xac00..=0xd7af => Script::Hangul,
        0x3000..=0x303f | 0xff00..=0xffef => Script::CjkPunct,
        _ => Script::Other,
    }
}

/// The character of `len` bytes that starts at `at` of valid UTF-8.
pub(super) fn decode(bytes: &[u8], at: usize, len: usize) -> char {
    let bits = u32::from(bytes[at]) & (0x7f >> len);
    let code = bytes[at + 1..at + len].iter().fold(bits, |code, &b| code << 6 | u32::from(b & 0x3f));
    char::from_u32(code).expect("a character of valid UTF-8")
}

/// Whether o200k never merges Han character `code` with a neighbour. The
/// leading bytes of the Han mask also start U+4000–U+4DFF (rare extension
/// characters and hexagrams), which are not in the table.
pub(super) fn is_lone_han(code: u32) -> bool {
    code.checked_sub(HAN_FIRST).is_some_and(|bit| {
        let bit = bit as usize;
        code <= HAN_LAST && LONE_HAN[bit / 64] >> (bit % 64) & 1 == 1
    })
}

/// The kinds of non-ASCII characters other than Han that the estimate
/// charges apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Script {
    /// Hiragana and katakana (U+3040–U+30FF).
    Kana,
    /// Hangul syllables (U+AC00–U+D7AF).
    Hangul,
    /// CJK punctuation and full-width forms (U+3000–U+303F, U+FF00–U+FFEF).
    CjkPunct,
    /// Any other: Han (counted apart), symbols, accented letters.
    Other,
}

/// The script of `c`: the definition `script_at` reads from bytes.
#[cfg(test)]
pub(super) fn script(c: char) -> Script {
    script_of(u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_from_bytes_agree_with_the_characters() {
        for c in '\u{80}'..='\u{10ffff}' {
            let text = format!("{c}  ");
            let (script_of_bytes, len) = script_at(text.as_bytes(), 0);
            assert_eq!((script_of_bytes, len), (script(c), c.len_utf8()), "{c:?}");
            assert_eq!(decode(text.as_bytes(), 0, len), c);
        }
    }
}
