//! One pass over a text, cut into chunks at line ends, counting per chunk
//! what the classifier looks at and what the estimate charges.
//!
//! The pieces counted are the ones a BPE pre-tokenizer cuts before merging
//! (see `ratios`); counting them costs a few comparisons per character, far
//! below what tokenizing would.

use super::ratios::CHUNK_BYTES;

/// What one chunk is made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Features {
    /// Length in bytes.
    pub bytes: usize,
    /// CJK characters and their bytes.
    pub cjk_chars: usize,
    pub cjk_bytes: usize,
    /// Other non-ASCII characters (a run of one character counted once) and
    /// all their bytes.
    pub symbols: usize,
    pub symbol_bytes: usize,
    /// ASCII digits, and the groups of at most three they split into.
    pub digits: usize,
    pub number_groups: usize,
    /// Letter runs directly after a digit.
    pub id_pieces: usize,
    /// ASCII punctuation bytes, and the runs they form.
    pub punct: usize,
    pub punct_runs: usize,
    /// Of the punctuation, the bytes typical of JSON and markup
    /// (`"{}[]:,<>=`), and of code (`();`).
    pub markup_punct: usize,
    pub call_punct: usize,
    /// Spaces, tabs, carriage returns and line ends.
    pub blank: usize,
    /// Leading whitespace bytes, and the lines that have some.
    pub indent: usize,
    pub indented_lines: usize,
    /// Line ends.
    pub line_ends: usize,
}

impl Features {
    /// Bytes charged at the class ratio: everything not charged per piece.
    pub fn plain_bytes(&self) -> usize {
        self.bytes - self.cjk_bytes - self.symbol_bytes - self.digits - self.indent
    }

    /// Bytes that are not whitespace (at least 1, to divide by).
    pub fn non_blank(&self) -> usize {
        (self.bytes - self.blank).max(1)
    }
}

/// Calls `on_chunk` for each chunk of `text`: a chunk ends at the first line
/// end after [`CHUNK_BYTES`] bytes, or with the text.
pub(super) fn scan(text: &str, mut on_chunk: impl FnMut(&Features)) {
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        // A line end is one byte in UTF-8 and never inside a character, so
        // the search can run over bytes.
        let search_from = (start + CHUNK_BYTES - 1).min(bytes.len());
        let end = bytes[search_from..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |at| search_from + at + 1);
        on_chunk(&chunk_features(&text[start..end]));
        start = end;
    }
}

// What an ASCII byte is, for the counting below. Three kinds of
// punctuation: JSON and markup (`"{}[]:,<>=`), code calls (`();`), the rest.
const LINE_END: u8 = 0;
const BLANK: u8 = 1;
const DIGIT: u8 = 2;
const LETTER: u8 = 3;
const MARKUP: u8 = 4;
const CALL: u8 = 5;
const PUNCT: u8 = 6;
/// A non-ASCII character, which ends every run.
const OTHER: u8 = 7;

/// The kind of each ASCII byte.
static ASCII_KIND: [u8; 128] = {
    let mut kinds = [PUNCT; 128];
    let mut b = 0;
    while b < 128 {
        kinds[b] = match b as u8 {
            b'\n' => LINE_END,
            b' ' | b'\t' | b'\r' => BLANK,
            b'0'..=b'9' => DIGIT,
            b'a'..=b'z' | b'A'..=b'Z' => LETTER,
            b'"' | b'{' | b'}' | b'[' | b']' | b':' | b',' | b'<' | b'>' | b'=' => MARKUP,
            b'(' | b')' | b';' => CALL,
            _ => PUNCT,
        };
        b += 1;
    }
    kinds
};

// Byte lanes of the packed counters: each ASCII byte adds
// `PAIR_COUNTS[previous kind][kind]`, eight counters in one addition.
const LANE_BLANK: u32 = 0;
const LANE_LINE_END: u32 = 1;
const LANE_DIGIT: u32 = 2;
const LANE_ID_PIECE: u32 = 3;
const LANE_PUNCT: u32 = 4;
const LANE_PUNCT_RUN: u32 = 5;
const LANE_MARKUP: u32 = 6;
const LANE_CALL: u32 = 7;
/// A lane holds at most 255: the packed counters are emptied this often.
const LANE_MAX_BYTES: usize = 255;

