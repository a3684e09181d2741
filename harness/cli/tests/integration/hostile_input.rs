//! Settings out of range, and inputs that are not files, exit 2 with the
//! file, line and field, and never panic, hang or eat memory (each case
//! panicked, hung or passed silently before the range checks).

use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, reloop, stderr, write};

/// Runs `MINIMAL_SCENARIO` plus `extra` (YAML appended at the top level)
/// and returns reloop's stderr after checking it exited 2.
fn refused(extra: &str, recording: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", recording);
    write(dir.path(), "s.yaml", &format!("{MINIMAL_SCENARIO}{extra}"));
    let output = reloop(dir.path(), &["run", "s.yaml", "--out", "out"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{extra}: {message}");
    message
}

#[test]
fn each_out_of_range_setting_names_its_line_and_field() {
    // (YAML appended after the 7 lines of MINIMAL_SCENARIO, the field, its line)
    let cases = [
        ("context_window: 0\n", "context_window", 8),
        ("loop:\n  step_budget: 0\n", "loop.step_budget", 9),
        ("loop:\n  max_output_tokens: 0\n", "loop.max_output_tokens", 9),
        ("loop:\n  summary_timeout_secs: 0\n", "loop.summary_timeout_secs", 9),
        ("loop:\n  stream_idle_timeout_secs: 100000000\n", "loop.stream_idle_timeout_secs", 9),
        ("loop:\n  doom_loop: { threshold: 0 }\n", "loop.doom_loop.threshold", 9),
        ("loop:\n  retry: { max_backoff_ms: 1000000000000 }\n", "loop.retry.max_backoff_ms", 9),
        ("loop:\n  retry: { initial_backoff_ms: 60000, max_backoff_ms: 1000 }\n", "loop.retry.initial_backoff_ms", 9),
        ("loop:\n  strategies:\n    roku: { high_water_ratio: 1.5 }\n", "loop.strategies.roku.high_water_ratio", 10),
        ("loop:\n  strategies:\n    roku: { mid_water_ratio: 0.9, high_water_ratio: 0.8 }\n", "loop.strategies.roku.mid_water_ratio", 10),
        ("loop:\n  strategies:\n    roku: { keep_recent_rounds: 0 }\n", "loop.strategies.roku.keep_recent_rounds", 10),
        ("loop:\n  strategies:\n    opencode: { prune_protect_tokens: 0 }\n", "loop.strategies.opencode.prune_protect_tokens", 10),
        ("loop:\n  strategies:\n    codex: { auto_compact_ratio: 2.0 }\n", "loop.strategies.codex.auto_compact_ratio", 10),
        ("loop:\n  strategies:\n    masking: { keep: 0 }\n", "loop.strategies.masking.keep", 10),
        ("faults:\n  - { exchange: 99, cut_after_events: 1 }\n", "faults[0].exchange", 9),
        ("faults:\n  - { exchange: 0, stall: { after_events: 1, seconds: 1e20 } }\n", "faults[0].stall.seconds", 9),
        ("faults:\n  - { exchange: 0, http: { status: 429, headers: { retry-after: inf } } }\n", "faults[0].http.headers.retry-after", 9),
        ("faults:\n  - { exchange: 0, http: { status: 429, headers: { retry-after: \"1e20\" } } }\n", "faults[0].http.headers.retry-after", 9),
        ("faults:\n  - { exchange: 0, times: 0, cut_after_events: 1 }\n", "faults[0].times", 9),
        ("interrupt: { during_tool_call: 0, after_ms: 100000000000 }\n", "interrupt.after_ms", 8),
    ];
    for (extra, field, line) in cases {
        let scenario = extra.replace("expect:", "");
        let message = refused(&scenario, ONE_TEXT_RECORDING);
        assert!(message.contains(&format!("s.yaml:{line}:")), "{field}: {message}");
        assert!(message.contains(&format!("field `{field}`")), "{field}: {message}");
        assert!(!message.contains("panicked"), "{field}: {message}");
    }
}

#[test]
fn recording_waits_are_bounded() {
    let recording = "format: reloop.recording/v1\nexchanges:\n  - text: hi\n    timing: { first_byte_ms: 100000000000 }\n";
    let message = refused("", recording);
    assert!(message.contains("recording.yaml:4:"), "{message}");
    assert!(message.contains("field `exchanges[0].timing.first_byte_ms`"), "{message}");
}

#[test]
fn a_device_or_fifo_as_recording_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.yaml");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for recording in ["/dev/zero", fifo.to_str().unwrap()] {
        write(dir.path(), "s.yaml", &MINIMAL_SCENARIO.replace("recording.yaml", recording));
        let output = reloop(dir.path(), &["run", "s.yaml"]);
        assert_eq!(output.status.code(), Some(2), "{recording}: {}", stderr(&output));
        assert!(stderr(&output).contains("is not a regular file"), "{recording}: {}", stderr(&output));
    }
}

#[test]
fn the_input_size_limit_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "s.yaml", MINIMAL_SCENARIO);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_reloop"))
        .current_dir(dir.path())
        .args(["run", "s.yaml"])
        .env("RELOOP_MAX_INPUT_BYTES", "64")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("larger than the input limit of 64 bytes"), "{}", stderr(&output));
}
