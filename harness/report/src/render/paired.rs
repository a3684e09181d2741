//! A sweep's paired comparisons ([`crate::paired`]) for people: lines for
//! the terminal, a section of the PR comment. The HTML page draws its own
//! table from the same [`Pairing`]s.

use std::fmt::Write as _;

use crate::escape::{code_span, markdown_text, terminal};
use crate::paired::{CONFIDENCE, Pairing, RESAMPLES};

/// The terminal lines: per pairing its like-for-like line, then a line per
/// figure.
pub fn text(pairings: &[Pairing]) -> String {
    let mut out = String::new();
    for pairing in pairings {
        let _ = writeln!(
            out,
            "\npaired, {} against {} (per scenario over {} scenarios; {RESAMPLES} bootstrap resamples, {:.0} %):",
            terminal(&pairing.other),
            terminal(&pairing.reference),
            pairing.compared,
            CONFIDENCE * 100.0
        );
        let _ = writeln!(out, "  {}", terminal(&pairing.like_for_like()));
        for figure in &pairing.figures {
            let _ = writeln!(out, "  {:<13} {:<28} {}", figure.label, figure.estimate_shown(), terminal(&figure.verdict(&pairing.other)));
        }
    }
    out
}

/// The PR comment's section: one table row per pairing and figure, then
/// each pairing's like-for-like line.
pub fn markdown(pairings: &[Pairing]) -> String {
    if pairings.iter().all(|p| p.figures.is_empty() && p.left_out.is_empty()) {
        return String::new();
    }
    let mut out = format!(
        "\n**Paired comparison** (per scenario; bootstrap over scenarios, {RESAMPLES} resamples, {:.0} %)\n\n| variants | figure | change [interval] | verdict |\n|---|---|---|---|\n",
        CONFIDENCE * 100.0
    );
    for pairing in pairings {
        let variants = format!("{} vs {}", code_span(&pairing.other), code_span(&pairing.reference));
        for figure in &pairing.figures {
            let _ = writeln!(
                out,
                "| {variants} | {} | {} | {} |",
                figure.label,
                markdown_text(&figure.estimate_shown()),
                markdown_text(&figure.verdict(&pairing.other))
            );
        }
    }
    out.push('\n');
    for pairing in pairings {
        let _ = writeln!(out, "- {}", markdown_text(&pairing.like_for_like()));
    }
    out
}