/// Whether a kind is punctuation.
const fn is_punct(kind: u8) -> bool {
    matches!(kind, MARKUP | CALL | PUNCT)
}

/// What a byte of kind `kind` after one of kind `previous` adds to each
/// lane, indexed by `previous << 3 | kind`.
static PAIR_COUNTS: [u64; 64] = {
    let mut table = [0u64; 64];
    let mut index = 0;
    while index < 64 {
        let (previous, kind) = ((index >> 3) as u8, (index & 7) as u8);
        let lanes = [
            (LANE_BLANK, kind == BLANK || kind == LINE_END),
            (LANE_LINE_END, kind == LINE_END),
            (LANE_DIGIT, kind == DIGIT),
            (LANE_ID_PIECE, kind == LETTER && previous == DIGIT),
            (LANE_PUNCT, is_punct(kind)),
            (LANE_PUNCT_RUN, is_punct(kind) && !is_punct(previous)),
            (LANE_MARKUP, kind == MARKUP),
            (LANE_CALL, kind == CALL),
        ];
        let mut value = 0u64;
        let mut lane = 0;
        while lane < lanes.len() {
            if lanes[lane].1 {
                value |= 1 << (8 * lanes[lane].0);
            }
            lane += 1;
        }
        table[index] = value;
        index += 1;
    }
    table
};

/// Counts one chunk. ASCII bytes, nearly all of most texts, take a table
/// look-up and a few branch-free operations each; other characters are
/// decoded one by one.
fn chunk_features(chunk: &str) -> Features {
    let bytes = chunk.as_bytes();
    let mut f = Features { bytes: bytes.len(), ..Features::default() };
    let mut packed = 0u64;
    let mut packed_bytes = 0;
    let mut previous = LINE_END;
    let mut previous_char = '\n';
    // Inside the leading whitespace of a line.
    let mut line_start = true;
    // Position within the current three-digit group (0 when one starts).
    let mut digit_phase = 0u8;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b >= 0x80 {
            let c = chunk[i..].chars().next().expect("a character starts at a non-continuation byte");
            if is_cjk(c) {
                f.cjk_chars += 1;
                f.cjk_bytes += c.len_utf8();
            } else {
                f.symbol_bytes += c.len_utf8();
                f.symbols += usize::from(c != previous_char);
            }
            (previous, previous_char, line_start, digit_phase) = (OTHER, c, false, 0);
            i += c.len_utf8();
            continue;
        }
        let kind = ASCII_KIND[b as usize];
        packed += PAIR_COUNTS[usize::from(previous << 3 | kind)];
        let blank = kind == BLANK;
        let leading = line_start & blank;
        f.indent += usize::from(leading);
        f.indented_lines += usize::from(leading & (previous == LINE_END));
        line_start = (kind == LINE_END) | leading;
        let digit = kind == DIGIT;
        f.number_groups += usize::from(digit & (digit_phase == 0));
        digit_phase = if digit && digit_phase < 2 { digit_phase + 1 } else { 0 };
        (previous, previous_char) = (kind, char::from(b));
        packed_bytes += 1;
        if packed_bytes == LANE_MAX_BYTES {
            unpack(&mut f, std::mem::take(&mut packed));
            packed_bytes = 0;
        }
        i += 1;
    }
    unpack(&mut f, packed);
    f
}

/// Adds the packed lane counters to `f`.
fn unpack(f: &mut Features, packed: u64) {
    let lane = |index: u32| ((packed >> (8 * index)) & 0xff) as usize;
    f.blank += lane(LANE_BLANK);
    f.line_ends += lane(LANE_LINE_END);
    f.digits += lane(LANE_DIGIT);
    f.id_pieces += lane(LANE_ID_PIECE);
    f.punct += lane(LANE_PUNCT);
    f.punct_runs += lane(LANE_PUNCT_RUN);
    f.markup_punct += lane(LANE_MARKUP);
    f.call_punct += lane(LANE_CALL);
}

