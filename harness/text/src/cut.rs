//! Long texts shortened: [`cut`] for a report, which says how much it left
//! out, and [`excerpt`] for a one-line quote in a note.

use std::borrow::Cow;

/// `text` cut after its first `max_chars` characters, saying how many bytes
/// were left out (`head… (120 more bytes)`): a report keeps a message's
/// head, not a file read whole. A text no longer is returned as it is.
pub fn cut(text: &str, max_chars: usize) -> Cow<'_, str> {
    match cut_at(text, max_chars) {
        Some(at) => Cow::Owned(format!("{}… ({} more bytes)", &text[..at], text.len() - at)),
        None => Cow::Borrowed(text),
    }
}

/// The first `max_chars` characters of `text` on one line (its whitespace
/// runs as one space), `…` when cut.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match cut_at(&flat, max_chars) {
        Some(at) => format!("{}…", &flat[..at]),
        None => flat,
    }
}

/// Where `text` is cut: the byte offset of its character past the first
/// `max_chars`, if it has more. A text of that many bytes or fewer has no
/// more characters, and an ASCII head is as many bytes as characters, so
/// only other texts are walked character by character (the report cuts
/// every text of every message body it writes).
fn cut_at(text: &str, max_chars: usize) -> Option<usize> {
    match text.as_bytes().get(..max_chars) {
        None => None,
        Some(head) if head.is_ascii() => (text.len() > max_chars).then_some(max_chars),
        Some(_) => text.char_indices().nth(max_chars).map(|(at, _)| at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick cut agrees with walking the characters, at and around
    /// the limit, in ASCII and in multi-byte text.
    #[test]
    fn the_cut_falls_after_the_first_max_chars_characters() {
        const MAX: usize = 1_000;
        let walked = |text: &str| text.char_indices().nth(MAX).map(|(at, _)| at);
        for len in [0, 1, MAX - 1, MAX, MAX + 1, 3 * MAX] {
            for text in ["a".repeat(len), "é".repeat(len), format!("{}é{}", "a".repeat(len / 2), "b".repeat(len / 2))] {
                assert_eq!(cut_at(&text, MAX), walked(&text), "{} bytes", text.len());
            }
        }
    }

    #[test]
    fn a_cut_says_how_many_bytes_it_left_out() {
        assert_eq!(cut(&"x".repeat(15), 10), format!("{}… (5 more bytes)", "x".repeat(10)));
        assert_eq!(cut("ééé", 2), "éé… (2 more bytes)");
        assert!(matches!(cut("short", 10), Cow::Borrowed("short")));
    }

    #[test]
    fn an_excerpt_is_one_line_cut_by_characters() {
        assert_eq!(excerpt("a\n  b\tc", 10), "a b c");
        assert_eq!(excerpt("ééé éé", 4), "ééé …");
        assert_eq!(excerpt("abcd", 4), "abcd");
    }
}
