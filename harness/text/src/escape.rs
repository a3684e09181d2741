//! Names and paths printed where a terminal reads them: a name from a file
//! under test or a request path must neither act on the terminal nor hide
//! what it says.

use std::fmt::Write as _;

/// `text` with every control character shown as an escape: `\n`, `\r`,
/// `\t`, else `\xNN` (C0, DEL, C1: the ESC of an OSC 52 clipboard write, an
/// OSC 0 window title, CSI 2J), and Unicode's invisible direction overrides
/// and isolates (U+202A–U+202E, U+2066–U+2069, which reorder what follows
/// them on screen) as `\u{NNNN}`.
pub fn escape_control(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c0_del_and_c1_controls_are_escaped() {
        assert_eq!(escape_control("a\nb\u{1b}[31mc\r\td"), "a\\nb\\x1b[31mc\\r\\td");
        assert_eq!(escape_control("\0\u{7f}\u{80}\u{9b}\u{9f}"), "\\x00\\x7f\\x80\\x9b\\x9f");
        assert_eq!(escape_control("plain-name.1 é ✓"), "plain-name.1 é ✓");
    }

    #[test]
    fn every_bidi_override_and_isolate_is_escaped_and_their_neighbours_are_not() {
        for c in ('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}') {
            assert_eq!(escape_control(&format!("a{c}b")), format!("a\\u{{{:04x}}}b", u32::from(c)));
        }
        for c in ['\u{2029}', '\u{202f}', '\u{2065}', '\u{206a}'] {
            assert_eq!(escape_control(&c.to_string()), c.to_string(), "{c:?} is no override");
        }
    }
}