/// CJK punctuation and kana to ideographs (U+3000–U+9FFF), Hangul syllables,
/// and full-width forms: about one token each in o200k.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3000}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}' | '\u{ff00}'..='\u{ffef}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(text: &str) -> Features {
        let mut all = Vec::new();
        scan(text, |f| all.push(*f));
        assert_eq!(all.len(), 1, "one chunk");
        all[0]
    }

    #[test]
    fn counts_the_pieces_a_pre_tokenizer_cuts() {
        let f = features("  id: 4f0c2d, n: 1234567\n");
        assert_eq!(f.bytes, 25);
        assert_eq!((f.indent, f.indented_lines), (2, 1));
        assert_eq!(f.digits, 10);
        // 4 | 0 | 2 | 123 456 7
        assert_eq!(f.number_groups, 6);
        // f, c, d after a digit
        assert_eq!(f.id_pieces, 3);
        // ":", ",", ":"
        assert_eq!((f.punct, f.punct_runs, f.markup_punct), (3, 3, 3));
    }

    #[test]
    fn cjk_and_symbols() {
        let f = features("数据备份 ──── é");
        assert_eq!((f.cjk_chars, f.cjk_bytes), (4, 12));
        // The rule is one symbol, é another.
        assert_eq!((f.symbols, f.symbol_bytes), (2, 14));
        assert_eq!(f.plain_bytes(), 2);
    }

    /// The counts by their definitions, one character at a time: what the
    /// table-driven scan must agree with.
    fn oracle(text: &str) -> Features {
        let mut f = Features { bytes: text.len(), ..Features::default() };
        let chars: Vec<char> = text.chars().collect();
        let is_punct = |c: char| c.is_ascii() && !c.is_ascii_alphanumeric() && !matches!(c, ' ' | '\t' | '\r' | '\n');
        for (i, &c) in chars.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| chars[j]);
            let line = &chars[..i].iter().rposition(|&p| p == '\n').map_or(&chars[..i], |at| &chars[at + 1..i]);
            let in_leading_blank = line.iter().all(|&p| matches!(p, ' ' | '\t' | '\r'));
            let digit_run = chars[..i].iter().rev().take_while(|p| p.is_ascii_digit()).count();
            match c {
                '\n' => (f.blank, f.line_ends) = (f.blank + 1, f.line_ends + 1),
                ' ' | '\t' | '\r' => {
                    f.blank += 1;
                    if in_leading_blank {
                        f.indent += 1;
                        f.indented_lines += usize::from(line.is_empty());
                    }
                }
                '0'..='9' => (f.digits, f.number_groups) = (f.digits + 1, f.number_groups + usize::from(digit_run % 3 == 0)),
                'a'..='z' | 'A'..='Z' => f.id_pieces += usize::from(before.is_some_and(|p| p.is_ascii_digit())),
                c if c.is_ascii() => {
                    f.punct += 1;
                    f.punct_runs += usize::from(!before.is_some_and(is_punct));
                    f.markup_punct += usize::from("\"{}[]:,<>=".contains(c));
                    f.call_punct += usize::from("();".contains(c));
                }
                c if is_cjk(c) => (f.cjk_chars, f.cjk_bytes) = (f.cjk_chars + 1, f.cjk_bytes + c.len_utf8()),
                c => (f.symbols, f.symbol_bytes) = (f.symbols + usize::from(before != Some(c)), f.symbol_bytes + c.len_utf8()),
            }
        }
        f
    }

    #[test]
    fn the_table_driven_scan_counts_as_the_definitions_say() {
        let texts = [
            "  id: 4f0c2d, n: 1234567\n\t\tfn x() { call(a, b); }\n",
            "数据备份 ──── é\n  键: 值 1234 ok\n",
            "\n\n   \n 12345678901 v2 128k ((;;)) <a href=\"x\">[1]</a>\r\n",
            "",
        ];
        for text in texts {
            assert_eq!(chunk_features(text), oracle(text), "{text:?}");
        }
        // Longer than one lane's capacity, so the packed counters overflow
        // unless they are emptied in time.
        let long = "{\"k\": [1, 2, 3]}, ".repeat(200);
        assert_eq!(chunk_features(&long), oracle(&long));
    }

    #[test]
    fn long_texts_split_at_line_ends() {
        let line = "x".repeat(99) + "\n";
        let text = line.repeat(12);
        let mut sizes = Vec::new();
        scan(&text, |f| sizes.push(f.bytes));
        assert_eq!(sizes, vec![600, 600]);
        let mut none = 0;
        scan("", |_| none += 1);
        assert_eq!(none, 0);
    }
}
