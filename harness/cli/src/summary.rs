//! The terminal summary table of a run.

use comfy_table::{Cell, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use reloop_eval::RunSummary;
use reloop_report::escape::{line, terminal};

use crate::short_name::{MAX_NAME_CHARS, shortened};

/// One row per run, then a totals line.
pub fn render(runs: &[RunSummary]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_header(vec![
        "scenario",
        "outcome",
        "steps",
        "doom loop",
        "cache breaks",
        "input tok",
        "output tok",
        "compaction saved",
        "pass",
    ]);
    for run in runs {
        let m = &run.figures;
        table.add_row(vec![
            Cell::new(terminal(&shortened(&run.scenario, MAX_NAME_CHARS))),
            Cell::new(run.outcome.as_str()),
            Cell::new(format!("{}/{}", m.steps_used, m.step_budget)),
            Cell::new(m.doom_loop_first_step.map_or("-".to_owned(), |step| format!("step {step}"))),
            Cell::new(format!("{} ({} sim)", m.cache_breaks, m.cache_breaks_simulated)),
            Cell::new(m.input_tokens_total),
            Cell::new(m.output_tokens_total),
            Cell::new(savings(m.tokens_saved_total, m.compaction_savings_ratio)),
            Cell::new(match (run.passed, run.outcome) {
                (_, reloop_agent::Outcome::Skipped) => "skip",
                (true, _) => "ok",
                (false, _) => "FAIL",
            }),
        ]);
    }
    let skipped: Vec<String> = runs.iter().filter(|r| r.outcome == reloop_agent::Outcome::Skipped).map(|r| line(&r.scenario)).collect();
    let passed = runs.iter().filter(|r| r.passed).count() - skipped.len();
    let mut text = table.to_string();
    text.push_str(&format!("\n{passed} passed, {} failed\n", runs.len() - passed - skipped.len()));
    if !skipped.is_empty() {
        text.push_str(&format!("{} skipped (agent not installed, see docs/black-box.md): {}\n", skipped.len(), skipped.join(", ")));
    }
    for run in runs.iter().filter(|r| !r.passed) {
        // A line that starts with the name: nothing in it may end the line
        // or start a workflow command (GitHub Actions reads this output).
        text.push_str(&format!("\n{} ({}):\n", line(&run.scenario), line(&run.scenario_file)));
        let texts = run.texts();
        for failure in &texts.failed_expectations {
            text.push_str(&format!("  - {}\n", line(failure)));
        }
        for divergence in &texts.divergences {
            let lines: Vec<String> = divergence.lines().map(terminal).collect();
            text.push_str(&format!("  {}\n", lines.join("\n  ")));
        }
        if let Some(error) = &texts.strategy_error {
            text.push_str(&format!("  {}\n", terminal(error)));
        }
        if let Some(output) = texts.agent_output.as_deref().filter(|output| !output.trim().is_empty()) {
            text.push_str(&format!("  the agent's last output:\n{}", tail_lines(output, AGENT_TAIL_LINES)));
        }
    }
    text
}

/// Lines of a failed agent's output printed under its run: the ends of its
/// standard error and output (12 lines each, with their labels), enough
/// for a Python traceback's end, short enough for a batch of failures.
const AGENT_TAIL_LINES: usize = 26;

/// The last `lines` lines of `text`, indented, each ending in a newline.
fn tail_lines(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    all[all.len().saturating_sub(lines)..].iter().map(|line| format!("    | {}\n", terminal(line))).collect()
}

fn savings(tokens: i64, ratio: f64) -> String {
    if tokens == 0 { "-".to_owned() } else { format!("{tokens} ({:.1}%)", ratio * 100.0) }
}
