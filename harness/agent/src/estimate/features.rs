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
    let mut scanner = Scanner::default();
    for c in text.chars() {
        let kind = Kind::of(c);
        scanner.push(kind, c);
        if kind == Kind::LineEnd && scanner.chunk.bytes >= CHUNK_BYTES {
            on_chunk(&scanner.chunk);
            scanner = Scanner::default();
        }
    }
    if scanner.chunk.bytes > 0 {
        on_chunk(&scanner.chunk);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    LineEnd,
    Blank,
    Digit,
    Letter,
    Punct,
    Cjk,
    Symbol,
}

impl Kind {
    fn of(c: char) -> Self {
        match c {
            '\n' => Self::LineEnd,
            ' ' | '\t' | '\r' => Self::Blank,
            '0'..='9' => Self::Digit,
            'a'..='z' | 'A'..='Z' => Self::Letter,
            '\0'..='\x7f' => Self::Punct,
            c if is_cjk(c) => Self::Cjk,
            _ => Self::Symbol,
        }
    }
}

/// CJK punctuation and kana to ideographs (U+3000–U+9FFF), Hangul syllables,
/// and full-width forms: about one token each in o200k.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3000}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}' | '\u{ff00}'..='\u{ffef}')
}

struct Scanner {
    chunk: Features,
    previous: Kind,
    previous_char: char,
    digit_run: usize,
    line_start: bool,
}

impl Default for Scanner {
    fn default() -> Self {
        Self { chunk: Features::default(), previous: Kind::LineEnd, previous_char: '\n', digit_run: 0, line_start: true }
    }
}

impl Scanner {
    fn push(&mut self, kind: Kind, c: char) {
        let f = &mut self.chunk;
        f.bytes += c.len_utf8();
        match kind {
            Kind::LineEnd => {
                f.blank += 1;
                f.line_ends += 1;
                self.line_start = true;
            }
            Kind::Blank => {
                f.blank += 1;
                if self.line_start {
                    f.indent += 1;
                    f.indented_lines += usize::from(self.previous != Kind::Blank);
                }
            }
            _ => self.line_start = false,
        }
        if kind == Kind::Digit {
            f.digits += 1;
            f.number_groups += usize::from(self.digit_run.is_multiple_of(3));
            self.digit_run += 1;
        } else {
            self.digit_run = 0;
        }
        match kind {
            Kind::Letter => f.id_pieces += usize::from(self.previous == Kind::Digit),
            Kind::Punct => {
                f.punct += 1;
                f.punct_runs += usize::from(self.previous != Kind::Punct);
                f.markup_punct += usize::from(matches!(c, '"' | '{' | '}' | '[' | ']' | ':' | ',' | '<' | '>' | '='));
                f.call_punct += usize::from(matches!(c, '(' | ')' | ';'));
            }
            Kind::Cjk => {
                f.cjk_chars += 1;
                f.cjk_bytes += c.len_utf8();
            }
            Kind::Symbol => {
                f.symbol_bytes += c.len_utf8();
                f.symbols += usize::from(c != self.previous_char);
            }
            Kind::LineEnd | Kind::Blank | Kind::Digit => {}
        }
        self.previous = kind;
        self.previous_char = c;
    }
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
