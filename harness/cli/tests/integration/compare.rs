//! `reloop compare`, `run --baseline` and the outputs for people: a report
//! against itself holds every gate; a recording changed to repeat a tool
//! call (a new doom loop, more tokens) fails the default gates by name, in
//! the table, the PR comment, the JUnit and the GitHub annotations.

use std::path::Path;

use crate::util::{reloop, stderr, stdout, write};

pub(crate) const POLL_SCENARIO: &str = "\
name: poll-ci
model: gpt-4o
system: You are terse.
task: Is CI run 7 done?
recording: recording.yaml
tools:
  ci_status:
    description: Show the status of a CI run.
    parameters: { type: object, properties: { run: { type: integer } }, required: [run] }
    results:
      - output: in_progress
";

pub(crate) fn recording(polls: usize) -> String {
    let call = "  - tool_calls: [{ name: ci_status, arguments: { run: 7 } }]\n";
    format!("format: reloop.recording/v1\nexchanges:\n{}  - text: Still running.\n", call.repeat(polls))
}

/// A suite of one scenario under `dir/suite`, its recording polling `polls` times.
pub(crate) fn suite(dir: &Path, polls: usize) {
    write(dir, "suite/poll-ci.yaml", POLL_SCENARIO);
    write(dir, "suite/recording.yaml", &recording(polls));
}

