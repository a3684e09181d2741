//! The pull-request comment: a verdict line, the failed gates (each with
//! its base, new, change and offenders), the top changes (the failed gates'
//! metrics first) and the runs that moved, sorted by scenario and variant,
//! capped to stay under 60 lines. When no verdict could be reached, the
//! comment says why ([`render_error`]).

use std::fmt::Write as _;

use super::{Verdict, maybe, number, percent, signed};
use crate::compare::Change;
use crate::escape::{code_span, markdown_text};
use crate::first_named::first_named;

/// Failed gates listed before a count of the rest.
const FAILED_SHOWN: usize = 12;
/// Metrics listed under "top changes".
const METRICS_SHOWN: usize = 10;
/// Runs listed under "changed runs".
const RUNS_SHOWN: usize = 10;

/// The comment.
pub fn render(verdict: &Verdict<'_>) -> String {
    let c = verdict.comparison;
    let mut out = String::new();
    let mark = if verdict.passed() { "✅" } else { "❌" };
    let _ = writeln!(out, "### reloop {mark} {}\n", verdict.headline());
    let _ = writeln!(
        out,
        "{} runs compared ({} added, {} removed, {} changed); base {}, new {}.",
        c.pairs.len(),
        c.added.len(),
        c.removed.len(),
        c.changed.len(),
        code_span(&c.base.path.display().to_string()),
        code_span(&c.new.path.display().to_string())
    );
    let _ = writeln!(out, "\n{}.", markdown_text(&c.like_for_like()));
    let failures: Vec<_> = verdict.failures().collect();
    if !failures.is_empty() {
        out.push_str("\n**Failed gates**\n\n| gate | scope | base | new | % | offenders |\n|---|---|---|---|---|---|\n");
        for gate in failures.iter().take(FAILED_SHOWN) {
            let (metric, check, scope) = (code_span(&gate.metric), markdown_text(&gate.check), markdown_text(&gate.scope));
            let relative = gate.base.and_then(|base| crate::stats::relative(base, gate.new));
            let offenders = first_named(&gate.offenders, |key| code_span(&key.to_string()));
            let _ = writeln!(out, "| {metric} {check} | {scope} | {} | {} | {} | {} |", maybe(gate.base), number(gate.new), percent(relative), offenders);
        }
        more(&mut out, failures.len(), FAILED_SHOWN, "failed gates");
    }
    out.push_str(&crate::cache_causes::markdown(c));
    let top = verdict.top_changes();
    if !top.is_empty() {
        out.push_str("\n**Top changes** (mean per run)\n\n| metric | base | new | delta | relative |\n|---|---|---|---|---|\n");
        for m in top.iter().take(METRICS_SHOWN) {
            let _ = writeln!(out, "| `{}` | {} | {} | {} | {} |", m.metric, maybe(m.base), maybe(m.new), signed(m.delta), percent(m.relative));
        }
        more(&mut out, top.len(), METRICS_SHOWN, "metrics moved");
    }
    let runs: Vec<String> = c
        .added
        .iter()
        .map(|(key, _)| format!("{} added", code_span(&key.to_string())))
        .chain(c.removed.iter().map(|key| format!("{} removed", code_span(&key.to_string()))))
        .chain(c.changed.iter().map(|change| change_summary(change, 3)))
        .collect();
    if !runs.is_empty() {
        out.push_str("\n**Runs**\n\n");
        for line in runs.iter().take(RUNS_SHOWN) {
            let _ = writeln!(out, "- {line}");
        }
        more(&mut out, runs.len(), RUNS_SHOWN, "runs");
    }
    out
}

/// The comment when no verdict could be reached: bad input, or a run that
/// stopped before the comparison.
pub fn render_error(why: &str) -> String {
    format!("### reloop ⚠️ no verdict\n\n{}\n", markdown_text(why))
}

/// `name: outcome a → b; metric x → y, …` with at most `shown` metrics.
pub fn change_summary(change: &Change, shown: usize) -> String {
    let mut parts = Vec::new();
    if let Some((base, new)) = &change.outcome {
        parts.push(format!("outcome {base} → {new}"));
    }
    parts.extend(change.metrics.iter().take(shown).map(|(name, base, new)| format!("{name} {} → {}", maybe(*base), maybe(*new))));
    if change.metrics.len() > shown {
        parts.push(format!("{} more", change.metrics.len() - shown));
    }
    format!("{}: {}", code_span(&change.key.to_string()), parts.join(", "))
}

fn more(out: &mut String, total: usize, shown: usize, what: &str) {
    if total > shown {
        let _ = writeln!(out, "\n… and {} more {what}", total - shown);
    }
}
