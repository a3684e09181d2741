//! One pass over a text, cut into chunks at line ends, counting per chunk
//! what the classifier looks at and what the estimate charges.
//!
//! The pieces counted are the ones a BPE pre-tokenizer cuts before merging
//! (see `ratios`); counting them costs a few comparisons per character, far
//! below what tokenizing would.

use super::masks::{BLOCK, ByteMasks};
use super::non_ascii::{Script, decode, is_lone_han, is_run_merging, script_at, symbol_tokens};
use super::ratios::CHUNK_BYTES;

/// What one chunk is made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Features {
    /// Length in bytes.
    pub bytes: usize,
    /// Bytes of CJK characters (Han, kana, Hangul, CJK punctuation and
    /// full-width forms), which the classifier looks at.
    pub cjk_bytes: usize,
    /// Han ideographs (U+4E00–U+9FFF), and of those the ones o200k never
    /// merges with a neighbour (`han_table`): traditional Chinese has many.
    pub han_chars: usize,
    pub lone_han: usize,
    /// Hiragana and katakana.
    pub kana: usize,
    /// Words of Hangul syllables: o200k's pre-tokenizer cuts Korean at its
    /// spaces, and merges most words of a few syllables into two tokens.
    pub hangul_words: usize,
    /// CJK punctuation and full-width forms (`。`, `「`, `：`).
    pub cjk_punct: usize,
    /// Tokens of the other non-ASCII characters (accented letters,
    /// symbols), as o200k charges each alone (`symbol_table`), a run of one
    /// of the few that merge in runs (`─`, `…`) counted once.
    pub symbol_tokens: usize,
    /// Words: runs of ASCII letters, cut again where a lower-case letter is
    /// followed by an upper-case one (`camelCase` is two), as o200k's
    /// pre-tokenizer cuts them.
    pub words: usize,
    /// Of the words, those right after a blank (` word`, the form o200k
    /// holds most words in) and those right after punctuation (`_word`,
    /// `/word`, `.word`, which it holds less often).
    pub words_after_blank: usize,
    pub words_after_punct: usize,
    /// Consonants after three consonants (`nstr`, and the runs of
    /// identifiers, hashes and base64), which no common word has: such
    /// letters cost more.
    pub consonant_runs: usize,
    /// Groups of at most three digits that ASCII digit runs split into.
    pub number_groups: usize,
    /// ASCII punctuation bytes (control characters included), and the runs
    /// they form.
    pub punct: usize,
    pub punct_runs: usize,
    /// Runs of one punctuation byte between a non-blank and a letter
    /// (`self.name`, `layout_width`): the pre-tokenizer joins such a byte to
    /// the word after it, so the run costs nothing of its own.
    pub joined_punct: usize,
    /// Punctuation bytes from the fourth of a run on, unless the run repeats
    /// one byte (`=====`, which o200k holds as one token).
    pub long_punct: usize,
    /// Of the punctuation, the bytes typical of code calls (`();`).
    pub call_punct: usize,
    /// Line ends that start a run of them and do not follow punctuation
    /// (which the pre-tokenizer joins them to).
    pub line_breaks: usize,
    /// Runs of two or more blanks (indentation, alignment): all but their
    /// last blank form a piece of their own.
    pub blank_runs: usize,
    /// Digits right after a blank, which stays a piece of its own.
    pub digits_after_blank: usize,
    /// Spaces, tabs, carriage returns and line ends.
    pub blank: usize,
    /// Lines with leading whitespace, and line ends.
    pub indented_lines: usize,
    pub line_ends: usize,
}

