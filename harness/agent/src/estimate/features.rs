//! One pass over a text, cut into chunks at line ends, counting per chunk
//! what the classifier looks at and what the estimate charges.
//!
//! The pieces counted are the ones a BPE pre-tokenizer cuts before merging
//! (see `ratios`); counting them costs a few comparisons per character, far
//! below what tokenizing would.

use super::han_table::{FIRST as HAN_FIRST, LAST as HAN_LAST, LONE_HAN};
use super::masks::{BLOCK, ByteMasks};
use super::ratios::CHUNK_BYTES;

/// What one chunk is made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Features {
    /// Length in bytes.
    pub bytes: usize,
    /// CJK characters and their bytes.
    pub cjk_chars: usize,
    pub cjk_bytes: usize,
    /// Of the CJK characters, the Han ideographs (U+4E00–U+9FFF), and of
    /// those the ones o200k never merges with a neighbour (`han_table`).
    pub han_chars: usize,
    pub lone_han: usize,
    /// Other non-ASCII characters (a run of one character counted once) and
    /// all their bytes.
    pub symbols: usize,
    pub symbol_bytes: usize,
    /// ASCII digits, and the groups of at most three they split into.
    pub digits: usize,
    pub number_groups: usize,
    /// Letter runs directly after a digit.
    pub id_pieces: usize,
    /// Single punctuation bytes between two letters (`layout_width`,
    /// `android:id`, `self.name`): o200k's pre-tokenizer joins such a byte
    /// to the word after it, so it costs less than a run of its own.
    pub joined_punct: usize,
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
    /// ASCII punctuation and blanks past a line's indentation from the
    /// fourth byte of a run of one byte on (`=====`, `-----`, alignment
    /// spaces): o200k holds a run of up to 64 such bytes as one token, while
    /// two or three (`==`, `));`) cost as much as other punctuation.
    pub repeats: usize,
}

