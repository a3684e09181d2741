//! Bad input exits 2 with the file, the line and the field.

use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, reloop, stderr, write};

#[test]
fn unknown_field_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    let scenario = MINIMAL_SCENARIO.replace("system: You are terse.\n", "system: You are terse.\nloop:\n  step_budgett: 5\n");
    write(dir.path(), "typo.yaml", &scenario);
    let output = reloop(dir.path(), &["run", "typo.yaml", "--out", "out"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("typo.yaml:4:"), "{message}");
    assert!(message.contains("field `loop.step_budgett`"), "{message}");
    assert!(message.contains("unknown field `step_budgett`"), "{message}");
    assert!(!dir.path().join("out").exists(), "no report for bad input");
}

#[test]
fn wrong_type_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    let scenario = format!("{MINIMAL_SCENARIO}loop:\n  step_budget: lots\n");
    write(dir.path(), "bad.yaml", &scenario);
    let output = reloop(dir.path(), &["run", "bad.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("bad.yaml:9:"), "{message}");
    assert!(message.contains("field `loop.step_budget`"), "{message}");
}

#[test]
fn malformed_yaml_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "broken.yaml", "model: gpt-4o\nsystem: \"unclosed\ntask: x\n");
    let output = reloop(dir.path(), &["run", "broken.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("broken.yaml:3:1: invalid indentation"), "{message}");
}

#[test]
fn errors_in_the_recording_name_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: hi\n    finish: stop\n");
    write(dir.path(), "s.yaml", MINIMAL_SCENARIO);
    let output = reloop(dir.path(), &["run", "s.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("recording.yaml:4:"), "{message}");
    assert!(message.contains("field `exchanges[0].finish`"), "{message}");
}

#[test]
fn a_missing_recording_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.yaml", MINIMAL_SCENARIO);
    let output = reloop(dir.path(), &["run", "s.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("recording.yaml: cannot read"), "{}", stderr(&output));
}

#[test]
fn fixture_results_need_output_or_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    let scenario = format!("{MINIMAL_SCENARIO}tools:\n  read:\n    description: r\n    results:\n      - when: {{ path: a }}\n");
    write(dir.path(), "s.yaml", &scenario);
    let output = reloop(dir.path(), &["run", "s.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("field `tools.read.results[0]`: needs exactly one of `output` or `error`"), "{}", stderr(&output));
}
