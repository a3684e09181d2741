//! Verdicts a CI job can act on (issue 30): `only:` however the suite was
//! typed, report columns of the wrong type refused, `validate` and
//! `compare` judging gate columns alike, removed runs gated, `--baseline`
//! checked before the first run, a PR comment on every way out, and the
//! same comment and JUnit whatever `--jobs` says.

use std::path::Path;
use std::sync::Arc;

use crate::compare::{POLL_SCENARIO, recording, run_into, suite, timeless};
use crate::util::{reloop, stderr, stdout, write};

/// Scenario `name` polling `polls` times, in `folder` with its own recording.
fn scenario(dir: &Path, folder: &str, name: &str, polls: usize) {
    let text =
        POLL_SCENARIO.replace("name: poll-ci", &format!("name: {name}")).replace("recording: recording.yaml", &format!("recording: {name}.recording.yaml"));
    write(dir, &format!("{folder}/{name}.yaml"), &text);
    write(dir, &format!("{folder}/{name}.recording.yaml"), &recording(polls));
}

fn json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("JSON: {}{}", stdout(output), stderr(output)))
}

/// Issue 30: `only:` was matched against `scenario_file` as typed, so
/// `long/*` and the docs' own `long-*` matched nothing and `./scenarios/`
/// broke `scenarios/long/*`.
#[test]
fn only_judges_the_long_scenarios_however_the_suite_was_typed() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["long-a", "long-b"] {
        scenario(dir.path(), "scenarios/long", name, 1);
    }
    scenario(dir.path(), "scenarios", "short", 1);
    write(
        dir.path(),
        "gates.yaml",
        "input_tokens_total: { max_increase: 5%, per: run, only: \"long-*\" }\n\
         output_tokens_total: { max_increase: 5%, per: run, only: \"scenarios/long/*\" }\n\
         estimated_cost_usd: { max_increase: 5%, per: run, only: \"long/*\" }\n",
    );
    let absolute = dir.path().join("scenarios").to_str().unwrap().to_owned();
    for (out, typed) in [("plain", "scenarios/"), ("dotted", "./scenarios/"), ("absolute", absolute.as_str())] {
        let run = reloop(dir.path(), &["run", typed, "--out", out]);
        assert_eq!(run.status.code(), Some(0), "{typed}: {}", stderr(&run));
        let compared = reloop(dir.path(), &["compare", out, out, "--gates", "gates.yaml", "--format", "json"]);
        assert_eq!(compared.status.code(), Some(0), "{typed}: {}", stdout(&compared));
        let gates = json(&compared)["gates"].as_array().unwrap().clone();
        for metric in ["input_tokens_total", "output_tokens_total", "estimated_cost_usd"] {
            let scopes: Vec<&str> = gates.iter().filter(|g| g["metric"] == metric).map(|g| g["scope"].as_str().unwrap()).collect();
            assert_eq!(scopes, ["long-a", "long-b"], "{metric} with the suite typed {typed}");
        }
    }
}

