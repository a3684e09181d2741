//! The verdict as one JSON document, for scripts.

use serde_json::{Value, json};

use super::Verdict;

/// The JSON document: paths, counts, per-metric figures, run lists, gates.
pub fn render(verdict: &Verdict<'_>) -> Value {
    let c = verdict.comparison;
    json!({
        "passed": verdict.passed(),
        "base": { "path": c.base.path.display().to_string(), "runs": c.base.len() },
        "new": { "path": c.new.path.display().to_string(), "runs": c.new.len() },
        "matched": c.pairs.len(),
        "added": c.added.iter().map(|(key, _)| key).collect::<Vec<_>>(),
        "removed": c.removed,
        "changed": c.changed,
        "left_out_of_means": c.left_out,
        "metrics": c.metrics,
        "gates": verdict.gates,
    })
}
