//! `reloop run --upstream` (`docs/rerecord.md`) against local upstreams: a
//! second `reloop serve` holding the new answers, or a stub that keeps what
//! it was sent. `--record-mode new` re-records from the first divergence
//! and the re-recording replays; `--fork-at` goes live after the steps it
//! names, marked so in the report; no key reaches a file written.

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;

use crate::tables::{Row, read_rows};
use crate::util::{Serve, read_request, reloop_env, repo, stderr, texts, write};

/// Step `n`'s exchange: a text and one `probe` call; the 7th of the old
/// recording expects the tool's old output, which the loop no longer gets.
fn probe_exchange(n: usize, era: &str) -> String {
    let expect = if n == 7 && era == "old" { "  - expect: { tool_result_contains: [\"probe v1\"] }\n    text: " } else { "  - text: " };
    format!("{expect}\"Step {n} ({era}).\"\n    tool_calls: [ {{ name: probe, arguments: {{ n: {n} }} }} ]\n")
}

/// A recording of `steps` with a final answer.
fn recording(steps: std::ops::Range<usize>, era: &str) -> String {
    let exchanges: String = steps.map(|n| probe_exchange(n, era)).collect();
    format!("format: reloop.recording/v1\nexchanges:\n{exchanges}  - text: \"Done ({era}).\"\n")
}

/// The scenario: 19 probes and an answer, 20 steps; the probe now answers `probe v2 #N`.
fn scenario(recording: &str) -> String {
    let results: String = (1..20).map(|n| format!("      - {{ when: {{ n: {n} }}, output: \"probe v2 #{n}\" }}\n")).collect();
    format!(
        "name: drift\nmodel: gpt-4o\nsystem: You probe.\ntask: Probe twenty times.\nrecording: {recording}\nloop:\n  step_budget: 30\n\
         tools:\n  probe:\n    description: Probe.\n    parameters: {{ type: object, properties: {{ n: {{ type: integer }} }} }}\n    results:\n{results}\
         expect:\n  outcome: final_answer\n  final_answer_contains: [\"Done\"]\n"
    )
}

/// `(step, live)` of every step row, steps counted from 1 (the column
/// counts from 0).
fn live_by_step(steps: &[Row]) -> Vec<(u64, bool)> {
    let mut rows: Vec<(u64, bool)> = steps.iter().map(|row| (row["step"].parse::<u64>().unwrap() + 1, row["live"] == "true")).collect();
    rows.sort_unstable();
    rows
}

#[test]
fn record_mode_new_rerecords_from_the_first_divergence_and_the_rerecording_replays() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "drift.recording.yaml", &recording(1..20, "old"));
    let upstream_recording = write(dir.path(), "upstream.yaml", &recording(7..20, "new"));
    write(dir.path(), "drift.yaml", &scenario("drift.recording.yaml"));
    let old_bytes = std::fs::read(&old).unwrap();

    let replayed = reloop_env(dir.path(), &["run", "drift.yaml", "--out", "plain"], &[]);
    assert_eq!(replayed.status.code(), Some(1), "the premise: a plain replay diverges\n{}", stderr(&replayed));
    let runs = read_rows(&dir.path().join("plain/runs.parquet"));
    assert!(runs[0]["first_divergence"].starts_with("divergence at request 6 "), "{}", runs[0]["first_divergence"]);

    let upstream = Serve::start_with(&upstream_recording, &[], Stdio::null());
    let run = reloop_env(dir.path(), &["run", "drift.yaml", "--out", "new", "--upstream", &upstream.addr, "--record-mode", "new"], &[]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(stderr(&run).contains("not deterministic"), "{}", stderr(&run));
    assert_eq!(std::fs::read(&old).unwrap(), old_bytes, "the old recording stays intact");

    let rerecorded = dir.path().join("drift.rerecorded.yaml");
    let texts = texts(&rerecorded);
    let expected: Vec<String> =
        (1..7).map(|n| format!("Step {n} (old).")).chain((7..20).map(|n| format!("Step {n} (new).")).chain(["Done (new).".to_owned()])).collect();
    assert_eq!(texts, expected, "6 old exchanges, then the upstream's 14");
    assert_eq!(texts[6..], self::texts(&upstream_recording), "the rest is what the upstream served");

    let steps = live_by_step(&read_rows(&dir.path().join("new/steps.parquet")));
    assert_eq!(steps, (1..=20).map(|step| (step, step >= 7)).collect::<Vec<_>>());
    assert_eq!(read_rows(&dir.path().join("new/runs.parquet"))[0]["live_steps"], "14");

    let compared = reloop_env(dir.path(), &["compare", "plain", "new"], &[]);
    assert!(
        stderr(&compared).contains("not gated, as runs an upstream answered live are not deterministic (--gate-live judges them): drift"),
        "{}",
        stderr(&compared)
    );
    let gated = reloop_env(dir.path(), &["compare", "plain", "new", "--gate-live"], &[]);
    assert!(!stderr(&gated).contains("not gated") && crate::util::stdout(&gated).contains("drift"), "{}", crate::util::stdout(&gated));

    drop(upstream);
    write(dir.path(), "again.yaml", &scenario("drift.rerecorded.yaml").replace("name: drift", "name: again"));
    let again = reloop_env(dir.path(), &["run", "again.yaml", "--out", "again"], &[]);
    assert_eq!(again.status.code(), Some(0), "a plain replay of the re-recording passes\n{}", stderr(&again));
    assert_eq!(read_rows(&dir.path().join("again/runs.parquet"))[0]["live_steps"], "0");
}