/// Issue 30: a `runs.parquet` with the right names and the wrong types was
/// read without error (the column read as absent).
#[test]
fn a_report_column_of_the_wrong_type_is_named_with_both_types() {
    use arrow_array::{ArrayRef, RecordBatch, StringArray};
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    run_into(dir.path(), "base");
    let text = |value: &str| Arc::new(StringArray::from(vec![value])) as ArrayRef;
    let batch = RecordBatch::try_from_iter([("scenario", text("poll-ci")), ("variant", text("default")), ("input_tokens_total", text("420"))]).unwrap();
    let file = std::fs::File::create(dir.path().join("typed.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let output = reloop(dir.path(), &["compare", "base", "typed.parquet"]);
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(stderr(&output).contains("typed.parquet: column `input_tokens_total` has type Utf8, expected Int64"), "{}", stderr(&output));
}

/// Issue 30: `validate` accepted a gate file `compare` refused (a misspelt
/// column), and a column that exists but holds no numbers was called "no
/// such column". Both commands now say the same of each file.
#[test]
fn validate_judges_gate_columns_exactly_as_compare_does() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    run_into(dir.path(), "base");
    for (name, text, problem) in [
        (
            "typo-gates.yaml",
            "passed: { no_regressions: true }\ninput_tokens: { max_increase: 5% }\n",
            "typo-gates.yaml:2: field `input_tokens`: no such column in runs.parquet",
        ),
        ("text-gates.yaml", "outcome: { max: 1 }\n", "text-gates.yaml:1: field `outcome`: is a column of Utf8, not of numbers"),
        ("timing-gates.yaml", "wall_ms: { max: 1 }\n", "timing-gates.yaml:1: field `wall_ms`: measures the machine"),
        ("empty-gates.yaml", "{}\n", "empty-gates.yaml: the gate file has no rules"),
    ] {
        write(dir.path(), name, text);
        let validated = reloop(dir.path(), &["validate", name]);
        let compared = reloop(dir.path(), &["compare", "base", "base", "--gates", name]);
        for (command, output) in [("validate", &validated), ("compare", &compared)] {
            assert_eq!(output.status.code(), Some(2), "{command} {name}: {}", stdout(output));
            assert!(stderr(output).contains(problem), "{command} {name}: {}", stderr(output));
        }
        assert_eq!(stderr(&validated), stderr(&compared), "{name}: one check, one message");
    }
    write(dir.path(), "fine-gates.yaml", "input_tokens_total: { max_increase: 5% }\npassed: { no_regressions: true }\n");
    assert_eq!(reloop(dir.path(), &["validate", "fine-gates.yaml"]).status.code(), Some(0));
}

/// Issue 30: removed scenarios were never gated, and there was no rule to
/// gate them.
#[test]
fn removed_runs_fail_the_default_gates_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    scenario(dir.path(), "suite", "kept", 1);
    scenario(dir.path(), "suite", "dropped", 1);
    run_into(dir.path(), "base");
    std::fs::remove_file(dir.path().join("suite/dropped.yaml")).unwrap();
    std::fs::remove_file(dir.path().join("suite/dropped.recording.yaml")).unwrap();
    run_into(dir.path(), "new");
    let output = reloop(dir.path(), &["compare", "base", "new"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(stdout(&output).contains("gate failed: runs no_removed (--allow-removed to accept) (all runs): 1: dropped"), "{}", stdout(&output));
    let allowed = reloop(dir.path(), &["compare", "base", "new", "--allow-removed"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stdout(&allowed));
    // A shard lacks the other shards' runs by design: they are not removals.
    for shard in ["1/2", "2/2"] {
        let sharded = reloop(dir.path(), &["run", "suite", "--shard", shard, "--out", "shard", "--baseline", "base", "--allow-empty"]);
        assert!(!stdout(&sharded).contains("no_removed"), "{shard}: {}", stdout(&sharded));
    }
}

/// Issue 30: a missing `--baseline` was found after the whole suite had
/// run, and no `--markdown` file was written, so a workflow posting the
/// comment had nothing to post.
#[test]
fn the_baseline_and_gates_are_checked_before_the_first_run_and_the_comment_says_why() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    let missing = reloop(dir.path(), &["run", "suite", "--out", "new", "--baseline", "nowhere", "--markdown", "pr.md"]);
    assert_eq!(missing.status.code(), Some(2), "{}", stdout(&missing));
    assert!(stderr(&missing).contains("nowhere"), "{}", stderr(&missing));
    assert!(!dir.path().join("new").exists(), "nothing ran");
    let comment = std::fs::read_to_string(dir.path().join("pr.md")).unwrap();
    assert!(comment.starts_with("### reloop ⚠️ no verdict") && comment.contains("nowhere"), "{comment}");
    run_into(dir.path(), "base");
    write(dir.path(), "typo.yaml", "input_tokens: { max_increase: 5% }\n");
    let typo = reloop(dir.path(), &["run", "suite", "--out", "new", "--baseline", "base", "--gates", "typo.yaml"]);
    assert_eq!(typo.status.code(), Some(2), "{}", stdout(&typo));
    assert!(stderr(&typo).contains("typo.yaml:1: field `input_tokens`: no such column"), "{}", stderr(&typo));
    assert!(!dir.path().join("new").exists(), "nothing ran");
    let compared = reloop(dir.path(), &["compare", "base", "gone", "--markdown", "compare.md"]);
    assert_eq!(compared.status.code(), Some(2));
    let comment = std::fs::read_to_string(dir.path().join("compare.md")).unwrap();
    assert!(comment.contains("no verdict") && comment.contains("gone"), "{comment}");
}

/// Issue 30: the PR comment's runs list and stdout's `changed:` lines
/// followed completion order, so they differed between `--jobs` settings;
/// JUnit's gate messages said only "gate failed".
#[test]
fn the_comment_and_junit_are_the_same_at_any_jobs_setting() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["s1", "s2", "s3", "s4", "s5", "s6"];
    for name in names {
        scenario(dir.path(), "suite", name, 1);
    }
    run_into(dir.path(), "base");
    for (i, name) in names.iter().enumerate() {
        scenario(dir.path(), "suite", name, 1 + i % 3);
    }
    let mut seen = Vec::new();
    for jobs in ["1", "4"] {
        let output = reloop(dir.path(), &["run", "suite", "--out", "new", "--jobs", jobs, "--baseline", "base", "--markdown", "pr.md", "--junit", "junit.xml"]);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let changed: Vec<String> = stdout(&output).lines().filter(|l| l.starts_with("changed:") || l.starts_with("gate failed:")).map(str::to_owned).collect();
        let markdown = std::fs::read_to_string(dir.path().join("pr.md")).unwrap();
        let junit = timeless(&std::fs::read_to_string(dir.path().join("junit.xml")).unwrap());
        seen.push((changed, markdown, junit));
    }
    assert_eq!(seen[0], seen[1], "--jobs 1 and --jobs 4 write the same verdict");
    let (changed, markdown, junit) = &seen[0];
    let listed: Vec<&str> = changed.iter().filter_map(|l| l.strip_prefix("changed: `")).map(|l| &l[..2]).collect();
    assert_eq!(listed, ["s2", "s3", "s5", "s6"], "sorted by scenario");
    assert!(markdown.contains("| % | offenders |"), "{markdown}");
    assert!(junit.contains("<failure message=\"input_tokens_total +"), "{junit}");
    assert!(junit.contains("<property name=\"virtual_seconds\""), "{junit}");
}

/// The `yaml` blocks of a Markdown file that are gate files.
fn gate_blocks(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(crate::util::repo().join(file)).unwrap();
    let mut blocks = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("```yaml\n") {
        rest = &rest[start + 8..];
        let end = rest.find("```").expect("a closed block");
        blocks.push(rest[..end].to_owned());
        rest = &rest[end + 3..];
    }
    // A gate file's every line is `column: { rule }` (a comment may follow).
    let rule_line = |line: &str| {
        line.split_once(": {")
            .is_some_and(|(column, rule)| column.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') && rule.contains('}'))
    };
    blocks.into_iter().filter(|block| block.lines().all(rule_line)).collect()
}

/// Issue 30: the docs' own `only: "long-*"` matched nothing. Every gate
/// example of docs/gates.md (all its blocks), docs/metrics.md, docs/cli.md
/// and the README is validated and judged against a real report of a suite
/// with long scenarios, run as `./scenarios/`; `only:` examples judge
/// runs; the documented default gates are the ones `compare` uses.
#[test]
fn the_gate_examples_in_the_docs_are_judged() {
    let dir = tempfile::tempdir().unwrap();
    scenario(dir.path(), "scenarios/long", "long-a", 1);
    scenario(dir.path(), "scenarios", "short", 1);
    let run = reloop(dir.path(), &["run", "./scenarios/", "--out", "report"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let all_blocks = std::fs::read_to_string(crate::util::repo().join("docs/gates.md")).unwrap().matches("```yaml\n").count();
    let gates_page = gate_blocks("docs/gates.md");
    assert_eq!(gates_page.len(), all_blocks, "every yaml block of docs/gates.md is a gate file");
    let mut judged = 0;
    for (file, blocks) in ["docs/gates.md", "docs/metrics.md", "docs/cli.md", "README.md"].map(|file| (file, gate_blocks(file))) {
        for (index, block) in blocks.iter().enumerate() {
            let name = format!("example-{judged}-gates.yaml");
            write(dir.path(), &name, block);
            let validated = reloop(dir.path(), &["validate", &name]);
            assert_eq!(validated.status.code(), Some(0), "{file} block {index}: {}", stderr(&validated));
            let compared = reloop(dir.path(), &["compare", "report", "report", "--gates", &name, "--format", "json"]);
            assert_eq!(compared.status.code(), Some(0), "{file} block {index}:\n{block}\n{}{}", stdout(&compared), stderr(&compared));
            let gates = json(&compared)["gates"].as_array().unwrap().clone();
            assert!(!gates.iter().any(|g| g["check"].as_str().unwrap().contains("judged no run")), "{file} block {index} judged nothing");
            judged += 1;
        }
    }
    let defaults: reloop_report::gates::GateSet = serde_saphyr::from_str(reloop_report::gates::DEFAULT_GATES).unwrap();
    for file in ["docs/gates.md", "docs/metrics.md", "docs/cli.md"] {
        let documented = gate_blocks(file).into_iter().filter(|block| block.starts_with("passed: { no_regressions: true }\n")).collect::<Vec<_>>();
        assert_eq!(documented.len(), 1, "{file} shows the default gates once");
        let documented: reloop_report::gates::GateSet = serde_saphyr::from_str(&documented[0]).unwrap();
        assert_eq!(documented, defaults, "{file}'s default gates are compare's");
    }
}
