//! The reports of the bundled suite and of the long-scenario sweep, compared
//! row by row with the reports stored under `tests/data/golden/`. A change
//! meant to alter no figure (a refactor, a speed-up, a new report layout)
//! proves it here.
//!
//! Rows are compared sorted, since reports may be written in completion
//! order, and without the wall-clock columns. Columns added since the
//! stored reports were made are allowed; a stored column that is missing
//! or holds another value fails.
//!
//! After a change that is meant to alter figures, store the new reports
//! with `RELOOP_BLESS=1 cargo nextest run -p reloop golden` and let the
//! review read the diff.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::tables::{Row, read_rows};
use crate::util::{repo, stderr, stdout};

/// Columns that measure real time, which no two runs share.
const TIMING_COLUMNS: [&str; 1] = ["wall_ms"];

/// The three tables of a report.
const TABLES: [&str; 3] = ["runs", "steps", "events"];

#[test]
fn the_bundled_suite_writes_the_stored_rows() {
    check_against_golden("suite", &["run", "scenarios/", "--jobs", "2"], 0);
}

#[test]
fn the_long_sweep_writes_the_stored_rows() {
    let strategies = "roku,opencode,codex,masking,none";
    // Exit 1: without compaction (and with masking, on one) the long sessions
    // overflow their context window, as they are meant to.
    check_against_golden("long-sweep", &["sweep", "scenarios/long/", "--strategies", strategies, "--jobs", "2"], 1);
}

fn check_against_golden(name: &str, args: &[&str], exit_code: i32) {
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().join(name);
    let mut args = args.to_vec();
    args.extend(["--out", out_dir.to_str().unwrap()]);
    // An empty PATH: the black-box agents of `scenarios/agents/` are then
    // `skipped` on every machine, whatever it has installed.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_reloop"))
        .current_dir(repo())
        .args(&args)
        .env("NO_COLOR", "1")
        .env("PATH", "")
        .output()
        .expect("the reloop binary runs");
    assert_eq!(output.status.code(), Some(exit_code), "{}\n{}", stdout(&output), stderr(&output));
    let golden = repo().join("harness/cli/tests/data/golden").join(name);
    if std::env::var_os("RELOOP_BLESS").is_some() {
        bless(&out_dir, &golden);
        return;
    }
    let failures = report_differences(&golden, &out_dir);
    assert!(failures.is_empty(), "{name}: the reports differ from {}:\n\n{}", golden.display(), failures.join("\n\n"));
}

/// What differs between the report in `expected` and the one in `actual`,
/// table by table (nothing when they hold the same rows, timing aside).
pub fn report_differences(expected: &Path, actual: &Path) -> Vec<String> {
    TABLES.iter().filter_map(|table| compare_table(table, &table_path(expected, table), &table_path(actual, table))).collect()
}

/// `DIR/TABLE.parquet`, or `DIR/TABLE/` when a table is a folder of parts.
fn table_path(dir: &Path, table: &str) -> PathBuf {
    let file = dir.join(format!("{table}.parquet"));
    if file.exists() { file } else { dir.join(table) }
}

fn bless(produced: &Path, golden: &Path) {
    let _ = std::fs::remove_dir_all(golden);
    std::fs::create_dir_all(golden).unwrap();
    for table in TABLES {
        let rows = read_rows(&table_path(produced, table));
        assert!(!rows.is_empty() || table != "runs", "a report without runs is no golden report");
        std::fs::copy(table_path(produced, table), golden.join(format!("{table}.parquet"))).unwrap();
    }
}

/// `None` when `new` holds the same rows as `golden`; otherwise what differs.
fn compare_table(table: &str, golden: &Path, new: &Path) -> Option<String> {
    let golden_rows = read_rows(golden);
    let new_rows = read_rows(new);
    let columns: Vec<String> =
        golden_rows.first().map(|row| row.keys().filter(|c| !TIMING_COLUMNS.contains(&c.as_str())).cloned().collect()).unwrap_or_default();
    if let Some(missing) = columns.iter().find(|c| new_rows.first().is_some_and(|row| !row.contains_key(*c))) {
        return Some(format!("{table}: column `{missing}` is gone"));
    }
    let expected = sorted(&golden_rows, &columns);
    let actual = sorted(&new_rows, &columns);
    if expected == actual {
        return None;
    }
    Some(describe_difference(table, &columns, &expected, &actual))
}

/// Rows as cell lists in `columns` order, sorted by run, then by every cell.
fn sorted(rows: &[Row], columns: &[String]) -> Vec<Vec<String>> {
    let order = key_first(columns);
    let mut cells: Vec<Vec<String>> = rows.iter().map(|row| order.iter().map(|&i| row[&columns[i]].clone()).collect()).collect();
    cells.sort();
    // Back to `columns` order, for the readers of a failure.
    cells
        .into_iter()
        .map(|sorted_cells| {
            let mut in_order = vec![String::new(); columns.len()];
            for (cell, &i) in sorted_cells.into_iter().zip(&order) {
                in_order[i] = cell;
            }
            in_order
        })
        .collect()
}

/// Column indices with the run's identity first, so sorting groups a run.
fn key_first(columns: &[String]) -> Vec<usize> {
    let key = ["scenario", "variant", "wire"];
    let mut order: Vec<usize> = key.iter().filter_map(|k| columns.iter().position(|c| c == k)).collect();
    order.extend((0..columns.len()).filter(|i| !key.contains(&columns[*i].as_str())));
    order
}

/// Which runs differ, and the first differing row field by field.
fn describe_difference(table: &str, columns: &[String], expected: &[Vec<String>], actual: &[Vec<String>]) -> String {
    let run_of = |cells: &Vec<String>| -> String {
        ["scenario", "variant"].iter().filter_map(|k| columns.iter().position(|c| c == k)).map(|i| cells[i].as_str()).collect::<Vec<_>>().join(" / ")
    };
    let group = |rows: &[Vec<String>]| -> BTreeMap<String, Vec<Vec<String>>> {
        let mut runs: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
        for row in rows {
            runs.entry(run_of(row)).or_default().push(row.clone());
        }
        runs
    };
    let (expected_runs, actual_runs) = (group(expected), group(actual));
    let differing: BTreeSet<&String> = expected_runs.keys().chain(actual_runs.keys()).filter(|run| expected_runs.get(*run) != actual_runs.get(*run)).collect();
    let mut text = format!("{table}: {} stored rows, {} new; runs that differ ({}): ", expected.len(), actual.len(), differing.len());
    text.push_str(&differing.iter().take(10).map(|r| r.as_str()).collect::<Vec<_>>().join(", "));
    if let Some(run) = differing.first() {
        let empty = Vec::new();
        let (old, new) = (expected_runs.get(*run).unwrap_or(&empty), actual_runs.get(*run).unwrap_or(&empty));
        text.push_str(&format!("\nfirst: {run}, {} stored rows, {} new", old.len(), new.len()));
        if let Some((old_row, new_row)) = old.iter().zip(new).find(|(a, b)| a != b) {
            for ((column, was), now) in columns.iter().zip(old_row).zip(new_row) {
                if was != now {
                    text.push_str(&format!("\n  {column}: stored {was:?}, new {now:?}"));
                }
            }
        }
    }
    text
}
