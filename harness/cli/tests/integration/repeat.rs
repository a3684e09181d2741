//! Repeated trials (issue 45): `run --repeat N` runs each scenario N times,
//! each trial its own run (`trial` in every table), and judges the scenario
//! over its trials: pass^N by default, a pass rate with `--min-pass-rate`;
//! a scenario whose trials disagree is named flaky in the table, JUnit and
//! the PR comment.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::tables::{Row, read_rows};
use crate::util::{reloop, repo, stderr, stdout};

/// The black-box agent that gives up half the time, drawn from the OS's
/// randomness: 20 trials all agree with probability 2 in a million.
fn random_quitter() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/random-quitter/random-quitter.yaml")
}

/// The cells of `rows` but `dropped`, in order.
fn without(rows: &[Row], dropped: &[&str]) -> Vec<Row> {
    rows.iter().map(|row| row.iter().filter(|(name, _)| !dropped.contains(&name.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()).collect()
}

#[test]
fn an_agent_that_gives_up_at_random_is_flaky_over_twenty_trials_and_fails_unless_a_pass_rate_allows() {
    let dir = tempfile::tempdir().unwrap();
    let (out, junit, comment) = (dir.path().join("out"), dir.path().join("junit.xml"), dir.path().join("comment.md"));
    let scenario = random_quitter();
    let args = |extra: &[&'static str]| {
        let mut args: Vec<&str> = vec![
            "run",
            scenario.to_str().unwrap(),
            "--repeat",
            "20",
            "--jobs",
            "4",
            "--out",
            out.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--markdown",
            comment.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args
    };
    let output = reloop(dir.path(), &args(&[]));
    let (text, log) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "pass^20 fails a flaky scenario\n{text}{log}");

    let rows = read_rows(&out.join("runs.parquet"));
    let trials: BTreeSet<u64> = rows.iter().map(|r| r["trial"].parse().unwrap()).collect();
    assert_eq!(trials, (0..20).collect(), "one row per trial, numbered 0 to 19");
    let passed = rows.iter().filter(|r| r["passed"] == "true").count();
    assert!(0 < passed && passed < 20, "{passed}/20 passed: the agent gives up at random\n{text}");
    let gave_up = rows.iter().filter(|r| r["outcome"] == "agent_error").count();
    assert_eq!(passed + gave_up, 20, "a trial passes or gives up\n{rows:#?}");

    // The table: k/20, pass^1 = k/20, pass^20 = 0 (not every trial passed),
    // pass@20 = 1, the Wilson interval, and the verdict.
    for header in ["passed", "pass^1", "pass^20", "pass@20", "95% interval", "verdict"] {
        assert!(text.contains(header), "{header}\n{text}");
    }
    let row = text.lines().find(|line| line.contains("random-quitter") && line.contains("flaky FAIL")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains(&format!(" {passed}/20 ")), "{row}");
    assert!(row.contains(&format!(" {:.2} ", passed as f64 / 20.0)) && row.contains(" 0.00 ") && row.contains(" 1.00 "), "{row}");
    assert!(row.contains(" [0."), "an interval on the rate: {row}");
    assert!(text.contains("flaky (trials disagree): random-quitter"), "{text}");
    assert!(text.contains(&format!("random-quitter ({}): passed {passed}/20, flaky, needs pass^20", random_quitter().display())), "{text}");
    assert!(text.contains("not deterministic: the trials of 1 of 1 scenarios varied: random-quitter"), "{text}");

    // JUnit: the failed case holds its failure and a rerunFailure per
    // further failed trial (Surefire's rerun format).
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(&format!("<failure message=\"flaky: passed {passed}/20, needs pass^20\">")), "{xml}");
    assert_eq!(xml.matches("<rerunFailure message=\"trial ").count(), 20 - passed, "{xml}");
    assert!(xml.contains("<property name=\"flaky\" value=\"true\"/>"), "{xml}");
    // The PR comment without a baseline: the run's own verdicts.
    let md = std::fs::read_to_string(&comment).unwrap();
    assert!(md.contains("❌") && md.contains(&format!("| `random-quitter` | {passed}/20 |")) && md.contains("flaky"), "{md}");

    // Below its rate, the scenario passes: it fails only if all 20 give up.
    let output = reloop(dir.path(), &args(&["--min-pass-rate", "0.05"]));
    let (text, log) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(0), "{text}{log}");
    assert!(text.lines().any(|line| line.contains("random-quitter") && line.contains("flaky ok")), "{text}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let passed = read_rows(&out.join("runs.parquet")).iter().filter(|r| r["passed"] == "true").count();
    assert!(!xml.contains("<failure") && xml.matches("<flakyFailure message=\"trial ").count() == 20 - passed, "{xml}");
    let md = std::fs::read_to_string(&comment).unwrap();
    assert!(md.contains("✅") && md.contains("flaky"), "{md}");
}

#[test]
fn a_deterministic_scenario_repeats_exactly_but_for_its_trial_and_wall_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scenario = repo().join("scenarios/doom-loop-stop.yaml");
    let output = reloop(dir.path(), &["run", scenario.to_str().unwrap(), "--repeat", "3", "--out", out.to_str().unwrap()]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    assert!(text.contains("deterministic: every trial repeated its scenario's first exactly"), "{text}");
    assert!(text.lines().any(|line| line.contains("doom-loop-stop") && line.contains(" 3/3 ") && line.contains(" ok ")), "{text}");

    let runs = read_rows(&out.join("runs.parquet"));
    assert_eq!(runs.iter().map(|r| r["trial"].as_str()).collect::<BTreeSet<_>>(), BTreeSet::from(["0", "1", "2"]));
    let runs = without(&runs, &["trial", "wall_ms"]);
    assert!(runs.len() == 3 && runs.iter().all(|row| *row == runs[0]), "{runs:#?}");
    // Steps and events carry the trial too, and repeat as exactly.
    for table in ["steps.parquet", "events.parquet"] {
        let rows = read_rows(&out.join(table));
        let per_trial = |trial: &str| without(&rows.iter().filter(|r| r["trial"] == trial).cloned().collect::<Vec<_>>(), &["trial"]);
        assert!(!per_trial("0").is_empty(), "{table}");
        assert_eq!(per_trial("0"), per_trial("1"), "{table}");
        assert_eq!(per_trial("0"), per_trial("2"), "{table}");
    }
    // The page draws each trial's own calls: three equal timelines, not one of every trial's calls.
    let page = dir.path().join("page.html");
    let output = reloop(dir.path(), &["report", out.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    let timelines: Vec<&str> = html.split("<summary>doom-loop-stop <small>").skip(1).map(|rest| rest.split("</small>").next().unwrap()).collect();
    assert!(timelines.len() == 3 && timelines.iter().all(|t| *t == timelines[0]), "{timelines:?}");
}

/// Twenty live trials are twenty times the upstream's calls: said before
/// the first run, and refused above `--max-live-calls` (no upstream is
/// reached: the port is closed).
#[test]
fn repeated_live_runs_say_their_upstream_calls_before_starting_and_max_live_calls_bounds_them() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = repo().join("scenarios/doom-loop-stop.yaml");
    let out = dir.path().join("out");
    let args = [
        "run",
        scenario.to_str().unwrap(),
        "--upstream",
        "http://127.0.0.1:9",
        "--record-mode",
        "all",
        "--repeat",
        "20",
        "--max-live-calls",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    let output = reloop(dir.path(), &args);
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{log}");
    assert!(log.contains("note: --upstream: 20 runs (1 × 20 trials) will make about "), "{log}");
    assert!(log.contains("error: --max-live-calls 3: the batch would make about ") && !out.join("runs.parquet").exists(), "{log}");
    // Every trial makes the recording's calls: a multiple of twenty.
    let calls: u64 =
        log.split("will make about ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{log}"));
    assert!(calls > 3 && calls.is_multiple_of(20), "{calls}: {log}");
}

/// A runs table of scenario `a` planted in `dir/NAME/runs.parquet`: one
/// row per trial with these input tokens.
fn planted(dir: &Path, name: &str, tokens: &[i64]) -> PathBuf {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    let text = |value: &str| Arc::new(StringArray::from(vec![value; tokens.len()])) as ArrayRef;
    let trials: Vec<i64> = (0..tokens.len() as i64).collect();
    let batch = RecordBatch::try_from_iter([
        ("scenario", text("a")),
        ("scenario_file", text("scenarios/a.yaml")),
        ("variant", text("default")),
        ("trial", Arc::new(Int64Array::from(trials)) as ArrayRef),
        ("outcome", text("final_answer")),
        ("input_tokens_total", Arc::new(Int64Array::from(tokens.to_vec())) as ArrayRef),
    ])
    .unwrap();
    let report = dir.join(name);
    std::fs::create_dir_all(&report).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(report.join("runs.parquet")).unwrap(), batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    report
}

/// `compare` over repeated runs gates on the interval: +20 % with tight
/// trials fails a 5 % limit, +10 % on the means with trials spread from
/// −50 % to +70 % holds it (its interval reaches below 5 %), and the same
/// +10 % from single runs fails it, as before.
#[test]
fn compare_gates_repeated_runs_on_the_interval_not_the_mean() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gates.yaml"), "input_tokens_total: { max_increase: 5% }\n").unwrap();
    let judge = |base: &[i64], new: &[i64]| {
        let (base, new) = (planted(dir.path(), "base", base), planted(dir.path(), "new", new));
        reloop(dir.path(), &["compare", base.to_str().unwrap(), new.to_str().unwrap(), "--gates", "gates.yaml"])
    };
    let tight = judge(&[100, 101, 99, 100, 100], &[120, 121, 119, 120, 120]);
    assert_eq!(tight.status.code(), Some(1), "{}{}", stdout(&tight), stderr(&tight));
    // (The gate line is escaped for GitHub Actions, `%` as `%25`, as every gate line is.)
    assert!(stdout(&tight).contains("100 → 120 (+20.0%25), interval [+19.0%25, +21.0%25]"), "{}", stdout(&tight));
    assert!(!stdout(&tight).contains("│ trial"), "trial is a key, not a metric: {}", stdout(&tight));
    let noisy = judge(&[100, 60, 140, 100, 100], &[110, 50, 170, 90, 130]);
    assert_eq!(noisy.status.code(), Some(0), "{}{}", stdout(&noisy), stderr(&noisy));
    let once = judge(&[100], &[110]);
    assert_eq!(once.status.code(), Some(1), "{}{}", stdout(&once), stderr(&once));
}