impl Features {
    /// The figures the estimate charges ([`super::charged`]), in the order
    /// of [`super::ratios::TOKENS_PER`].
    pub fn charged(&self) -> [f64; super::FIGURES] {
        [
            self.words,
            self.words_after_blank,
            self.words_after_punct,
            self.consonant_runs,
            self.number_groups,
            self.punct_runs,
            self.joined_punct,
            self.long_punct,
            self.line_breaks,
            self.blank_runs,
            self.digits_after_blank,
            self.han_chars,
            self.lone_han,
            self.kana,
            self.hangul_words,
            self.cjk_punct,
            self.symbol_tokens,
        ]
        .map(|n| n as f64)
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
/// The counts are popcounts, which x86-64's baseline lacks as an
/// instruction (it emulates each with a dozen), and the masks take half the
/// steps with AVX2: where the CPU has them, the same code is compiled with
/// them.
fn chunk_features(chunk: &str) -> Features {
    #[cfg(target_arch = "x86_64")]
    {
        use std::is_x86_feature_detected as has;
        if has!("popcnt") && has!("avx2") {
            #[allow(unsafe_code, reason = "calling a target-feature function needs it")]
            // SAFETY: the CPU has both features, checked just above.
            return unsafe { chunk_features_popcnt::<true>(chunk) };
        }
        if has!("popcnt") {
            #[allow(unsafe_code, reason = "calling a target-feature function needs it")]
            // SAFETY: the CPU has the feature, checked just above.
            return unsafe { chunk_features_popcnt::<false>(chunk) };
        }
    }
    count_chunk::<false>(chunk)
}

/// [`count_chunk`] compiled with the popcnt instruction; with AVX2 masks
/// when `AVX2`, which the caller checked the CPU has.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn chunk_features_popcnt<const AVX2: bool>(chunk: &str) -> Features {
    count_chunk::<AVX2>(chunk)
}

/// Counts one chunk; always inlined, so that each caller compiles it with
/// its own target features.
#[inline(always)]
fn count_chunk<const AVX2: bool>(chunk: &str) -> Features {
    let bytes = chunk.as_bytes();
    let mut counter = Counter { f: Features { bytes: bytes.len(), ..Features::default() }, ..Counter::default() };
    let mut blocks = bytes.chunks_exact(BLOCK);
    for (k, block) in blocks.by_ref().enumerate() {
        let block: &[u8; BLOCK] = block.try_into().expect("chunks_exact yields whole blocks");
        counter.add_block(&ByteMasks::of::<AVX2>(block, BLOCK), bytes, k * BLOCK);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut block = [0u8; BLOCK];
        block[..tail.len()].copy_from_slice(tail);
        counter.add_block(&ByteMasks::of::<AVX2>(&block, tail.len()), bytes, bytes.len() - tail.len());
    }
    counter.finish()
}

/// The masks of the block before, which the lookbacks across the block's
/// start read (all clear at the chunk's start: nothing is before it).
#[derive(Default)]
struct Before {
    letter: u64,
    upper: u64,
    vowel: u64,
    punct: u64,
    blank: u64,
    line_end: u64,
}

/// The mask `now` shifted `k` bytes later, with the top `k` bits of the
/// block before filling in: bit `i` tells of the byte `k` before byte `i`.
#[inline(always)]
fn back(now: u64, before: u64, k: u32) -> u64 {
    now << k | before >> (BLOCK as u32 - k)
}

/// The counts so far, and what the next block needs of the bytes before it.
struct Counter {
    f: Features,
    before: Before,
    /// The byte before the block ended a line (true at the chunk's start).
    after_line_end: bool,
    /// The byte before the block was a blank in a line's leading whitespace.
    in_indent: bool,
    /// Digits of a run still open at the block's end.
    digit_run: u32,
    /// The last non-ASCII character of no CJK script, the script of the
    /// last one other than Han, and where that one ended in the chunk.
    last_char: char,
    last_script: Script,
    last_char_end: usize,
}

impl Default for Counter {
    fn default() -> Self {
        Self {
            f: Features::default(),
            before: Before::default(),
            after_line_end: true,
            in_indent: false,
            digit_run: 0,
            last_char: '\n',
            last_script: Script::Other,
            last_char_end: usize::MAX,
        }
    }
}

impl Counter {
    /// Adds the block of the chunk's `bytes` that starts at `offset`.
    #[inline(always)]
    fn add_block(&mut self, m: &ByteMasks, bytes: &[u8], offset: usize) {
        let count = |mask: u64| mask.count_ones() as usize;
        let b = &self.before;
        let f = &mut self.f;
        let punct = m.punct();
        let lower = m.letter & !m.upper;
        let (letter_1, punct_1, blank_1) = (back(m.letter, b.letter, 1), back(punct, b.punct, 1), back(m.blank, b.blank, 1));

        // Words: a letter after a non-letter, or a capital after lower case.
        let words = m.letter & !letter_1 | m.upper & back(lower, b.letter & !b.upper, 1);
        f.words += count(words);
        f.words_after_blank += count(words & blank_1);
        f.words_after_punct += count(words & punct_1);
        let (consonant, consonant_before) = (m.letter & !m.vowel, b.letter & !b.vowel);
        let consonant_runs = (1..=3).fold(consonant, |run, k| run & back(consonant, consonant_before, k));
        f.consonant_runs += count(consonant_runs);

        f.punct += count(punct);
        f.punct_runs += count(punct & !punct_1);
        // A letter after one punctuation byte whose byte before is neither
        // punctuation nor blank.
        let (punct_2, blank_2) = (back(punct, b.punct, 2), back(m.blank, b.blank, 2));
        f.joined_punct += count(m.letter & punct_1 & !punct_2 & !blank_2);
        f.call_punct += count(m.call);
        let long_punct = punct & punct_1 & punct_2 & back(punct, b.punct, 3);
        f.long_punct += count(long_punct) - one_byte_runs(long_punct, bytes, offset);

        f.blank += count(m.blank | m.line_end);
        f.line_ends += count(m.line_end);
        f.line_breaks += count(m.line_end & !(back(m.line_end, b.line_end, 1) | punct_1));
        f.blank_runs += count(m.blank & blank_1 & !blank_2);
        f.digits_after_blank += count(m.digit & blank_1);

        // Lines with leading whitespace.
        let line_starts = m.line_end << 1 | u64::from(self.after_line_end);
        let run_starts = m.blank & (line_starts | u64::from(self.in_indent));
        let (_, run_goes_on) = m.blank.overflowing_add(run_starts);
        f.indented_lines += count(m.blank & line_starts);

        self.add_digit_groups(m.digit);
        self.add_han(m.han_start, bytes, offset);
        // The other characters one by one.
        self.add_non_ascii(m.char_start & !m.han_start, bytes, offset);
        let last = |mask: u64| mask >> (BLOCK - 1) == 1;
        (self.after_line_end, self.in_indent) = (last(m.line_end), run_goes_on);
        self.before = Before { letter: m.letter, upper: m.upper, vowel: m.vowel, punct, blank: m.blank, line_end: m.line_end };
    }

