//! `reloop run` end to end: the bundled suite, failing expectations, the
//! summary table's shape.

use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, reloop, repo, stderr, stdout, write};

#[test]
fn the_bundled_suite_passes_and_writes_three_reports() {
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().join("latest");
    let output = reloop(&repo(), &["run", "scenarios/", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}\n{}", stdout(&output), stderr(&output));
    let table = stdout(&output);
    let files = std::fs::read_dir(repo().join("scenarios")).unwrap().count();
    let summary = table.lines().find(|l| l.ends_with(" passed, 0 failed")).unwrap_or_else(|| panic!("{table}"));
    let passed: usize = summary.split(' ').next().unwrap().parse().unwrap();
    assert!(passed >= files, "every scenario file ran at least once: {passed} runs, {files} files");
    for file in ["runs.parquet", "steps.parquet", "events.parquet"] {
        let bytes = std::fs::read(out_dir.join(file)).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"), "{file} is a complete Parquet file");
    }
    let leftovers: Vec<_> = std::fs::read_dir(&out_dir).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).collect();
    assert!(leftovers.is_empty(), "no temporary files remain");
}

#[test]
fn a_failed_expectation_exits_1_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "wrong.yaml", &MINIMAL_SCENARIO.replace("[\"42\"]", "[\"43\"]"));
    let output = reloop(dir.path(), &["run", "wrong.yaml", "--out", "out", "--junit", "junit.xml"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains("<testsuite name=\"reloop\" tests=\"1\" failures=\"1\""), "{junit}");
    // The message carries the reason, not only the outcome (issue 30).
    assert!(junit.contains("<failure message=\"outcome final_answer: final_answer_contains: &quot;43&quot; not in"), "{junit}");
    let table = stdout(&output);
    assert!(table.contains("FAIL"), "{table}");
    assert!(table.contains("final_answer_contains: \"43\" not in \"The answer is 42.\""), "{table}");
    assert!(dir.path().join("out/runs.parquet").exists(), "a failing run still writes its report");
}

#[test]
fn a_divergence_is_reported_with_its_diff() {
    let dir = tempfile::tempdir().unwrap();
    let recording = "format: reloop.recording/v1\nexchanges:\n  - tool_calls: [{ name: read, arguments: { path: a } }]\n";
    write(dir.path(), "recording.yaml", recording);
    let scenario = "model: gpt-4o\nsystem: s\ntask: t\nrecording: recording.yaml\ntools:\n  read: { description: r, results: [ { output: contents of a } ] }\nexpect: { outcome: final_answer }\n";
    write(dir.path(), "short.yaml", scenario);
    let output = reloop(dir.path(), &["run", "short.yaml", "--out", "out"]);
    assert_eq!(output.status.code(), Some(1));
    let table = stdout(&output);
    assert!(table.contains("divergence"), "{table}");
    assert!(table.contains("outcome: expected final_answer, got divergence"), "{table}");
    assert!(table.contains("divergence at request 1 (recording_exhausted):"), "{table}");
    assert!(table.contains("expected: no further request (the recording has 1 exchanges)"), "{table}");
    assert!(table.contains("actual:   a request ending with tool: \"[call_000_0] contents of a\""), "{table}");
}

#[test]
fn summary_table_shape() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recordings/answer.yaml", ONE_TEXT_RECORDING);
    let scenario = MINIMAL_SCENARIO.replace("recording.yaml", "../recordings/answer.yaml");
    write(dir.path(), "scenarios/a-pass.yaml", &scenario);
    write(dir.path(), "scenarios/b-fail.yaml", &scenario.replace("final_answer\n", "ask_user\n"));
    let output = reloop(dir.path(), &["run", "scenarios", "--out", "out", "--jobs", "2"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    insta::assert_snapshot!(stdout(&output));
}
