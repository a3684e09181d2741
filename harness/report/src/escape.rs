//! Names printed where they could act: scenario names, gate scopes and
//! file paths come from files in the pull request under test, and each
//! destination reads some text as commands. Every printed name goes
//! through the function for its destination:
//!
//! - [`terminal`]: control characters (ESC of an OSC 52 clipboard write,
//!   an OSC 0 window title, CSI 2J) and bidirectional overrides shown as
//!   escapes (`\x1b`, `\n`, `\u{202e}`), never sent;
//! - [`actions`]: GitHub Actions reads a line of a job's output that starts
//!   with `::` as a workflow command; `%`, `\r`, `\n` and `::` are
//!   percent-encoded, so a name can neither end its line nor start one;
//! - [`line`]: both, for a line of the terminal output that holds a name;
//! - [`code_span`] and [`markdown_text`]: a Markdown comment, where a name
//!   must not break out of its code span or table cell, nor bring HTML,
//!   an `@mention` or a heading.

/// `text` with every control character and bidirectional override shown as
/// an escape, from the one rule the mock's log lines follow too.
pub use reloop_text::escape_control as terminal;

/// `text` made inert for GitHub Actions: `%` as `%25`, `\r` as `%0D`, `\n`
/// as `%0A` (the runner's own escapes for a workflow command's message),
/// and `::` as `:%3A`, so no part of it can start a workflow command.
pub fn actions(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A").replace("::", ":%3A")
}

/// A name in a line of the terminal output (which CI logs too): [`actions`]
/// then [`terminal`].
pub fn line(text: &str) -> String {
    terminal(&actions(text))
}

/// `text` as one Markdown code span: control characters as in
/// [`terminal`] (so it stays on one line), fenced by one more backtick than
/// its longest run of them (padded with a space when it starts or ends
/// with one), with `|` escaped so that a table cell holding it stays one
/// cell. Nothing in a code span is HTML, a mention or a link.
pub fn code_span(text: &str) -> String {
    let flat = terminal(text).replace('|', "\\|");
    let longest = flat.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{flat}{pad}{fence}")
}

/// `text` as plain Markdown text on one line (a table cell, a list item):
/// control characters as in [`terminal`], HTML's specials as entities, `@`
/// followed by a zero-width space (no mention), and Markdown's punctuation
/// backslash-escaped (no code span, link, emphasis, heading or cell break).
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in terminal(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '@' => out.push_str("@&#8203;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '|' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name meant to act on each destination.
    const HOSTILE: &str = "x\n::error::owned \x1b]52;c;cHduZWQ=\x07\x1b]0;title\x07\x1b[2J 100% `tick` @team <img src=x> <!-- | ### all gates hold\r\u{202e}";

    #[test]
    fn a_hostile_name_per_destination() {
        insta::assert_snapshot!("hostile_terminal", terminal(HOSTILE));
        insta::assert_snapshot!("hostile_actions", actions(HOSTILE));
        insta::assert_snapshot!("hostile_line", line(HOSTILE));
    }

    #[test]
    fn nothing_acts_in_any_destination() {
        for escaped in [terminal(HOSTILE), line(HOSTILE)] {
            assert!(!escaped.chars().any(char::is_control), "{escaped:?}");
        }
        for escaped in [actions(HOSTILE), line(HOSTILE)] {
            assert!(!escaped.contains("::") && !escaped.contains('\n') && !escaped.contains('\r'), "{escaped:?}");
        }
        for markdown in [markdown_text(HOSTILE), code_span(HOSTILE)] {
            assert!(!markdown.chars().any(char::is_control) && !markdown.contains('\u{202e}'), "{markdown:?}");
        }
        let markdown = markdown_text(HOSTILE);
        assert!(!markdown.contains('<') && !markdown.contains("@t"), "{markdown}");
    }

    #[test]
    fn a_code_span_is_fenced_past_the_longest_run_of_backticks() {
        assert_eq!(code_span("plain"), "`plain`");
        assert_eq!(code_span("a `b` c"), "``a `b` c``");
        assert_eq!(code_span("``x"), "``` ``x ```");
        assert_eq!(code_span("a|b\nc"), "`a\\|b\\nc`");
    }
}