    /// Counts each Han ideograph that starts in the block, and looks it up
    /// in the table of lone characters.
    #[inline(always)]
    fn add_han(&mut self, mut starts: u64, bytes: &[u8], offset: usize) {
        self.f.han_chars += starts.count_ones() as usize;
        self.f.cjk_bytes += 3 * starts.count_ones() as usize;
        while starts != 0 {
            let at = offset + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            // A leading byte of 0xe4 to 0xe9 starts a three-byte character.
            let [lead, second, third] = [bytes[at], bytes[at + 1], bytes[at + 2]];
            let code = u32::from(lead & 0x0f) << 12 | u32::from(second & 0x3f) << 6 | u32::from(third & 0x3f);
            self.f.lone_han += usize::from(is_lone_han(code));
        }
    }

    /// Counts the groups of at most three digits that each run splits into,
    /// a run open at the block's start continuing the one before.
    #[inline(always)]
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

    #[inline(always)]
    fn close_digit_run(&mut self) {
        self.f.number_groups += self.digit_run.div_ceil(3) as usize;
        self.digit_run = 0;
    }

    /// Decodes each non-ASCII character other than Han that starts in the
    /// block.
    #[inline(always)]
    fn add_non_ascii(&mut self, mut starts: u64, bytes: &[u8], offset: usize) {
        while starts != 0 {
            let at = offset + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            let (script, len) = script_at(bytes, at);
            let after_last = self.last_char_end == at;
            match script {
                Script::Kana => self.f.kana += 1,
                Script::Hangul => self.f.hangul_words += usize::from(!(after_last && self.last_script == Script::Hangul)),
                Script::CjkPunct => self.f.cjk_punct += 1,
                Script::Other => {
                    let c = decode(bytes, at, len);
                    let repeats = after_last && self.last_char == c && is_run_merging(c);
                    self.f.symbol_tokens += if repeats { 0 } else { symbol_tokens(c) };
                    self.last_char = c;
                }
            }
            if script != Script::Other {
                self.f.cjk_bytes += len;
            }
            (self.last_script, self.last_char_end) = (script, at + len);
        }
    }

