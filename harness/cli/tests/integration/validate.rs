//! `reloop validate`: the bundled files pass; each of 21 broken files exits
//! 2 with its file, line and field.

use crate::util::{reloop, repo, stderr, stdout, write};

const RECORDING: &str = "\
format: reloop.recording/v1
exchanges:
  - tool_calls: [{ name: ci_status, arguments: { run: 7 } }]
  - text: Still running.
";

/// (name, which file is broken, its text, where the error must point).
const BROKEN: [(&str, &str, &str, &str); 21] = [
    ("misspelt-field", "s.yaml", "modle: gpt-4o\nsystem: s\ntask: t\nrecording: recording.yaml\n", "s.yaml:1:1: field `modle`"),
    ("missing-task", "s.yaml", "model: gpt-4o\nsystem: s\nrecording: recording.yaml\n", "s.yaml:3:1: missing field `task`"),
    ("window-not-a-number", "s.yaml", "model: m\ncontext_window: lots\nsystem: s\ntask: t\nrecording: recording.yaml\n", "s.yaml:2:17: field `context_window`"),
    ("recording-missing", "s.yaml", "model: m\nsystem: s\ntask: t\nrecording: nowhere.yaml\n", "nowhere.yaml: cannot read"),
    (
        "output-and-error",
        "s.yaml",
        "model: m\nsystem: s\ntask: t\nrecording: recording.yaml\ntools:\n  ci_status:\n    description: d\n    results: [{ output: a, error: b }]\n",
        "s.yaml: field `tools.ci_status.results[0]`",
    ),
    (
        "no-results",
        "s.yaml",
        "model: m\nsystem: s\ntask: t\nrecording: recording.yaml\ntools:\n  ci_status: { description: d, results: [] }\n",
        "s.yaml: field `tools.ci_status.results`",
    ),
    (
        "zero-budget",
        "s.yaml",
        "model: m\nsystem: s\ntask: t\nrecording: recording.yaml\nloop: { step_budget: 0 }\ntools:\n  ci_status: { description: d, results: [{ output: o }] }\n",
        "s.yaml:5:22: field `loop.step_budget`: must be at least 1",
    ),
    (
        "fault-past-the-end",
        "s.yaml",
        "model: m\nsystem: s\ntask: t\nrecording: recording.yaml\ntools:\n  ci_status: { description: d, results: [{ output: o }] }\nfaults:\n  - { exchange: 0, http: { status: 429 } }\n  - { exchange: 5, http: { status: 500 } }\n",
        "s.yaml:9:17: field `faults[1].exchange`: is 5, but the recording has 2 exchanges",
    ),
    (
        "tool-without-fixture",
        "s.yaml",
        "model: m\nsystem: s\ntask: t\nrecording: recording.yaml\n",
        "recording.yaml:3:26: field `exchanges[0].tool_calls[0].name`: calls tool `ci_status`",
    ),
    ("unknown-wire", "s.yaml", "model: m\nwire: smoke-signals\nsystem: s\ntask: t\nrecording: recording.yaml\n", "s.yaml:2"),
    ("unclosed-flow", "s.yaml", "model: m\nsystem: s\ntask: t\nrecording: recording.yaml\ntools: [\n", "s.yaml:"),
    ("duplicate-key", "s.yaml", "model: m\nmodel: n\nsystem: s\ntask: t\nrecording: recording.yaml\n", "s.yaml:2"),
    ("unknown-outcome", "s.yaml", "model: m\nsystem: s\ntask: t\nrecording: recording.yaml\nexpect: { outcome: victory }\n", "s.yaml:5"),
    (
        "fault-with-no-effect",
        "s.yaml",
        "model: m\nsystem: s\ntask: t\nrecording: recording.yaml\ntools:\n  ci_status: { description: d, results: [{ output: o }] }\nfaults: [{ exchange: 0 }]\n",
        "s.yaml:7:10: field `faults[0]`: names no fault",
    ),
    ("recording-format-tag", "r.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: hi\n    txt: typo\n", "r.yaml:4:5: field `exchanges[0].txt`"),
    ("recording-purpose", "r.yaml", "format: reloop.recording/v1\nexchanges:\n  - { purpose: gossip, text: hi }\n", "r.yaml:3"),
    ("recording-call-without-name", "r.yaml", "format: reloop.recording/v1\nexchanges:\n  - tool_calls:\n      - arguments: {}\n", "r.yaml:4"),
    (
        "native-without-a-mechanism",
        "s.yaml",
        "model: m\nwire: [anthropic, gemini]\nsystem: s\ntask: t\nrecording: recording.yaml\nloop: { strategy: native }\ntools:\n  ci_status: { description: d, results: [{ output: o }] }\n",
        "s.yaml:6:19: field `loop.strategy`: is native, but wire `gemini` has no provider-side context management",
    ),
    ("gates-unknown-check", "gates.yaml", "passed: { no_regression: true }\n", "gates.yaml:1"),
    ("gates-bad-percent", "gates.yaml", "input_tokens_total: { max_increase: lots }\n", "gates.yaml:1"),
    ("gates-bad-per", "gates.yaml", "cache_breaks: { max: 1, per: everyone }\n", "gates.yaml:1"),
];

#[test]
fn the_bundled_scenarios_and_recordings_are_valid() {
    let output = reloop(&repo(), &["validate", "scenarios/", "recordings/", "docs/schema/"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).starts_with("ok: "), "{}", stdout(&output));
}

#[test]
fn each_broken_file_exits_2_with_its_location() {
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for (name, broken, text, location) in BROKEN {
        let case = dir.path().join(name);
        write(&case, "recording.yaml", RECORDING);
        write(&case, broken, text);
        let output = reloop(&case, &["validate", broken]);
        let message = stderr(&output);
        if output.status.code() != Some(2) || !message.contains(location) {
            wrong.push(format!("{name}: exit {:?}, wanted `{location}` in: {message}", output.status.code()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
