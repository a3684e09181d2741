//! The page's paired-comparison section ([`crate::paired`]): for a sweep,
//! each variant against the reference (`none`, else the first by name), per headline figure, its change with
//! the bootstrap interval and which variant is better.

use std::fmt::Write as _;

use super::escape;
use crate::error::ReportError;
use crate::paired::{CONFIDENCE, RESAMPLES, pairings};
use crate::table::Table;

/// The section, nothing for a report of one variant.
pub fn section(html: &mut String, runs: &Table) -> Result<(), ReportError> {
    let pairings = pairings(&crate::Runs::from_table(runs)?);
    if pairings.is_empty() {
        return Ok(());
    }
    let _ = write!(
        html,
        "<h2>Paired comparison</h2><p>Per scenario, each variant against {}; bootstrap over scenarios ({RESAMPLES} resamples, {:.0} %).</p>",
        escape(&pairings[0].reference),
        CONFIDENCE * 100.0
    );
    html.push_str("<table id=\"paired\"><thead><tr><th>variants</th><th>figure</th><th>change [interval]</th><th>verdict</th></tr></thead><tbody>");
    for pairing in &pairings {
        let variants = format!("{} vs {}", pairing.other, pairing.reference);
        for figure in &pairing.figures {
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&variants),
                figure.label,
                escape(&figure.estimate_shown()),
                escape(&figure.verdict(&pairing.other))
            );
        }
    }
    html.push_str("</tbody></table><ul class=\"moved\">");
    for pairing in &pairings {
        let _ = write!(html, "<li>{}</li>", escape(&pairing.like_for_like()));
    }
    html.push_str("</ul>");
    Ok(())
}