impl Features {
    /// Bytes charged at the class ratio: everything not charged per piece.
    pub fn plain_bytes(&self) -> usize {
        self.bytes - self.cjk_bytes - self.symbol_bytes - self.digits - self.indent - self.repeats
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

/// Counts one chunk, a block of 64 bytes at a time (see [`ByteMasks`]).
fn chunk_features(chunk: &str) -> Features {
    let bytes = chunk.as_bytes();
    let mut counter = Counter { f: Features { bytes: bytes.len(), ..Features::default() }, ..Counter::default() };
    let mut blocks = bytes.chunks_exact(BLOCK);
    for (k, block) in blocks.by_ref().enumerate() {
        let block: &[u8; BLOCK] = block.try_into().expect("chunks_exact yields whole blocks");
        counter.add_block(&ByteMasks::of(block, BLOCK), chunk, k * BLOCK);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut block = [0u8; BLOCK];
        block[..tail.len()].copy_from_slice(tail);
        counter.add_block(&ByteMasks::of(&block, tail.len()), chunk, bytes.len() - tail.len());
    }
    counter.finish()
}

/// The counts so far, and what the next block needs of the byte before it.
struct Counter {
    f: Features,
    /// The byte before the block ended a line (true at the chunk's start).
    after_line_end: bool,
    /// The byte before the block was a blank in a line's leading whitespace.
    in_indent: bool,
    after_digit: bool,
    after_punct: bool,
    /// The previous block's letters and punctuation.
    letters_before: u64,
    punct_before: u64,
    /// The bytes of the block before that repeated the byte before them.
    repeated: u64,
    /// Digits of a run still open at the block's end.
    digit_run: u32,
    /// The last non-ASCII character, and where it ended in the chunk.
    last_char: char,
    last_char_end: usize,
}

impl Default for Counter {
    fn default() -> Self {
        Self {
            f: Features::default(),
            after_line_end: true,
            in_indent: false,
            after_digit: false,
            after_punct: false,
            letters_before: 0,
            punct_before: 0,
            repeated: 0,
            digit_run: 0,
            last_char: '\n',
            last_char_end: usize::MAX,
        }
    }
}

impl Counter {
    /// Adds the block of `chunk` that starts at `offset`.
    fn add_block(&mut self, m: &ByteMasks, chunk: &str, offset: usize) {
        let count = |mask: u64| mask.count_ones() as usize;
        let f = &mut self.f;
        let punct = m.punct();
        f.blank += count(m.blank | m.line_end);
        f.line_ends += count(m.line_end);
        f.digits += count(m.digit);
        f.id_pieces += count(m.letter & (m.digit << 1 | u64::from(self.after_digit)));
        f.punct += count(punct);
        f.punct_runs += count(punct & !(punct << 1 | u64::from(self.after_punct)));
        // A letter whose byte before is punctuation and whose byte two
        // before is a letter ends a joined punctuation byte.
        let punct_1 = punct << 1 | self.punct_before >> 63;
        let letter_2 = m.letter << 2 | self.letters_before >> 62;
        f.joined_punct += count(m.letter & punct_1 & letter_2);
        (self.letters_before, self.punct_before) = (m.letter, punct);
        f.markup_punct += count(m.markup);
        f.call_punct += count(m.call);

        // Leading whitespace: the runs of blanks that start a line. Adding a
        // run's first bit to the blanks carries through the run and clears
        // it; the carry out of the block means the run goes on.
        let line_starts = m.line_end << 1 | u64::from(self.after_line_end);
        let run_starts = m.blank & (line_starts | u64::from(self.in_indent));
        let (carried, run_goes_on) = m.blank.overflowing_add(run_starts);
        let indent = m.blank & !carried;
        f.indent += count(indent);
        f.indented_lines += count(m.blank & line_starts);
        // A byte is the fourth of a run or later when it and the two bytes
        // before it each repeat the byte before them.
        let bytes = chunk.as_bytes();
        let repeated = m.repeat | u64::from(offset > 0 && bytes[offset] == bytes[offset - 1]);
        let fourth_on = repeated & (repeated << 1 | self.repeated >> 63) & (repeated << 2 | self.repeated >> 62);
        f.repeats += count(fourth_on & (punct | m.blank) & !indent);
        self.repeated = repeated;

        let cjk = count(m.cjk_start);
        (f.cjk_chars, f.cjk_bytes) = (f.cjk_chars + cjk, f.cjk_bytes + 3 * cjk);
        f.han_chars += count(m.han_start);
        self.add_lone_han(m.han_start, chunk.as_bytes(), offset);
        self.add_digit_groups(m.digit);
        // The other characters one by one. A symbol right after a CJK
        // character counted here differs from it anyway.
        self.add_non_ascii(m.char_start & !m.cjk_start, chunk, offset);
        let last = |mask: u64| mask >> (BLOCK - 1) == 1;
        (self.after_line_end, self.in_indent) = (last(m.line_end), run_goes_on);
        (self.after_digit, self.after_punct) = (last(m.digit), last(punct));
    }

    /// Looks up each Han ideograph that starts in the block in the table
    /// of lone characters.
    fn add_lone_han(&mut self, mut starts: u64, bytes: &[u8], offset: usize) {
        while starts != 0 {
            let at = offset + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            // A leading byte of 0xe4 to 0xe9 starts a three-byte character.
            let [lead, second, third] = [bytes[at], bytes[at + 1], bytes[at + 2]];
            let code = u32::from(lead & 0x0f) << 12 | u32::from(second & 0x3f) << 6 | u32::from(third & 0x3f);
            debug_assert!((HAN_FIRST..=HAN_LAST).contains(&code), "the mask holds Han leading bytes only");
            let bit = (code - HAN_FIRST) as usize;
            self.f.lone_han += (LONE_HAN[bit / 64] >> (bit % 64) & 1) as usize;
        }
    }

    /// Counts the groups of at most three digits that each run splits into,
    /// a run open at the block's start continuing the one before.
    fn add_digit_groups(&mut self, digits: u64) {
        let mut rest = digits;
        while rest != 0 {
            let start = rest.trailing_zeros();
            let len = (rest >> start).trailing_ones();
            if start > 0 {
                self.close_digit_run();
            }
            self.digit_run += len;
            if start + len == BLOCK as u32 {
                return;
            }
            self.close_digit_run();
            rest &= !((u64::MAX >> (BLOCK as u32 - len)) << start);
        }
        self.close_digit_run();
    }

    fn close_digit_run(&mut self) {
        self.f.number_groups += self.digit_run.div_ceil(3) as usize;
        self.digit_run = 0;
    }

    /// Decodes each non-ASCII character that starts in the block.
    fn add_non_ascii(&mut self, mut starts: u64, chunk: &str, offset: usize) {
        while starts != 0 {
            let at = offset + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            let c = chunk[at..].chars().next().expect("a character starts at a leading byte");
            if is_cjk(c) {
                self.f.cjk_chars += 1;
                self.f.cjk_bytes += c.len_utf8();
            } else {
                self.f.symbol_bytes += c.len_utf8();
                // A run of one character counts once.
                self.f.symbols += usize::from(self.last_char_end != at || self.last_char != c);
            }
            (self.last_char, self.last_char_end) = (c, at + c.len_utf8());
        }
    }

    fn finish(mut self) -> Features {
        self.close_digit_run();
        self.f
    }
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
    fn han_characters_that_o200k_never_merges_stand_alone() {
        // 数据 is one o200k token; 數據 (its traditional form) two, and
        // no token holds 數 or 據 beside another character.
        let f = features("数据 數據");
        assert_eq!((f.han_chars, f.lone_han), (4, 2));
        let f = features("android:layout_width a_b a.b. x__y");
        // `:`, `_`, `_`, `.` between letters; not the run `__`.
        assert_eq!(f.joined_punct, 4);
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
    /// block-wise scan must agree with.
    fn oracle(text: &str) -> Features {
        let mut f = Features { bytes: text.len(), ..Features::default() };
        let chars: Vec<char> = text.chars().collect();
        let is_punct = |c: char| c.is_ascii() && !c.is_ascii_alphanumeric() && !matches!(c, ' ' | '\t' | '\r' | '\n');
        for (i, &c) in chars.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| chars[j]);
            let line = &chars[..i].iter().rposition(|&p| p == '\n').map_or(&chars[..i], |at| &chars[at + 1..i]);
            let in_leading_blank = line.iter().all(|&p| matches!(p, ' ' | '\t' | '\r'));
            let digit_run = chars[..i].iter().rev().take_while(|p| p.is_ascii_digit()).count();
            let fourth_on = i >= 3 && chars[i - 3..i].iter().all(|&p| p == c);
            let repeats = fourth_on && (is_punct(c) || (matches!(c, ' ' | '\t' | '\r') && !in_leading_blank));
            f.repeats += usize::from(repeats);
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
                'a'..='z' | 'A'..='Z' => {
                    f.id_pieces += usize::from(before.is_some_and(|p| p.is_ascii_digit()));
                    let joined = i >= 2 && is_punct(chars[i - 1]) && chars[i - 2].is_ascii_alphabetic();
                    f.joined_punct += usize::from(joined);
                }
                c if c.is_ascii() => {
                    f.punct += 1;
                    f.punct_runs += usize::from(!before.is_some_and(is_punct));
                    f.markup_punct += usize::from("\"{}[]:,<>=".contains(c));
                    f.call_punct += usize::from("();".contains(c));
                }
                c if is_cjk(c) => {
                    (f.cjk_chars, f.cjk_bytes) = (f.cjk_chars + 1, f.cjk_bytes + c.len_utf8());
                    let code = u32::from(c);
                    if (HAN_FIRST..=HAN_LAST).contains(&code) {
                        let bit = (code - HAN_FIRST) as usize;
                        f.han_chars += 1;
                        f.lone_han += (LONE_HAN[bit / 64] >> (bit % 64) & 1) as usize;
                    }
                }
                c => (f.symbols, f.symbol_bytes) = (f.symbols + usize::from(before != Some(c)), f.symbol_bytes + c.len_utf8()),
            }
        }
        f
    }

