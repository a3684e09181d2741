//! Retention through the real binary (issue 40): the planted session loses
//! exactly one of its two references under masking and none without
//! compaction, and `none` keeps every reference of the bundled long sessions.

use serde_json::Value;

use crate::tables::{Row, read_rows};
use crate::util::{reloop, repo, stderr};

fn sweep(scenario: &str, strategies: &str) -> (Vec<Row>, Vec<Row>, Vec<Row>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let output = reloop(&repo(), &["sweep", scenario, "--strategies", strategies, "--jobs", "2", "--out", out.to_str().unwrap()]);
    assert!(out.join("runs.parquet").exists(), "{}", stderr(&output));
    (read_rows(&out.join("runs.parquet")), read_rows(&out.join("steps.parquet")), read_rows(&out.join("events.parquet")))
}

fn of<'a>(rows: &'a [Row], variant: &str) -> Vec<&'a Row> {
    rows.iter().filter(|row| row["variant"] == variant).collect()
}

#[test]
fn the_planted_session_loses_one_of_two_references_under_masking_and_none_without_compaction() {
    let (runs, steps, events) = sweep("scenarios/retention-planted.yaml", "none,masking");
    let figures = |variant: &str| {
        let run = of(&runs, variant)[0];
        ["passed", "references_needed", "references_lost", "retention", "references_first_lost_step"].map(|column| run[column].clone())
    };
    assert_eq!(figures("none"), ["true", "2", "0", "1.0", "null"]);
    assert_eq!(figures("masking"), ["true", "2", "1", "0.5", "13"]);

    let lost_steps: Vec<(&str, &str)> =
        of(&steps, "masking").iter().filter(|s| s["references_lost"] != "0").map(|s| (s["step"].as_str(), s["references_lost_spans"].as_str())).collect();
    assert_eq!(lost_steps, [("13", r#"["ledger-sync-worker"]"#)]);
    let used: u64 = of(&steps, "none").iter().map(|s| s["references_used"].parse::<u64>().unwrap()).sum();
    assert_eq!(used, 2);

    let losses: Vec<&Row> = events.iter().filter(|e| e["kind"] == "reference_lost").collect();
    assert_eq!(losses.len(), 1, "one loss, under masking");
    assert_eq!(
        (losses[0]["variant"].as_str(), losses[0]["step"].as_str(), losses[0]["layer"].as_str(), losses[0]["strategy"].as_str()),
        ("masking", "13", "0", "masking")
    );
    let payload: Value = serde_json::from_str(&losses[0]["payload"]).unwrap();
    assert_eq!(payload["span"], "ledger-sync-worker");
    // The first call's result came in with the request of step 1.
    assert_eq!((&payload["introduced_by"]["tool"], &payload["introduced_by"]["step"]), (&Value::from("read_file"), &Value::from(1)));
    assert!(payload["introduced_by"]["call_id"].as_str().is_some_and(|id| !id.is_empty()), "{payload}");
    assert_eq!(payload["removed_at_step"], 11, "masking keeps ten results: the eleventh step masks the first");
    assert_eq!((&payload["edit"]["event"], &payload["edit"]["strategy"]), (&Value::from("microcompact_ran"), &Value::from("masking")));
}

#[test]
fn without_compaction_every_long_session_keeps_every_reference() {
    let (runs, _, events) = sweep("scenarios/long/", "none");
    assert!(runs.len() >= 5, "{runs:?}");
    for run in &runs {
        assert_eq!(run["references_lost"], "0", "{}", run["scenario"]);
        let needed: u64 = run["references_needed"].parse().unwrap();
        assert!(needed > 0, "{} needs references", run["scenario"]);
        assert_eq!(run["retention"], "1.0", "{}", run["scenario"]);
    }
    assert!(events.iter().all(|e| e["kind"] != "reference_lost"));
}

/// Issue 40, part 2: the constructed sessions each compact after their
/// second call and then edit `src/config.py` with text (`text.splitlines`)
/// that only the first read's result held, which the summary does not
/// restate; all but Claude Code's rerun the tests with the same arguments
/// as before the compaction (Claude Code's rerun has a new description).
#[test]
fn an_imported_sessions_own_compactions_report_what_they_dropped_and_what_it_fetched_again() {
    let sessions = ["claude-code-compaction", "codex-compaction", "pi-compaction", "openhands-condensation"]
        .map(|name| format!("scenarios/imported/constructed-{name}.yaml"));
    let others = ["scenarios/imported/codex-0-169-remote-compaction-rollout.yaml", "scenarios/imported/agent-history-pi-session-01-redacted.yaml"];
    let paths: Vec<&str> = sessions.iter().map(String::as_str).chain(others).collect();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let mut args = vec!["sweep"];
    args.extend(&paths);
    args.extend(["--strategies", "none,masking", "--jobs", "2", "--out", out.to_str().unwrap()]);
    let output = reloop(&repo(), &args);
    assert!(out.join("runs.parquet").exists(), "{}", stderr(&output));
    let runs = read_rows(&out.join("runs.parquet"));
    let figures = |scenario: &str| -> Vec<(String, String)> {
        let rows = runs.iter().filter(|r| r["scenario"] == scenario);
        rows.map(|r| (r["references_lost_recorded"].clone(), r["refetches_recorded"].clone())).collect()
    };
    let twice = |lost: &str, refetched: &str| vec![(lost.to_owned(), refetched.to_owned()); 2];
    assert_eq!(figures("constructed-claude-code-compaction"), twice("1", "0"), "the same on every variant");
    for name in ["constructed-codex-compaction", "constructed-pi-compaction", "constructed-openhands-condensation"] {
        assert_eq!(figures(name), twice("1", "1"), "{name}");
    }
    assert_eq!(figures("codex-0-169-remote-compaction-rollout"), twice("null", "0"), "an encrypted summary: what it held is unknown");
    assert_eq!(figures("agent-history-pi-session-01-redacted"), twice("null", "null"), "no compaction, no figures");
}
