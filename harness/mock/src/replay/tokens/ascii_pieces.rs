//! o200k's pre-tokenizer for ASCII text, without the regex.
//!
//! `bpe-openai` cuts text into pieces with a Unicode regex run once per
//! piece, which costs about 700 instructions a piece and was the largest
//! part of the mock's counting once piece counts were memoized
//! ([`super::piece_memo`]). Agent traffic is mostly ASCII (code, JSON,
//! logs), and over ASCII the o200k pattern reduces to a few byte classes,
//! so this module cuts ASCII text by hand into exactly the same pieces.
//! Text with any other byte keeps the regex.
//!
//! The pattern, alternatives in priority order (leftmost-first, so the
//! first alternative that matches at a position wins, however short):
//! 1. an optional lead byte that is no letter, digit, CR or LF, then
//!    uppercase letters and at least one lowercase letter, then an optional
//!    contraction (`'s 't 're 've 'm 'll 'd`, any case);
//! 2. the same lead, at least one uppercase letter, lowercase letters, the
//!    optional contraction;
//! 3. one to three digits;
//! 4. an optional space, a run of punctuation (no blank, letter or digit),
//!    then any CR, LF and `/`;
//! 5. blanks up to and including the last CR or LF among them;
//! 6. blanks that end the text;
//! 7. blanks followed by a blank, less that last blank (a look-ahead);
//! 8. blanks.
//!
//! "Blank" is `\s`, which over ASCII is tab, LF, VT, FF, CR and space.
//! A property test and the whole estimator corpus check every cut against
//! the regex.

/// The pieces of `text`, which must be ASCII, as o200k's regex cuts them.
pub fn ascii_pieces(text: &str) -> AsciiPieces<'_> {
    debug_assert!(text.is_ascii());
    AsciiPieces { text, at: 0 }
}

/// Iterator over the pieces of an ASCII text ([`ascii_pieces`]).
#[derive(Debug)]
pub struct AsciiPieces<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for AsciiPieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        if self.at >= bytes.len() {
            return None;
        }
        let start = self.at;
        let end = piece_end(bytes, start);
        self.at = end;
        // Every cut falls between ASCII bytes, so it is a char boundary.
        Some(&self.text[start..end])
    }
}

