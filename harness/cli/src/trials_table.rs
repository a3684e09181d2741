//! The terminal table of a repeated run (`--repeat N`): one row per
//! scenario × variant with its trials' verdict (`passed k/N`, pass^1,
//! pass^N, pass@N, the 95 % Wilson interval on the pass rate, flaky or
//! not), then what failed, and whether the trials repeated exactly.

use comfy_table::{Cell, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use reloop_eval::RunSummary;
use reloop_report::escape::{line, terminal};
use reloop_report::trials::{TrialVerdict, rate, rate_interval};

use crate::short_name::{MAX_NAME_CHARS, shortened};

/// Distinct failures printed under a failed scenario.
const FAILURES_SHOWN: usize = 5;

/// The table of `verdicts` over `runs`, each run made `trials` times.
pub fn render(runs: &[RunSummary], verdicts: &[TrialVerdict], trials: u64) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_header(vec![
        "scenario".to_owned(),
        "outcomes".to_owned(),
        "passed".to_owned(),
        "pass^1".to_owned(),
        format!("pass^{trials}"),
        format!("pass@{trials}"),
        "95% interval".to_owned(),
        "verdict".to_owned(),
    ]);
    for verdict in verdicts {
        let outcomes: Vec<String> = verdict.outcomes.iter().map(|(outcome, count)| format!("{outcome} ×{count}")).collect();
        table.add_row(vec![
            Cell::new(terminal(&shortened(&verdict.key.to_string(), MAX_NAME_CHARS))),
            Cell::new(outcomes.join(", ")),
            Cell::new(verdict.passed_label().trim_start_matches("passed ")),
            Cell::new(rate(verdict.pass_hat(1))),
            Cell::new(rate(verdict.pass_hat(trials))),
            Cell::new(rate(verdict.pass_at(trials))),
            Cell::new(rate_interval(verdict.interval())),
            Cell::new(verdict.mark()),
        ]);
    }
    let failed = verdicts.iter().filter(|v| !v.holds()).count();
    let flaky: Vec<String> = verdicts.iter().filter(|v| v.flaky()).map(|v| line(&v.key.to_string())).collect();
    let mut text = table.to_string();
    text.push_str(&format!("\n{} passed, {failed} failed, each over {trials} trials\n", verdicts.len() - failed));
    if !flaky.is_empty() {
        text.push_str(&format!("flaky (trials disagree): {}\n", flaky.join(", ")));
    }
    text.push_str(&determinism(runs, verdicts));
    for verdict in verdicts.iter().filter(|v| !v.holds()) {
        // A line that starts with the name: nothing in it may end the line
        // or start a workflow command (GitHub Actions reads this output).
        let flaky = if verdict.flaky() { ", flaky" } else { "" };
        text.push_str(&format!(
            "\n{} ({}): {}{flaky}, needs {}\n",
            line(&verdict.key.to_string()),
            line(&verdict.file),
            verdict.passed_label(),
            verdict.rule()
        ));
        for (failure, count) in verdict.failures.iter().take(FAILURES_SHOWN) {
            text.push_str(&format!("  - {} (in {count} of {} trials)\n", line(failure), verdict.counted));
        }
        if verdict.failures.len() > FAILURES_SHOWN {
            text.push_str(&format!("  … and {} more distinct failures\n", verdict.failures.len() - FAILURES_SHOWN));
        }
    }
    text
}

/// One line: whether every scenario's trials repeated exactly (same
/// outcome, expectations and figures but for wall time), so `--repeat`
/// added cost without information, or which ones varied.
fn determinism(runs: &[RunSummary], verdicts: &[TrialVerdict]) -> String {
    let by_key = crate::verdicts::trials_by_key(runs);
    let varied: Vec<String> = verdicts
        .iter()
        .filter(|verdict| {
            let trials = by_key.get(&(verdict.key.scenario.as_str(), verdict.key.variant.as_str())).map_or(&[][..], Vec::as_slice);
            trials.split_first().is_some_and(|(first, rest)| rest.iter().any(|trial| !first.repeats(trial)))
        })
        .map(|verdict| line(&verdict.key.to_string()))
        .collect();
    if varied.is_empty() {
        "deterministic: every trial repeated its scenario's first exactly (--repeat adds cost, not information, here)\n".to_owned()
    } else {
        format!(
            "not deterministic: the trials of {} of {} scenarios varied: {}\n",
            varied.len(),
            verdicts.len(),
            reloop_report::first_named::first_named(&varied, String::clone)
        )
    }
}
