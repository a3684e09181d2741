//! Deterministic splitting of a turn's text and tool arguments into the pieces a streamed
//! answer delivers. Every format's encoder streams through these, so a turn renders into the
//! same pieces whichever wire format carries it, and recordings stay reproducible.

/// Splits text into the pieces a streamed answer delivers: each word with the whitespace before
/// it, like real token deltas. Deterministic, never yields an empty piece, and the pieces
/// concatenate to `text`.
pub fn split_text_pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut after_word = false;
    for (at, c) in text.char_indices() {
        let is_space = c.is_whitespace();
        if is_space && after_word {
            pieces.push(&text[start..at]);
            start = at;
        }
        after_word = !is_space;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Longest tool-argument fragment [`split_argument_fragments`] yields, in bytes.
const MAX_ARGUMENT_FRAGMENT: usize = 16;

/// Splits tool-call arguments into fragments of at most 16 bytes, cut on character boundaries.
/// Deterministic; the fragments concatenate to `args` (none for empty `args`).
pub fn split_argument_fragments(args: &str) -> Vec<&str> {
    let mut fragments = Vec::new();
    let mut rest = args;
    while !rest.is_empty() {
        let mut end = rest.len().min(MAX_ARGUMENT_FRAGMENT);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (fragment, tail) = rest.split_at(end);
        fragments.push(fragment);
        rest = tail;
    }
    fragments
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_pieces_are_words_with_leading_whitespace() {
        assert_eq!(
            split_text_pieces("Hi there, you"),
            ["Hi", " there,", " you"]
        );
        assert_eq!(
            split_text_pieces("  lead\n\nnext  "),
            ["  lead", "\n\nnext", "  "]
        );
        assert_eq!(split_text_pieces("héllo wörld"), ["héllo", " wörld"]);
        assert!(split_text_pieces("").is_empty());
        for text in ["a", " ", "x  y\tz\n", "日本語 のテキスト"] {
            let pieces = split_text_pieces(text);
            assert_eq!(pieces.concat(), text);
            assert!(pieces.iter().all(|piece| !piece.is_empty()));
        }
    }

    #[test]
    fn argument_fragments_are_at_most_16_bytes_on_char_boundaries() {
        assert_eq!(
            split_argument_fragments(r#"{"city":"Paris","units":"c"}"#),
            [r#"{"city":"Paris","#, r#""units":"c"}"#]
        );
        assert_eq!(split_argument_fragments("€€€€€€"), ["€€€€€", "€"]);
        assert!(split_argument_fragments("").is_empty());
        let args = r#"{"path":"src/日本/ünïcödé.rs","content":"fn main() {}\n"}"#;
        let fragments = split_argument_fragments(args);
        assert_eq!(fragments.concat(), args);
        assert!(
            fragments
                .iter()
                .all(|fragment| !fragment.is_empty() && fragment.len() <= 16)
        );
    }
}
