//! `reloop record` in front of a second `reloop serve` acting as the
//! provider: a streamed tool-calling session on each API passes through
//! unchanged, is recorded, and replays (neutral and raw) to the same bytes;
//! no credential reaches the file. `serve --capture`, then `run` on what it
//! captured, reproduces the session. Each run of a session is its own
//! recording, nothing of an earlier capture is overwritten without
//! `--force`, and Ctrl-C still records the exchange under way.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{Serve, post, reloop, stderr, stdout, write};

/// The provider's side: a tool call, then the answer.
const UPSTREAM: &str = r#"format: reloop.recording/v2
exchanges:
  - parts:
      - { type: text, text: "Let me check." }
      - { type: tool_call, id: call_w1, name: get_weather, arguments: { city: Paris } }
  - parts:
      - { type: text, text: "It will rain in Paris tomorrow." }
"#;

/// Planted secrets: in headers (always stripped) and in the body (stripped by `--redact-body`).
const AUTH_SECRET: &str = "sk-planted-1111";
const KEY_SECRET: &str = "sk-planted-2222";
const BODY_SECRET: &str = "sk-planted-3333";

/// The two requests of the session in `api`, and its path.
fn session(api: &str) -> (&'static str, [String; 2]) {
    let task = format!("Will it rain in Paris? (my key is {BODY_SECRET})");
    match api {
        "chat" => {
            let tools = r#"[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]"#;
            let first = format!(
                r#"{{"model":"gpt-4o","stream":true,"stream_options":{{"include_usage":true}},"messages":[{{"role":"system","content":"Be brief."}},{{"role":"user","content":"{task}"}}],"tools":{tools}}}"#
            );
            let call = r#"{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"call_w1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_w1","content":"rain"}"#;
            let second = first.replace(&format!(r#"{task}"}}]"#), &format!(r#"{task}"}},{call}]"#));
            ("/v1/chat/completions", [first, second])
        }
        "responses" => {
            let tools =
                r#"[{"type":"function","name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]"#;
            let first =
                format!(r#"{{"model":"gpt-5","stream":true,"instructions":"Be brief.","input":[{{"role":"user","content":"{task}"}}],"tools":{tools}}}"#);
            let call = r#"{"type":"function_call","call_id":"call_w1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},{"type":"function_call_output","call_id":"call_w1","output":"rain"}"#;
            let second = first.replace(&format!(r#"{task}"}}]"#), &format!(r#"{task}"}},{call}]"#));
            ("/v1/responses", [first, second])
        }
        _ => {
            let tools = r#"[{"name":"get_weather","description":"Weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]"#;
            let first = format!(
                r#"{{"model":"claude-sonnet-4-5","max_tokens":512,"stream":true,"system":"Be brief.","messages":[{{"role":"user","content":"{task}"}}],"tools":{tools}}}"#
            );
            let call = r#"{"role":"assistant","content":[{"type":"text","text":"Let me check."},{"type":"tool_use","id":"call_w1","name":"get_weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_w1","content":"rain"}]}"#;
            let second = first.replace(&format!(r#"{task}"}}]"#), &format!(r#"{task}"}},{call}]"#));
            ("/v1/messages", [first, second])
        }
    }
}

fn headers(api: &str) -> String {
    let version = if api == "anthropic" { "anthropic-version: 2023-06-01\r\n" } else { "" };
    format!("Authorization: Bearer {AUTH_SECRET}\r\nx-api-key: {KEY_SECRET}\r\nCookie: session={AUTH_SECRET}\r\n{version}")
}

/// The bodies of the session's two answers from `addr`, on session `name`.
fn run_session(addr: &str, name: &str, api: &str) -> Vec<Vec<u8>> {
    let (path, requests) = session(api);
    requests
        .iter()
        .map(|body| {
            let (head, answer) = post(addr, &format!("/s/{name}{path}"), &headers(api), body);
            assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{api}: {head}\n{}", String::from_utf8_lossy(&answer));
            answer
        })
        .collect()
}

/// Waits until `path` holds `exchanges` exchanges (files are rewritten as each completes).
fn wait_for(path: &Path, exchanges: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.matches("\n- parts:").count() >= exchanges || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `path` exists and holds text (the writer renames a complete
/// file into place, so any text there is the whole file).
fn wait_until_written(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match std::fs::read_to_string(path) {
            Ok(text) if !text.is_empty() => return text,
            _ if Instant::now() > deadline => panic!("{} was not written within 20 s", path.display()),
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[test]
fn record_passes_answers_through_and_replays_them_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Serve::start_with(&write(dir.path(), "upstream.yaml", UPSTREAM), &[], Stdio::null());
    for api in ["chat", "responses", "anthropic"] {
        let out = dir.path().join(format!("rec-{api}"));
        let args = ["record", "--upstream", &upstream.addr, "--out", out.to_str().unwrap(), "--port", "0", "--redact-body", "sk-planted-[0-9]+"];
        let proxy = Serve::spawn(&args, Stdio::null());
        let direct = run_session(&upstream.addr, &format!("upstream.direct-{api}"), api);
        let through = run_session(&proxy.addr, &format!("upstream.proxied-{api}"), api);
        assert_eq!(through, direct, "{api}: the proxy passes the answers through unchanged");

        let recording = out.with_extension("recording.yaml");
        let text = wait_for(&recording, 2);
        for secret in [AUTH_SECRET, KEY_SECRET, BODY_SECRET] {
            assert!(!text.contains(secret), "{api}: {secret} reached the file:\n{text}");
        }
        assert!(!text.to_ascii_lowercase().contains("bearer"), "{api}: an Authorization value reached the file");
        assert!(text.contains("header:authorization") && text.contains("header:x-api-key"), "{api}: the redaction is written into the file");
        assert!(text.contains("body:#1:") && !text.contains("sk-planted-[0-9]+"), "{api}: the body pattern is listed without its text:\n{text}");
        // The skeleton is written after the recording: wait for it too.
        let skeleton = wait_until_written(&out.with_extension("yaml"));
        assert!(skeleton.contains("get_weather") && skeleton.contains("system: Be brief."), "{api}: {skeleton}");

        for flags in [&[][..], &["--raw"][..]] {
            let replay = Serve::start_with(&recording, flags, Stdio::null());
            let name = recording.file_stem().unwrap().to_str().unwrap().to_owned();
            let replayed = run_session(&replay.addr, &format!("{name}.replay"), api);
            assert_eq!(replayed, direct, "{api} {flags:?}: the replay sends what the provider sent");
        }
    }
}

/// The provider's side: `sk-live1234` split over three deltas, in the text
/// and in the tool arguments.
const SPLIT_SECRET: &str = r#"format: reloop.recording/v2
exchanges:
  - parts:
      - { type: text, text: "my key is sk-live1234", chunks: [13, 4, 4] }
      - { type: tool_call, id: call_k1, name: save, arguments: '{"key": "sk-live1234"}', chunks: [12, 4, 6] }
"#;

#[test]
fn a_secret_split_across_deltas_never_reaches_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Serve::start_with(&write(dir.path(), "upstream.yaml", SPLIT_SECRET), &[], Stdio::null());
    for api in ["chat", "responses", "anthropic"] {
        let out = dir.path().join(format!("split-{api}"));
        let args = ["record", "--upstream", &upstream.addr, "--out", out.to_str().unwrap(), "--port", "0", "--redact-body", "sk-live[0-9]+"];
        let proxy = Serve::spawn(&args, Stdio::null());
        let (path, [request, _]) = session(api);
        let (head, answer) = post(&proxy.addr, &format!("/s/upstream.split-{api}{path}"), &headers(api), &request);
        assert!(head.contains(" 200"), "{api}: {head}");
        assert!(String::from_utf8_lossy(&answer).contains("sk-"), "{api}: the client gets the answer unchanged");
        let text = wait_for(&out.with_extension("recording.yaml"), 1);
        assert!(text.contains("[REDACTED]") && !text.contains("sk-live1234"), "{api}: the joined secret reached the file:\n{text}");
        assert!(
            text.contains("raw:exchange-1") && !text.contains("events:"),
            "{api}: the raw bytes, which hold the split secret, are dropped and noted:\n{text}"
        );
    }
}

#[test]
fn captured_sessions_run_again_without_edits() {
    let dir = tempfile::tempdir().unwrap();
    let captured = dir.path().join("captured");
    let upstream = write(dir.path(), "upstream.yaml", UPSTREAM);
    let flags = ["--recording", upstream.to_str().unwrap(), "--capture", captured.to_str().unwrap()];
    let server = Serve::start_with_flags(&flags, Stdio::null());
    run_session(&server.addr, "upstream.cap", "anthropic");
    let text = wait_for(&captured.join("upstream.cap.recording.yaml"), 2);
    assert!(!text.contains(AUTH_SECRET) && !text.contains(KEY_SECRET), "{text}");
    drop(server);

    let scenario = captured.join("upstream.cap.yaml");
    let output = reloop(dir.path(), &["run", scenario.to_str().unwrap(), "--out", dir.path().join("report").to_str().unwrap()]);
    let table = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{table}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(table.contains("upstream.cap") && !table.contains("divergence"), "{table}");
    let skeleton = std::fs::read_to_string(&scenario).unwrap();
    assert!(skeleton.contains("output: rain"), "the tool answers with the recorded result:\n{skeleton}");
    let runs = crate::tables::read_rows(&dir.path().join("report/runs.parquet"));
    assert_eq!(runs[0]["tool_errors"], "0", "the loop saw the recorded result, not a missing fixture");
}

/// The exchanges a recording file holds.
fn exchanges_in(text: &str) -> usize {
    text.matches("\n- parts:").count()
}

#[test]
fn each_run_of_a_captured_session_is_its_own_recording() {
    let dir = tempfile::tempdir().unwrap();
    let captured = dir.path().join("captured");
    let upstream = write(dir.path(), "upstream.yaml", UPSTREAM);
    let server = Serve::start_with_flags(&["--recording", upstream.to_str().unwrap(), "--capture", captured.to_str().unwrap()], Stdio::null());
    run_session(&server.addr, "upstream/r/1", "anthropic");
    run_session(&server.addr, "upstream/r/2", "anthropic");
    let second = wait_for(&captured.join("upstream%2Fr%2F2.recording.yaml"), 2);
    let first = std::fs::read_to_string(captured.join("upstream%2Fr%2F1.recording.yaml")).unwrap_or_default();
    assert_eq!((exchanges_in(&first), exchanges_in(&second)), (2, 2), "one 2-exchange recording per run:\n{first}\n---\n{second}");
    assert!(!captured.join("upstream.recording.yaml").exists(), "runs are not merged into the session's file");
    assert!(captured.join("upstream%2Fr%2F1.yaml").exists(), "each run has its skeleton");
}

/// Regression: capture file names were percent-encoded twice
/// (`a%2520b`), and session names `..` and `%2e%2e` were not refused. The
/// name is decoded once, in one place, for serving and capture alike.
#[test]
fn a_captured_session_name_is_encoded_once_and_dot_segments_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let captured = dir.path().join("captured");
    let upstream = write(dir.path(), "upstream.yaml", UPSTREAM);
    let server = Serve::start_with_flags(&["--recording", upstream.to_str().unwrap(), "--capture", captured.to_str().unwrap()], Stdio::null());
    run_session(&server.addr, "upstream.a%20b", "anthropic");
    let text = wait_for(&captured.join("upstream.a%20b.recording.yaml"), 2);
    assert_eq!(exchanges_in(&text), 2, "{text}");
    assert!(!captured.join("upstream.a%2520b.recording.yaml").exists(), "encoded twice");
    for name in ["..", "%2e%2e", "upstream/r/%2E%2E"] {
        let (head, answer) = post(&server.addr, &format!("/s/{name}/v1/chat/completions"), "", r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#);
        assert!(head.contains(" 400 "), "{name}: {head}\n{}", String::from_utf8_lossy(&answer));
        assert!(String::from_utf8_lossy(&answer).contains("dot segment"), "{name}");
    }
}

#[test]
fn record_refuses_to_overwrite_an_earlier_recording_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let earlier = write(dir.path(), "rec.recording.yaml", "an earlier recording");
    let out = dir.path().join("rec");
    let refused = reloop(dir.path(), &["record", "--upstream", "http://127.0.0.1:9", "--out", out.to_str().unwrap(), "--port", "0"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(earlier.to_str().unwrap()) && stderr(&refused).contains("--force"), "{}", stderr(&refused));
    assert_eq!(std::fs::read_to_string(&earlier).unwrap(), "an earlier recording");

    let upstream = Serve::start_with(&write(dir.path(), "upstream.yaml", UPSTREAM), &[], Stdio::null());
    let forced = Serve::spawn(&["record", "--upstream", &upstream.addr, "--out", out.to_str().unwrap(), "--port", "0", "--force"], Stdio::null());
    run_session(&forced.addr, "upstream.forced", "chat");
    assert_eq!(exchanges_in(&wait_for(&earlier, 2)), 2, "--force overwrites");
}

#[test]
fn capture_refuses_a_folder_with_an_earlier_capture_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = write(dir.path(), "upstream.yaml", UPSTREAM);
    let earlier = write(dir.path(), "captured/upstream.cap.recording.yaml", "an earlier capture");
    let captured = dir.path().join("captured");
    let flags = ["serve", "--port", "0", "--recording", upstream.to_str().unwrap(), "--capture", captured.to_str().unwrap()];
    let refused = reloop(dir.path(), &flags);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(earlier.to_str().unwrap()), "{}", stderr(&refused));

    let forced = Serve::spawn(&[&flags[..], &["--force"]].concat(), Stdio::null());
    run_session(&forced.addr, "upstream.cap", "anthropic");
    assert_eq!(exchanges_in(&wait_for(&earlier, 2)), 2, "--force overwrites");
}

#[test]
fn ctrl_c_still_records_the_exchange_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    // The answer's first byte comes a second after the request: Ctrl-C lands while it streams.
    let slow = write(dir.path(), "slow.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Slow but sure.\n    timing: { first_byte_ms: 1000 }\n");
    let upstream = Serve::start_with(&slow, &["--realtime"], Stdio::null());
    let out = dir.path().join("rec");
    let proxy = Serve::spawn(&["record", "--upstream", &upstream.addr, "--out", out.to_str().unwrap(), "--port", "0"], Stdio::null());
    let addr = proxy.addr.clone();
    let (path, requests) = session("chat");
    let client = std::thread::spawn(move || post(&addr, &format!("/s/slow{path}"), "", &requests[0]));
    std::thread::sleep(Duration::from_millis(300));
    let status = proxy.interrupt();
    let (head, answer) = client.join().unwrap();
    assert!(head.contains(" 200"), "the stream in flight completes: {head}");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.contains(r#""content":" sure."}"#) && answer.contains(r#""finish_reason":"stop""#), "the whole answer: {answer}");
    assert_eq!(status.code(), Some(130));
    let text = std::fs::read_to_string(out.with_extension("recording.yaml")).unwrap_or_default();
    assert_eq!(exchanges_in(&text), 1, "the exchange in flight at Ctrl-C is recorded:\n{text}");
}

/// Regression (issue 28): `serve` and `record` said "interrupt: finishing…"
/// on SIGTERM, SIGHUP and even Ctrl-C, and ran on until a second signal.
/// One of each now stops them within 3 s, exit 130, with what they hold
/// written.
#[test]
fn serve_and_record_stop_on_one_sigterm_sighup_or_ctrl_c_with_nothing_lost() {
    let dir = tempfile::tempdir().unwrap();
    let upstream_file = write(dir.path(), "upstream.yaml", UPSTREAM);
    for signal in ["TERM", "HUP", "INT"] {
        let serve = Serve::start_with(&upstream_file, &[], Stdio::null());
        assert_eq!(serve.signal(signal, Duration::from_secs(3)).code(), Some(130), "serve after SIG{signal}");

        let upstream = Serve::start_with(&upstream_file, &[], Stdio::null());
        let out = dir.path().join(format!("rec-{signal}"));
        let proxy = Serve::spawn(&["record", "--upstream", &upstream.addr, "--out", out.to_str().unwrap(), "--port", "0"], Stdio::null());
        run_session(&proxy.addr, "upstream", "chat");
        assert_eq!(proxy.signal(signal, Duration::from_secs(3)).code(), Some(130), "record after SIG{signal}");
        let text = std::fs::read_to_string(out.with_extension("recording.yaml")).unwrap_or_default();
        assert_eq!(exchanges_in(&text), 2, "record after SIG{signal} wrote the session:\n{text}");
    }
}