/// Each wire goes to its upstream's own path, whether `--upstream` is the
/// bare host or a base URL as the SDKs write it, ending in the API version
/// (`OPENAI_BASE_URL=…/v1`; issue 43: `/v1/v1/…` was a 404).
#[test]
fn record_mode_new_speaks_every_wire_to_its_upstream() {
    for (wire, version) in [("openai-chat", "/v1"), ("openai-responses", "/v1/"), ("anthropic", ""), ("gemini", "/v1beta")] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "drift.recording.yaml", &recording(1..20, "old"));
        let upstream = Serve::start_with(&write(dir.path(), "upstream.yaml", &recording(7..20, "new")), &[], Stdio::null());
        write(dir.path(), "drift.yaml", &scenario("drift.recording.yaml").replace("model: gpt-4o\n", &format!("model: gpt-4o\nwire: {wire}\n")));
        let base = format!("{}{version}", upstream.addr);
        let run = reloop_env(dir.path(), &["run", "drift.yaml", "--out", "new", "--upstream", &base, "--record-mode", "new"], &[]);
        assert_eq!(run.status.code(), Some(0), "{wire}: {}{}", stderr(&run), String::from_utf8_lossy(&run.stdout));
        let texts = texts(&dir.path().join("drift.rerecorded.yaml"));
        assert_eq!((texts.len(), texts[5].as_str(), texts[6].as_str(), texts[19].as_str()), (20, "Step 6 (old).", "Step 7 (new).", "Done (new)."), "{wire}");
        let steps = live_by_step(&read_rows(&dir.path().join("new/steps.parquet")));
        assert_eq!(steps, (1..=20).map(|step| (step, step >= 7)).collect::<Vec<_>>(), "{wire}");
    }
}

#[test]
fn fork_at_10_under_masking_replays_ten_steps_of_a_long_scenario_then_goes_live() {
    let dir = tempfile::tempdir().unwrap();
    let answers = "format: reloop.recording/v1\nexchanges:\n  - text: Checking the manifest again.\n    tool_calls: [ { name: read_file, arguments: { path: Cargo.toml } } ]\n  - text: Forked here; the rest is live.\n";
    let upstream = Serve::start_with(&write(dir.path(), "answers.yaml", answers), &[], Stdio::null());
    let scenario = repo().join("scenarios/long/refactor-log-to-tracing.yaml");
    let rerecorded = dir.path().join("forked.yaml");
    let out = dir.path().join("out");
    let args = ["sweep", scenario.to_str().unwrap(), "--strategies", "masking", "--out", out.to_str().unwrap(), "--upstream", &upstream.addr];
    let run = reloop_env(dir.path(), &[&args[..], &["--fork-at", "10", "--rerecord-to", rerecorded.to_str().unwrap()]].concat(), &[]);
    assert!(run.status.code().is_some_and(|code| code <= 1), "{}", stderr(&run));

    let steps = read_rows(&out.join("steps.parquet"));
    assert!(steps.iter().all(|row| row["variant"] == "masking"));
    let live = live_by_step(&steps);
    assert_eq!(live, (1..=12).map(|step| (step, step > 10)).collect::<Vec<_>>(), "steps 1 to 10 replayed, 11 and 12 live");
    let runs = read_rows(&out.join("runs.parquet"));
    assert_eq!((runs[0]["live_steps"].as_str(), runs[0]["outcome"].as_str()), ("2", "final_answer"));
    let texts = texts(&rerecorded);
    assert_eq!(texts.len(), 12);
    assert_eq!(texts[10..], ["Checking the manifest again.", "Forked here; the rest is live."]);
}

/// Secrets planted in the environment's key and in the upstream's answer.
const PLANTED_KEY: &str = "sk-planted-key-5151";
const PLANTED_COOKIE: &str = "planted-cookie-6262";
const PLANTED_ORG: &str = "org-planted-7373";
const PLANTED_BODY: &str = "sk-live-8484";

