//! A replayed recording that kept the provider's usage: the `*_recorded`
//! columns carry it beside reloop's own counts, and the run's cost is priced
//! from it (an Anthropic session's recorded cache reads and writes included).

use crate::tables::read_rows;
use crate::util::{reloop, stderr, write};

const SCENARIO: &str = "\
model: claude-sonnet-4-5
wire: anthropic
system: You are terse.
task: What is the answer?
recording: recording.yaml
expect:
  outcome: final_answer
";

fn run(recording: &str) -> (Vec<crate::tables::Row>, Vec<crate::tables::Row>) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.yaml", SCENARIO);
    write(dir.path(), "recording.yaml", recording);
    let out = dir.path().join("out");
    let output = reloop(dir.path(), &["run", "s.yaml", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    (read_rows(&out.join("runs.parquet")), read_rows(&out.join("steps.parquet")))
}

#[test]
fn recorded_usage_fills_its_columns_and_prices_the_run() {
    let recording = "format: reloop.recording/v2\nexchanges:\n  - parts: [{ type: text, text: The answer is 42. }]\n    usage: { input_tokens: 2000000, output_tokens: 100000, cache_read_tokens: 1000000, cache_write_tokens: 500000 }\n";
    let (runs, steps) = run(recording);
    let step = &steps[0];
    assert_eq!(step["input_tokens_recorded"], "2000000");
    assert_eq!(step["cache_read_tokens_recorded"], "1000000");
    assert_eq!(step["cache_write_tokens_recorded"], "500000");
    assert_ne!(step["input_tokens"], "2000000", "reloop's own count stays beside it");
    let run = &runs[0];
    assert_eq!(run["cost_source"], "recorded");
    assert_eq!(run["input_tokens_recorded_total"], "2000000");
    assert_eq!(run["output_tokens_recorded_total"], "100000");
    // claude-sonnet-4-5 per million: 3.00 input, 0.30 cache read, 3.75 cache write, 15.0 output.
    let expected = 0.5 * 3.00 + 1.0 * 0.30 + 0.5 * 3.75 + 0.1 * 15.0;
    let cost: f64 = run["estimated_cost_usd_recorded"].parse().unwrap();
    assert!((cost - expected).abs() < 1e-9, "{cost} != {expected}");
}

#[test]
fn without_recorded_usage_the_columns_are_null_and_the_cost_simulated() {
    let (runs, steps) = run("format: reloop.recording/v2\nexchanges:\n  - text: The answer is 42.\n");
    assert_eq!(steps[0]["input_tokens_recorded"], "null");
    assert_eq!(runs[0]["input_tokens_recorded_total"], "null");
    assert_eq!(runs[0]["cost_source"], "simulated");
}
