//! Limits that follow the scenario (issue 46): `run`'s own mock reads a
//! request as large as the scenario's window admits, and `serve`'s body
//! limit is a flag.

use std::process::Stdio;

use crate::serve_limits::{exchange, request};
use crate::tables::read_rows;
use crate::util::{Serve, reloop, stderr, write};

/// Regression: a scenario with a 1M-token window and one 2.3 MB tool
/// result failed with the mock's "Failed to buffer the request body:
/// length limit exceeded" (413): the cap was 2 MiB whatever the window.
#[test]
fn a_tool_result_of_2_3_mb_in_a_1m_token_window_reaches_the_mock_whole() {
    let dir = tempfile::tempdir().unwrap();
    let result = "lorem ipsum dolor sit amet ".repeat(2_300_000 / 27);
    assert!(result.len() > 2_290_000);
    write(
        dir.path(),
        "recording.yaml",
        "format: reloop.recording/v1\nexchanges:\n  - text: Reading.\n    tool_calls: [ { name: read, arguments: {} } ]\n  - text: The answer is 42.\n",
    );
    let scenario = format!(
        "model: gpt-4o\ncontext_window: 1000000\nsystem: You read.\ntask: Read it.\nrecording: recording.yaml\n\
         tools:\n  read:\n    description: Read.\n    parameters: {{ type: object }}\n    results:\n      - output: \"{result}\"\n\
         expect:\n  outcome: final_answer\n  final_answer_contains: [\"42\"]\n"
    );
    write(dir.path(), "scenario.yaml", &scenario);
    let run = reloop(dir.path(), &["run", "scenario.yaml", "--out", "out"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let runs = read_rows(&dir.path().join("out/runs.parquet"));
    assert_eq!(runs[0]["outcome"], "final_answer", "{:?}", runs[0]["error"]);
    let steps = read_rows(&dir.path().join("out/steps.parquet"));
    let largest = steps.iter().map(|row| row["input_tokens"].parse::<u64>().unwrap()).max().unwrap();
    assert!(largest > 400_000, "the tool result was sent whole: {largest} input tokens");
}

#[test]
fn serves_body_limit_is_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let recording = write(dir.path(), "r.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Hello.\n");
    let body = format!(r#"{{"model":"x","messages":[{{"role":"user","content":"{}"}}]}}"#, "a".repeat(3 * 1024 * 1024));
    let by_default = Serve::start_with(&recording, &[], Stdio::null());
    assert_eq!(exchange(&by_default.addr, &request("POST", "/v1/chat/completions", "", &body)).0, 413);
    let raised = Serve::start_with(&recording, &["--max-body-mib", "4"], Stdio::null());
    let (status, _, answer) = exchange(&raised.addr, &request("POST", "/v1/chat/completions", "", &body));
    assert_eq!(status, 200, "{answer}");
}