pub(crate) fn run_into(dir: &Path, out: &str) {
    let output = reloop(dir, &["run", "suite", "--out", out]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// A base report with one poll and a new one with three identical polls.
fn regression(dir: &Path) {
    suite(dir, 1);
    run_into(dir, "base");
    suite(dir, 3);
    run_into(dir, "new");
}

#[test]
fn a_report_against_itself_holds_every_gate() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    run_into(dir.path(), "a");
    run_into(dir.path(), "b");
    let output = reloop(dir.path(), &["compare", "a", "b"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("PASS: all 8 gate checks hold"), "{}", stdout(&output));
    let json = reloop(dir.path(), &["compare", "a/runs.parquet", "b", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(value["passed"], true);
    assert_eq!(value["changed"].as_array().map(Vec::len), Some(0));
}

#[test]
fn a_repeated_tool_call_fails_the_doom_loop_and_token_gates() {
    let dir = tempfile::tempdir().unwrap();
    regression(dir.path());
    let output = reloop(dir.path(), &["compare", "base", "new", "--markdown", "pr.md", "--junit", "gates.xml"]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}{}", stderr(&output));
    assert!(text.contains("gate failed: doom_loop_detected max_new 0 (all runs): 0 → 1: poll-ci"), "{text}");
    assert!(text.contains("gate failed: input_tokens_total max_increase 5%"), "{text}");
    let markdown = std::fs::read_to_string(dir.path().join("pr.md")).unwrap();
    assert!(markdown.lines().count() < 60);
    insta::assert_snapshot!("compare_regression_markdown", markdown);
    insta::assert_snapshot!("compare_regression_junit", timeless(&std::fs::read_to_string(dir.path().join("gates.xml")).unwrap()));
}

#[test]
fn github_annotations_point_at_the_scenario_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    regression(dir.path());
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_reloop"))
        .current_dir(dir.path())
        .args(["compare", "base", "new"])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    let annotations: Vec<String> = stdout(&output).lines().filter(|l| l.starts_with("::error")).map(str::to_owned).collect();
    assert!(annotations.iter().any(|a| a.starts_with("::error file=suite/poll-ci.yaml,line=1,title=reloop gate doom_loop_detected::")), "{annotations:?}");
    let quiet = reloop(dir.path(), &["compare", "base", "new"]);
    assert!(!stdout(&quiet).contains("::error"), "annotations only under GitHub Actions");
}

#[test]
fn run_with_a_baseline_judges_the_gates_and_puts_them_in_junit() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    run_into(dir.path(), "base");
    suite(dir.path(), 3);
    let output = reloop(dir.path(), &["run", "suite", "--out", "new", "--baseline", "base", "--junit", "junit.xml"]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains("<testcase name=\"poll-ci\""), "{junit}");
    assert!(junit.contains("<testsuite name=\"reloop gates\" tests=\"8\" failures=\"6\""), "{junit}");
}

#[test]
fn gates_are_judged_as_written_and_bad_gate_files_name_their_line() {
    let dir = tempfile::tempdir().unwrap();
    regression(dir.path());
    write(dir.path(), "lenient.yaml", "doom_loop_detected: { max_new: 1 }\ninput_tokens_total: { max_increase: 500% }\n");
    let lenient = reloop(dir.path(), &["compare", "base", "new", "--gates", "lenient.yaml"]);
    assert_eq!(lenient.status.code(), Some(0), "{}", stdout(&lenient));
    write(dir.path(), "typo.yaml", "passed: { no_regressions: true }\ninput_tokens: { max_increase: 5% }\n");
    let typo = reloop(dir.path(), &["compare", "base", "new", "--gates", "typo.yaml"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(stderr(&typo).contains("typo.yaml:2: field `input_tokens`: no such column"), "{}", stderr(&typo));
    write(dir.path(), "bad.yaml", "passed:\n  max_increse: 5%\n");
    let bad = reloop(dir.path(), &["compare", "base", "new", "--gates", "bad.yaml"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("bad.yaml:2:3: field `passed.max_increse`: unknown field"), "{}", stderr(&bad));
    let missing = reloop(dir.path(), &["compare", "nowhere", "new"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("nowhere"), "{}", stderr(&missing));
}

/// A JUnit document without its times (wall time, which varies).
pub(crate) fn timeless(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(at) = rest.find(" time=\"") {
        out.push_str(&rest[..at]);
        rest = &rest[at + 7..];
        rest = &rest[rest.find('"').map_or(rest.len(), |end| end + 1)..];
    }
    out.push_str(rest);
    out
}

/// A scenario name meant to act on every output: a workflow command after
/// a newline, terminal escapes (OSC 52 clipboard, OSC 0 title, CSI 2J),
/// a backtick, a mention, HTML and a fake heading.
const HOSTILE_NAME: &str = r#""x\n::error::owned \e]52;c;cHduZWQ=\a\e]0;title\a\e[2J `tick` @team <img src=x> <!-- ### all gates hold""#;

/// Regression (issue 28): `run`'s failure list, `compare`'s "gate failed:"
/// lines and its PR comment printed names raw: a name could become a
/// GitHub Actions workflow command, reach the terminal as escapes, or
/// break out of the comment's code spans. Each output escapes it for its
/// destination (snapshots hold each).
#[test]
fn a_hostile_scenario_name_acts_in_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = POLL_SCENARIO.replace("name: poll-ci", &format!("name: {HOSTILE_NAME}"));
    write(dir.path(), "suite/poll-ci.yaml", &hostile);
    write(dir.path(), "suite/recording.yaml", &recording(1));
    run_into(dir.path(), "base");
    write(dir.path(), "suite/recording.yaml", &recording(3));
    write(dir.path(), "suite/poll-ci.yaml", &format!("{hostile}expect: {{ final_answer_contains: [done] }}\n"));
    let run = reloop(dir.path(), &["run", "suite", "--out", "new"]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let compared = std::process::Command::new(env!("CARGO_BIN_EXE_reloop"))
        .current_dir(dir.path())
        .args(["compare", "base", "new", "--markdown", "pr.md"])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(compared.status.code(), Some(1), "{}", stderr(&compared));
    let markdown = std::fs::read_to_string(dir.path().join("pr.md")).unwrap();
    for (output, text) in [("run", stdout(&run) + &stderr(&run)), ("compare", stdout(&compared) + &stderr(&compared))] {
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{output}: a terminal escape got through:\n{text}");
        for line in text.lines().filter(|line| line.starts_with("::")) {
            assert!(line.starts_with("::error file=suite/poll-ci.yaml,line=1,title=reloop gate "), "{output}: a workflow command reloop did not mean: {line}");
        }
    }
    // The name is in a code span wherever it appears (HTML, mentions and
    // headings are plain text there), on one line.
    for line in markdown.lines().filter(|line| line.contains("<img") || line.contains("@team")) {
        assert!(line.contains("``x\\n::error::owned") && line.contains("<!-- ### all gates hold``"), "outside a code span: {line}");
    }
    assert!(!markdown.lines().any(|line| line.starts_with("::")), "{markdown}");
    assert!(!markdown.lines().any(|line| line.starts_with("###") && line.contains("all gates hold")), "{markdown}");
    insta::assert_snapshot!("hostile_name_run_table_and_failures", stdout(&run));
    let compare_text = stdout(&compared);
    let named: Vec<&str> = compare_text.lines().filter(|line| line.contains("owned")).collect();
    insta::assert_snapshot!("hostile_name_compare_lines", named.join("\n"));
    insta::assert_snapshot!("hostile_name_markdown", markdown);
}

/// Issue 30: a report of no runs, an empty gate file, `{}` and `passed: {}`
/// all printed "PASS: all 0 gate checks hold", and a gate whose `only:`
/// matched no run passed.
#[test]
fn gates_cannot_pass_on_nothing() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    run_into(dir.path(), "base");
    // The one scenario lands in one of two shards; the other's report holds no run.
    for shard in ["1/2", "2/2"] {
        let empty = reloop(dir.path(), &["run", "suite", "--shard", shard, "--out", "empty"]);
        assert_eq!(empty.status.code(), Some(0), "{}", stderr(&empty));
        if crate::tables::read_rows(&dir.path().join("empty/runs.parquet")).is_empty() {
            break;
        }
    }
    assert!(crate::tables::read_rows(&dir.path().join("empty/runs.parquet")).is_empty(), "one shard of two holds no run");
    let against_empty = reloop(dir.path(), &["compare", "base", "empty"]);
    assert_eq!(against_empty.status.code(), Some(2), "{}", stdout(&against_empty));
    assert!(stderr(&against_empty).contains("holds no runs, so no gate can judge it (--allow-empty to accept)"), "{}", stderr(&against_empty));
    let allowed = reloop(dir.path(), &["compare", "base", "empty", "--allow-empty"]);
    assert_ne!(allowed.status.code(), Some(2), "{}", stderr(&allowed));
    for (name, text) in [("blank.yaml", "# nothing\n"), ("braces.yaml", "{}\n"), ("checkless.yaml", "passed: {}\n")] {
        write(dir.path(), name, text);
        let output = reloop(dir.path(), &["compare", "base", "base", "--gates", name]);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", stdout(&output));
        assert!(stderr(&output).contains(name), "{name}: {}", stderr(&output));
    }
    write(dir.path(), "only.yaml", "input_tokens_total: { max_increase: 5%, only: \"long-*\" }\n");
    let nothing_selected = reloop(dir.path(), &["compare", "base", "base", "--gates", "only.yaml"]);
    assert_eq!(nothing_selected.status.code(), Some(1), "{}", stdout(&nothing_selected));
    assert!(stdout(&nothing_selected).contains("judged no run"), "{}", stdout(&nothing_selected));
}