    fn finish(mut self) -> Features {
        self.close_digit_run();
        self.f
    }
}

/// Of the bytes in `long` (bits of the block at `offset`, each with three
/// bytes before it in the chunk), those equal to the three before them: a
/// rule such as `=====`, which o200k holds as one token. Long punctuation
/// runs are rare, so they are looked at one by one.
#[inline(always)]
fn one_byte_runs(mut long: u64, bytes: &[u8], offset: usize) -> usize {
    let mut runs = 0;
    while long != 0 {
        let at = offset + long.trailing_zeros() as usize;
        long &= long - 1;
        runs += usize::from(bytes[at - 3..at].iter().all(|&b| b == bytes[at]));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::super::non_ascii::script;
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
        assert_eq!((f.blank_runs, f.indented_lines, f.digits_after_blank), (1, 1, 2));
        // 4 | 0 | 2 | 123 456 7
        assert_eq!(f.number_groups, 6);
        // id f c d n
        assert_eq!((f.words, f.words_after_blank, f.words_after_punct), (5, 2, 0));
        // ":", ",", ":"; the line end after `7` is a piece of its own.
        assert_eq!((f.punct, f.punct_runs, f.line_breaks), (3, 3, 1));
        let f = features("parseHTTPResponse self.name FOOTAGE_GB a::b;\n");
        // parse HTTPResponse self name FOOTAGE GB a b
        assert_eq!((f.words, f.words_after_punct, f.joined_punct), (8, 3, 2));
        // `HTTPR`: P and R; `FTG`: none (vowels between).
        assert_eq!(f.consonant_runs, 2);
    }

    #[test]
    fn han_characters_that_o200k_never_merges_stand_alone() {
        // 数据 is one o200k token; 數據 (its traditional form) two, and
        // no token holds 數 or 據 beside another character.
        let f = features("数据 數據");
        assert_eq!((f.han_chars, f.lone_han), (4, 2));
        // An extension character shares the Han leading byte, not the table.
        assert_eq!(features("\u{4000}").lone_han, 0);
    }

    #[test]
    fn cjk_by_script_and_symbols() {
        let f = features("数据备份 ──── é かな、한국어 테스트");
        assert_eq!((f.han_chars, f.kana, f.cjk_punct, f.hangul_words), (4, 2, 1, 2));
        // The rule merges into one token; é is one more.
        assert_eq!(f.symbol_tokens, 2);
        // vitest's rule costs three tokens a character, a check mark one.
        assert_eq!(features("⎯⎯⎯⎯ ✓ ✓").symbol_tokens, 3 * 4 + 2);
        assert_eq!(f.cjk_bytes, 3 * (4 + 2 + 1 + 6));
    }

    /// The counts by their definitions, one character at a time: what the
    /// block-wise scan must agree with.
    fn oracle(text: &str) -> Features {
        let mut f = Features { bytes: text.len(), ..Features::default() };
        let chars: Vec<char> = text.chars().collect();
        let at = |i: usize, k: usize| i.checked_sub(k).map(|j| chars[j]);
        let is_punct = |c: char| c.is_ascii() && !c.is_ascii_alphanumeric() && !matches!(c, ' ' | '\t' | '\r' | '\n');
        let is_blank = |c: char| matches!(c, ' ' | '\t' | '\r');
        let punct_before = |i: usize, k: usize| at(i, k).is_some_and(is_punct);
        let blank_before = |i: usize, k: usize| at(i, k).is_some_and(is_blank);
        for (i, &c) in chars.iter().enumerate() {
            let before = at(i, 1);
            let line = &chars[..i].iter().rposition(|&p| p == '\n').map_or(&chars[..i], |at| &chars[at + 1..i]);
            match c {
                '\n' => {
                    (f.blank, f.line_ends) = (f.blank + 1, f.line_ends + 1);
                    f.line_breaks += usize::from(before != Some('\n') && !punct_before(i, 1));
                }
                c if is_blank(c) => {
                    f.blank += 1;
                    f.indented_lines += usize::from(line.is_empty());
                    f.blank_runs += usize::from(blank_before(i, 1) && !blank_before(i, 2));
                }
                '0'..='9' => {
                    let run = chars[..i].iter().rev().take_while(|p| p.is_ascii_digit()).count();
                    f.number_groups += usize::from(run % 3 == 0);
                    f.digits_after_blank += usize::from(blank_before(i, 1));
                }
                'a'..='z' | 'A'..='Z' => {
                    let letter_before = before.is_some_and(|p| p.is_ascii_alphabetic());
                    let camel = c.is_ascii_uppercase() && before.is_some_and(|p| p.is_ascii_lowercase());
                    if !letter_before || camel {
                        f.words += 1;
                        f.words_after_blank += usize::from(blank_before(i, 1));
                        f.words_after_punct += usize::from(punct_before(i, 1));
                    }
                    let consonant = |p: char| p.is_ascii_alphabetic() && !"aeiouAEIOU".contains(p);
                    f.consonant_runs += usize::from(consonant(c) && (1..=3).all(|k| at(i, k).is_some_and(consonant)));
                    f.joined_punct += usize::from(punct_before(i, 1) && !punct_before(i, 2) && !blank_before(i, 2));
                }
                c if c.is_ascii() => {
                    f.punct += 1;
                    f.punct_runs += usize::from(!punct_before(i, 1));
                    f.call_punct += usize::from("();".contains(c));
                    let one_byte_run = (1..=3).all(|k| at(i, k) == Some(c));
                    f.long_punct += usize::from((1..=3).all(|k| punct_before(i, k)) && !one_byte_run);
                }
                c => {
                    let code = u32::from(c);
                    if (0x4000..=0x9fff).contains(&code) {
                        f.han_chars += 1;
                        f.lone_han += usize::from(is_lone_han(code));
                    }
                    match script(c) {
                        _ if (0x4000..=0x9fff).contains(&code) => {}
                        Script::Kana => f.kana += 1,
                        Script::Hangul => f.hangul_words += usize::from(!before.is_some_and(|p| script(p) == Script::Hangul)),
                        Script::CjkPunct => f.cjk_punct += 1,
                        Script::Other => {
                            let repeats = before == Some(c) && is_run_merging(c);
                            f.symbol_tokens += if repeats { 0 } else { symbol_tokens(c) };
                        }
                    }
                    if (0x4000..=0x9fff).contains(&code) || script(c) != Script::Other {
                        f.cjk_bytes += c.len_utf8();
                    }
                }
            }
        }
        f
    }

    #[test]
    fn the_block_scan_counts_as_the_definitions_say() {
        let texts = [
            "  id: 4f0c2d, n: 1234567\n\t\tfn x() { call(a, b); }\n",
            "数据备份 ──── é\n  键: 值 1234 ok\n",
            "한국어 테스트 ꀀ힣 ＡＢ！ 。「」 ─ ─── ̀é かなカナ 數據\n",
            "\n\n   \n 12345678901 v2 128k ((;;)) <a href=\"x\">[1]</a>\r\n",
            "==== FAILURES ====\n  a    b\t\tc ---- __ .. {\"k\":[]}\n",
            "parseHTTPResponse self.name FOOTAGE_GB a::b; abcdefghij\n",
            "emoji 😀😀 ✓ ß ü 𝔘 —\n",
            "",
        ];
        for text in texts {
            assert_eq!(chunk_features(text), oracle(text), "{text:?}");
            // The baseline build, whatever the CPU has.
            assert_eq!(count_chunk::<false>(text), oracle(text), "{text:?}");
        }
        // Longer than a block, so every lookback crosses block boundaries.
        let long = "{\"k\": [1, 2, 3]}, ".repeat(200);
        assert_eq!(chunk_features(&long), oracle(&long));
        for shift in 0..8 {
            let joined =
                " ".repeat(shift) + &"<View android:layout_width=\"match_parent\" app:tint=\"x\"/> self.name a_b 這個資料們数据 ABCDEFGHIJ!!!!?\n".repeat(5);
            assert_eq!(chunk_features(&joined), oracle(&joined), "shift {shift}");
        }
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
