//! `reloop detectors` over the labelled doom-loop suite: every detector at
//! precision and recall 1 with its delay, `--min` as a gate, and a report
//! without labels refused.

use crate::util::{reloop, repo, stderr, stdout};

#[test]
fn the_labelled_suite_scores_every_detector() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("doom");
    let run = reloop(&repo(), &["run", "scenarios/doom-loops/", "--out", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "{}", stdout(&run));
    let scored = reloop(&repo(), &["detectors", out.to_str().unwrap(), "--min", "0.9"]);
    assert_eq!(scored.status.code(), Some(0), "{}{}", stdout(&scored), stderr(&scored));
    insta::assert_snapshot!("detectors_table", stdout(&scored));
}

#[test]
fn a_report_without_labels_is_bad_input_under_min() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plain");
    reloop(&repo(), &["run", "scenarios/one-shot-answer.yaml", "--out", out.to_str().unwrap()]);
    let scored = reloop(&repo(), &["detectors", out.to_str().unwrap(), "--min", "0.9"]);
    assert_eq!(scored.status.code(), Some(2), "{}", stdout(&scored));
    assert!(stderr(&scored).contains("no labelled run"), "{}", stderr(&scored));
    let missing = reloop(&repo(), &["detectors", dir.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
}
