//! `reloop serve` driven by the official Python SDKs.

use std::path::Path;

use crate::prerequisite::{OPENAI_AND_ANTHROPIC, Test};
use crate::util::Serve;

pub fn tests() -> Vec<Test> {
    vec![crate::test!(OPENAI_AND_ANTHROPIC, serve_with_a_scenarios_faults_makes_the_official_sdks_raise_typed_errors_and_retry)]
}

/// `reloop serve --scenario`: the scenario's faults, afresh per session,
/// raised by the official Python SDKs as their typed errors, and retried
/// by them when allowed, each attempt one line of the log.
fn serve_with_a_scenarios_faults_makes_the_official_sdks_raise_typed_errors_and_retry(python: &Path) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/serve-faults");
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("serve.log");
    let log = std::process::Stdio::from(std::fs::File::create(&log_path).unwrap());
    let server = Serve::start_with_flags(&["--scenario", data.join("faults.yaml").to_str().unwrap()], log);
    let output = std::process::Command::new(python).arg(data.join("typed_errors.py")).arg(&server.addr).output().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{printed}{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        printed.lines().collect::<Vec<_>>(),
        [
            "raised RateLimitError rate_limit_exceeded",
            "answered First answer.",
            "raised OverloadedError ",
            "answered Second answer.",
            "raised BadRequestError context_length_exceeded",
            "answered Third answer.",
            "retried First answer. Second answer.",
        ]
    );
    drop(server);
    let log = std::fs::read_to_string(log_path).unwrap();
    let retrying: Vec<&str> = log.lines().filter(|l| l.starts_with("[retrying]")).map(|l| l.split(" in=").next().unwrap()).collect();
    assert_eq!(
        retrying,
        [
            "[retrying] #0 openai-chat 429 exchange 0 fault:http",
            "[retrying] #1 openai-chat 200 exchange 0 ok",
            "[retrying] #2 anthropic 529 exchange 1 fault:http",
            "[retrying] #3 anthropic 200 exchange 1 ok",
        ]
    );
}