fn is_blank(byte: u8) -> bool {
    matches!(byte, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

fn is_line_end(byte: u8) -> bool {
    matches!(byte, b'\n' | b'\r')
}

/// Neither blank, letter nor digit: what alternative 4 runs over.
fn is_punctuation(byte: u8) -> bool {
    !byte.is_ascii_alphanumeric() && !is_blank(byte)
}

/// Where the piece that starts at `start` ends (`start < bytes.len()`).
fn piece_end(bytes: &[u8], start: usize) -> usize {
    let first = bytes[start];
    // Alternatives 1 and 2: the word starts at `start` if it begins with a
    // letter, after it if a lead byte can come first (never both).
    let word = if first.is_ascii_alphabetic() { Some(start) } else { (!first.is_ascii_digit() && !is_line_end(first)).then_some(start + 1) };
    if let Some(word) = word {
        let upper_end = run_end(bytes, word, |b| b.is_ascii_uppercase());
        let lower_end = run_end(bytes, upper_end, |b| b.is_ascii_lowercase());
        if lower_end > word {
            return contraction_end(bytes, lower_end);
        }
    }
    if first.is_ascii_digit() {
        return run_end(bytes, start, |b| b.is_ascii_digit()).min(start + 3);
    }
    let punctuation = if first == b' ' { start + 1 } else { start };
    if bytes.get(punctuation).is_some_and(|&b| is_punctuation(b)) {
        let run = run_end(bytes, punctuation, is_punctuation);
        return run_end(bytes, run, |b| is_line_end(b) || b == b'/');
    }
    blank_piece_end(bytes, start)
}

/// Alternatives 5 to 8, for a piece that starts with a blank.
fn blank_piece_end(bytes: &[u8], start: usize) -> usize {
    let blanks_end = run_end(bytes, start, is_blank);
    if let Some(last_line_end) = bytes[start..blanks_end].iter().rposition(|&b| is_line_end(b)) {
        return start + last_line_end + 1;
    }
    if blanks_end == bytes.len() || blanks_end - start == 1 {
        return blanks_end;
    }
    blanks_end - 1
}

/// `end` moved past a contraction, if one follows the word ending there.
fn contraction_end(bytes: &[u8], end: usize) -> usize {
    if bytes.get(end) != Some(&b'\'') {
        return end;
    }
    let rest = &bytes[end + 1..];
    let starts = |suffix: &[u8]| rest.len() >= suffix.len() && rest[..suffix.len()].eq_ignore_ascii_case(suffix);
    let suffixes: [&[u8]; 7] = [b"s", b"t", b"re", b"ve", b"m", b"ll", b"d"];
    suffixes.iter().find(|suffix| starts(suffix)).map_or(end, |suffix| end + 1 + suffix.len())
}

/// The first index at or after `from` whose byte fails `keep`.
fn run_end(bytes: &[u8], from: usize, keep: impl Fn(u8) -> bool) -> usize {
    bytes[from..].iter().position(|&b| !keep(b)).map_or(bytes.len(), |length| from + length)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn regex_pieces(text: &str) -> Vec<&str> {
        bpe_openai::o200k_base().split(text).collect()
    }

    #[test]
    fn cuts_as_the_regex_does_on_the_hard_cases() {
        let cases = [
            "Hello world, HELLO WORLD HELLOworld camelCase don't THEY'RE it'sx we'LL I'm you'Ve he'd",
            "((foo ...abc  +=  \t x\n\n  \n   y   ",
            "fn main() {\n    let x = 12345;\n}\n// comment\n}\n//x\r\n\r\n",
            " 123 a1b2 _private __dunder__ 'quoted' '' 's",
            "\x0b\x0cword\x1f\x00text\x7f end ",
            "trailing blanks \t \n \t ",
            " ",
            "\n",
            "x",
        ];
        for text in cases {
            assert_eq!(ascii_pieces(text).collect::<Vec<_>>(), regex_pieces(text), "{text:?}");
        }
    }

    /// Every ASCII file of the estimator corpus whole, and every ASCII line
    /// of the others.
    #[test]
    fn cuts_as_the_regex_does_on_the_corpus() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
        let mut checked = 0;
        for class in std::fs::read_dir(&root).expect("the corpus is there") {
            let class = class.expect("a corpus folder").path();
            for file in std::fs::read_dir(&class).into_iter().flatten() {
                let path = file.expect("a corpus file").path();
                let Ok(text) = std::fs::read_to_string(&path) else { continue };
                let texts: Vec<&str> = if text.is_ascii() { vec![&text] } else { text.split_inclusive('\n').filter(|line| line.is_ascii()).collect() };
                for text in texts {
                    assert_eq!(ascii_pieces(text).collect::<Vec<_>>(), regex_pieces(text), "{}", path.display());
                    checked += text.len();
                }
            }
        }
        assert!(checked > 500_000, "only {checked} bytes of ASCII in the corpus");
    }

    proptest! {
        #[test]
        fn cuts_as_the_regex_does_on_any_ascii(fragments in proptest::collection::vec(
            prop_oneof![
                // Bytes that start or end pieces, contractions in any case,
                // then any ASCII byte at all.
                prop::sample::select(vec![" ", "\n", "\r", "\t", "\x0b", "'", "/", "//", "1234", "Ab", "aB", "AB"]).prop_map(String::from),
                prop::sample::select(vec!["'s", "'T", "'re", "'Ve", "'m", "'LL", "'d", "'x"]).prop_map(String::from),
                (0u8..0x80).prop_map(|byte| char::from(byte).to_string()),
            ],
            0..32,
        )) {
            let text = fragments.concat();
            prop_assert_eq!(ascii_pieces(&text).collect::<Vec<_>>(), regex_pieces(&text));
        }
    }
}