/// A streamed text turn carrying [`PLANTED_BODY`], with credential headers.
fn planted_answer() -> String {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let body = chunk(&format!("{{\"role\":\"assistant\",\"content\":\"The answer is 42 ({PLANTED_BODY}).\"}}"), "null")
        + &chunk("{}", "\"stop\"")
        + "data: [DONE]\n\n";
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nset-cookie: s={PLANTED_COOKIE}\r\nopenai-organization: {PLANTED_ORG}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A 401 whose error quotes the key it was sent, as some providers' do.
fn refusal_quoting_the_key() -> String {
    let body =
        format!("{{\"error\":{{\"message\":\"Incorrect API key provided: {PLANTED_KEY}.\",\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}}}");
    format!(
        "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nset-cookie: s={PLANTED_COOKIE}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A stub OpenAI upstream on loopback: answers each request with
/// `answer` (a whole HTTP response) until `requests` came or a minute
/// passed; what it was sent is handed back when the thread is joined.
fn stub_upstream(answer: fn() -> String, requests: usize) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let thread = std::thread::spawn(move || {
        let mut seen = Vec::new();
        listener.set_nonblocking(true).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < deadline && seen.len() < requests {
            let Ok((mut socket, _)) = listener.accept() else {
                std::thread::sleep(std::time::Duration::from_millis(20));
                continue;
            };
            socket.set_nonblocking(false).unwrap();
            seen.push(read_request(&mut socket));
            socket.write_all(answer().as_bytes()).unwrap();
        }
        seen
    });
    (addr, thread)
}

/// Every file below `dir`, as bytes, with its path.
pub fn every_file(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|entry| {
            let path = entry.unwrap().path();
            if path.is_dir() { every_file(&path) } else { vec![(path.clone(), std::fs::read(&path).unwrap())] }
        })
        .collect()
}

#[test]
fn a_planted_key_goes_to_the_upstream_and_into_no_file_written() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", crate::util::ONE_TEXT_RECORDING);
    write(dir.path(), "scenario.yaml", crate::util::MINIMAL_SCENARIO);
    let (addr, stub) = stub_upstream(planted_answer, 1);
    let args = ["run", "scenario.yaml", "--out", "out", "--upstream", &addr, "--record-mode", "all", "--redact-body", "sk-live-[0-9]+"];
    let run = reloop_env(dir.path(), &args, &[("OPENAI_API_KEY", PLANTED_KEY)]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let seen = stub.join().unwrap();
    let request = seen[0].to_ascii_lowercase();
    assert!(request.contains(&format!("authorization: bearer {PLANTED_KEY}")), "the environment's key is sent: {request}");
    assert!(!request.contains("sk-reloop-replay"), "the loop's own key is not sent on: {request}");

    let rerecorded = std::fs::read_to_string(dir.path().join("recording.rerecorded.yaml")).unwrap();
    assert!(rerecorded.contains("The answer is 42 ([REDACTED])."), "{rerecorded}");
    assert_no_secret_in_files(dir.path());
}

/// No planted secret in any file below `dir`, nor in a cell of its report `out`.
fn assert_no_secret_in_files(dir: &Path) {
    let files = every_file(dir);
    assert!(files.iter().any(|(path, _)| path.ends_with("out/steps.parquet")));
    for (path, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        for secret in [PLANTED_KEY, PLANTED_COOKIE, PLANTED_ORG, PLANTED_BODY] {
            assert!(!text.contains(secret), "{secret} reached {}", path.display());
        }
    }
    for table in ["runs", "steps", "events"] {
        let cells: String = read_rows(&dir.join(format!("out/{table}.parquet"))).iter().flat_map(|row| row.values().cloned()).collect();
        assert!(!cells.contains(PLANTED_KEY) && !cells.contains(PLANTED_BODY), "{table}.parquet");
    }
}

/// Regression: an upstream's error quoting the key it was sent reached the
/// loop as it was, and through the loop's error the report.
#[test]
fn an_upstream_error_quoting_the_key_reaches_no_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", crate::util::ONE_TEXT_RECORDING);
    write(dir.path(), "scenario.yaml", crate::util::MINIMAL_SCENARIO);
    let (addr, stub) = stub_upstream(refusal_quoting_the_key, 1);
    let args = ["run", "scenario.yaml", "--out", "out", "--upstream", &addr, "--record-mode", "all"];
    let run = reloop_env(dir.path(), &args, &[("OPENAI_API_KEY", PLANTED_KEY)]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stub.join().unwrap()[0].contains(PLANTED_KEY));
    let runs = read_rows(&dir.path().join("out/runs.parquet"));
    assert!(runs[0]["error"].contains("Incorrect API key provided: [REDACTED]"), "{:?}", runs[0]["error"]);
    assert!(!stderr(&run).contains(PLANTED_KEY));
    assert_no_secret_in_files(dir.path());
}