    #[test]
    fn the_block_scan_counts_as_the_definitions_say() {
        let texts = [
            "  id: 4f0c2d, n: 1234567\n\t\tfn x() { call(a, b); }\n",
            "数据备份 ──── é\n  键: 值 1234 ok\n",
            "한국어 테스트 ꀀ힣 ＡＢ！ 。「」 ─ ─── ̀é\n",
            "\n\n   \n 12345678901 v2 128k ((;;)) <a href=\"x\">[1]</a>\r\n",
            "==== FAILURES ====\n  a    b\t\tc ---- __ ..\n",
            "",
        ];
        for text in texts {
            assert_eq!(chunk_features(text), oracle(text), "{text:?}");
        }
        // Longer than one lane's capacity, so the packed counters overflow
        // unless they are emptied in time.
        let long = "{\"k\": [1, 2, 3]}, ".repeat(200);
        assert_eq!(chunk_features(&long), oracle(&long));
        // Joined punctuation and lone Han characters across block boundaries.
        let joined = "<View android:layout_width=\"match_parent\" app:tint=\"x\"/> self.name a_b 這個資料們数据\n".repeat(5);
        assert_eq!(chunk_features(&joined), oracle(&joined));
        // Runs across lane and block boundaries.
        let rules = format!("{}\n  x{}y\n", "=".repeat(150), " ".repeat(70));
        assert_eq!(chunk_features(&rules), oracle(&rules));
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
