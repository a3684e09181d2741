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

/// `text` cut into the recorded delta sizes (characters), or into word-sized
/// pieces when none were recorded. A remainder the sizes do not cover
/// becomes one last piece; the pieces always join to `text`.
pub fn text_pieces<'t>(text: &'t str, chunks: &[usize]) -> Vec<&'t str> {
    if chunks.is_empty() { split_text_pieces(text) } else { cut(text, chunks) }
}

/// Tool arguments cut into the recorded delta sizes, or into fragments of
/// at most 16 bytes when none were recorded.
pub fn argument_pieces<'t>(arguments: &'t str, chunks: &[usize]) -> Vec<&'t str> {
    if chunks.is_empty() { split_argument_fragments(arguments) } else { cut(arguments, chunks) }
}

fn cut<'t>(text: &'t str, sizes: &[usize]) -> Vec<&'t str> {
    let mut pieces = Vec::with_capacity(sizes.len() + 1);
    let mut rest = text;
    for &size in sizes {
        // An empty delta is sent as recorded; sizes past the text are not.
        if rest.is_empty() && size > 0 {
            break;
        }
        let end = rest.char_indices().nth(size).map_or(rest.len(), |(at, _)| at);
        let (piece, tail) = rest.split_at(end);
        pieces.push(piece);
        rest = tail;
    }
    if !rest.is_empty() {
        pieces.push(rest);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_sizes_cut_by_characters_and_keep_the_remainder() {
        assert_eq!(text_pieces("héllo wörld", &[2, 3]), ["hé", "llo", " wörld"]);
        assert_eq!(text_pieces("ab", &[5, 5]), ["ab"]);
        assert_eq!(text_pieces("Hi there", &[]), ["Hi", " there"]);
        assert_eq!(argument_pieces("{\"a\":1}", &[2, 1]), ["{\"", "a", "\":1}"]);
    }

    #[test]
    fn text_pieces_are_words_with_leading_whitespace() {
        assert_eq!(split_text_pieces("Hi there, you"), ["Hi", " there,", " you"]);
        assert_eq!(split_text_pieces("  lead\n\nnext  "), ["  lead", "\n\nnext", "  "]);
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
        assert_eq!(split_argument_fragments(r#"{"city":"Paris","units":"c"}"#), [r#"{"city":"Paris","#, r#""units":"c"}"#]);
        assert_eq!(split_argument_fragments("€€€€€€"), ["€€€€€", "€"]);
        assert!(split_argument_fragments("").is_empty());
        let args = r#"{"path":"src/日本/ünïcödé.rs","content":"fn main() {}\n"}"#;
        let fragments = split_argument_fragments(args);
        assert_eq!(fragments.concat(), args);
        assert!(fragments.iter().all(|fragment| !fragment.is_empty() && fragment.len() <= 16));
    }
}
