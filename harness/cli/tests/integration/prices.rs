//! The price table: a model without a row costs null and is warned about;
//! `--prices FILE` replaces the table; a bad file is bad input.

use crate::tables::read_rows;
use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, reloop, stderr, write};

fn suite(model: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "scenario.yaml", &MINIMAL_SCENARIO.replace("model: gpt-4o", &format!("model: {model}")));
    dir
}

fn cost(dir: &std::path::Path) -> String {
    read_rows(&dir.join("out/runs.parquet")).remove(0).remove("estimated_cost_usd").unwrap()
}

#[test]
fn an_unknown_model_costs_null_with_a_warning_until_a_price_file_knows_it() {
    let dir = suite("llama-3.3-70b");
    let output = reloop(dir.path(), &["run", "scenario.yaml", "--out", "out"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("warning: model `llama-3.3-70b` is not in the price table"), "{}", stderr(&output));
    assert_eq!(cost(dir.path()), "null");

    let row =
        "{ model: llama-3.3, input: 1.0, output: 2.0, cache_read: 0.5, max_output_tokens: 8192, date: 2026-11-24, source: \"https://example.com/prices\" }";
    write(dir.path(), "prices.yaml", &format!("version: 1\nmodels:\n  - {row}\n"));
    let output = reloop(dir.path(), &["run", "scenario.yaml", "--out", "out", "--prices", "prices.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
    assert_ne!(cost(dir.path()), "null");
}

#[test]
fn a_known_model_is_priced_without_a_warning() {
    let dir = suite("claude-opus-4-5-20251101");
    let output = reloop(dir.path(), &["run", "scenario.yaml", "--out", "out"]);
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
    assert_ne!(cost(dir.path()), "null");
}

#[test]
fn a_bad_price_file_names_file_line_and_field() {
    let dir = suite("gpt-4o");
    write(dir.path(), "prices.yaml", "version: 1\nmodels:\n  - model: gpt-4o\n    input: cheap\n");
    let output = reloop(dir.path(), &["run", "scenario.yaml", "--out", "out", "--prices", "prices.yaml"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("prices.yaml:4:") && message.contains("models[0].input"), "{message}");
    assert!(!dir.path().join("out").exists(), "no report for bad input");
}
