//! The terminal rendering of a verdict: the per-metric table, the runs
//! that were added, removed or changed, and every failed gate.

use std::fmt::Write as _;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

use super::{Verdict, interval, maybe, percent, signed};
use crate::escape::line;

/// Most changed runs listed before a count of the rest.
const CHANGED_SHOWN: usize = 20;

/// The whole report as text.
pub fn render(verdict: &Verdict<'_>) -> String {
    let c = verdict.comparison;
    let mut out = String::new();
    let _ = writeln!(out, "base: {} ({} runs)", line(&c.base.path.display().to_string()), c.base.len());
    let _ = writeln!(out, "new:  {} ({} runs)", line(&c.new.path.display().to_string()), c.new.len());
    let _ = writeln!(out, "matched {}, added {}, removed {}, changed {}", c.pairs.len(), c.added.len(), c.removed.len(), c.changed.len());
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Disabled);
    table.set_header(vec!["metric (mean per run)", "base", "new", "delta", "relative", "95% CI"]);
    for m in &c.metrics {
        table.add_row(vec![m.metric.clone(), maybe(m.base), maybe(m.new), signed(m.delta), percent(m.relative), interval(m.interval)]);
    }
    let _ = writeln!(out, "{table}");
    let _ = writeln!(out, "{}", line(&c.like_for_like()));
    for (key, _) in &c.added {
        let _ = writeln!(out, "added: {}", line(&key.to_string()));
    }
    for key in &c.removed {
        let _ = writeln!(out, "removed: {}", line(&key.to_string()));
    }
    for change in c.changed.iter().take(CHANGED_SHOWN) {
        let _ = writeln!(out, "changed: {}", line(&super::markdown::change_summary(change, 6)));
    }
    if c.changed.len() > CHANGED_SHOWN {
        let _ = writeln!(out, "changed: … and {} more", c.changed.len() - CHANGED_SHOWN);
    }
    for failure in verdict.failures() {
        let _ = writeln!(out, "gate failed: {}", line(&failure.describe()));
    }
    let _ = writeln!(out, "{}", verdict.headline());
    out
}
