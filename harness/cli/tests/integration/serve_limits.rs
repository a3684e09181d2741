//! `reloop serve` under hostile or heavy use: its own errors in the API's
//! JSON shape, half-open connections dropped, control characters escaped in
//! the log, sessions released (ended, idle, capped), and load checks.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use crate::util::{Serve, write};

const CHAT: &str = r#"{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;

/// One raw HTTP/1.1 exchange: the status line's code, the headers, the body.
pub fn exchange(addr: &str, request: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr.trim_start_matches("http://")).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let response = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// A raw HTTP/1.1 request with a JSON body, closing the connection after.
pub fn request(method: &str, path: &str, extra_headers: &str, body: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn recording(dir: &std::path::Path) -> std::path::PathBuf {
    write(dir, "r.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Hello.\n")
}

#[test]
fn every_error_the_server_raises_has_the_apis_json_shape() {
    let dir = tempfile::tempdir().unwrap();
    let server = Serve::start(&recording(dir.path()));
    let big_body = format!(r#"{{"model":"x","messages":[{{"role":"user","content":"{}"}}]}}"#, "a".repeat(3 * 1024 * 1024));
    let big_header = format!("X-Padding: {}\r\n", "a".repeat(40 * 1024));
    let anthropic = "anthropic-version: 2023-06-01\r\n";
    let cases = [
        ("404 openai", request("POST", "/v1/nothing/here", "", "{}"), 404, false),
        ("404 anthropic", request("POST", "/v1/nothing", anthropic, "{}"), 404, true),
        ("404 session", request("POST", "/s/nobody/v1/chat/completions", "", CHAT), 404, false),
        ("405 openai", request("GET", "/v1/chat/completions", "", ""), 405, false),
        ("405 anthropic", request("GET", "/v1/messages", anthropic, ""), 405, true),
        ("413 openai", request("POST", "/v1/chat/completions", "", &big_body), 413, false),
        ("413 anthropic", request("POST", "/v1/messages", anthropic, &big_body), 413, true),
        ("431 openai", request("POST", "/v1/chat/completions", &big_header, CHAT), 431, false),
        ("431 anthropic", request("POST", "/v1/messages", &format!("{anthropic}{big_header}"), CHAT), 431, true),
        ("400 openai", request("POST", "/v1/chat/completions", "", "{not json"), 400, false),
    ];
    for (name, request, status, is_anthropic) in cases {
        let (got, head, body) = exchange(&server.addr, &request);
        assert_eq!(got, status, "{name}: {head}\n{body}");
        assert!(head.contains("content-type: application/json"), "{name}: {head}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{name}: {e}: {body:?}"));
        if is_anthropic {
            assert_eq!(json["type"], "error", "{name}: {json}");
            assert!(json["error"]["type"].is_string() && json["error"]["message"].is_string(), "{name}: {json}");
        } else {
            assert!(json["error"]["message"].is_string() && json["error"]["type"].is_string(), "{name}: {json}");
            assert!(json.get("type").is_none(), "{name}: {json}");
        }
    }
}

#[test]
fn half_open_connections_are_dropped_after_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = Serve::start_with(&recording(dir.path()), &["--header-timeout-secs", "1"], Stdio::inherit());
    let addr = server.addr.trim_start_matches("http://").to_owned();
    let mut silent = TcpStream::connect(&addr).unwrap();
    let mut partial = TcpStream::connect(&addr).unwrap();
    partial.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n").unwrap();
    for stream in [&mut silent, &mut partial] {
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buffer = [0u8; 512];
        // EOF (or a reset) rather than our 20 s read timeout: the server hung up.
        match stream.read(&mut buffer) {
            Ok(n) => assert!(n == 0 || String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 408"), "{:?}", &buffer[..n]),
            Err(e) => assert!(!matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut), "still held: {e}"),
        }
    }
    // The server still answers.
    assert_eq!(exchange(&server.addr, &request("POST", "/v1/chat/completions", "", CHAT)).0, 200);
}

#[test]
fn control_characters_in_paths_are_escaped_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let server = Serve::start_with(&recording(dir.path()), &[], Stdio::from(log));
    let (status, _, _) = exchange(&server.addr, &request("POST", "/s/r.a%0Afake%1B[31m/v1/chat/completions", "", CHAT));
    assert_eq!(status, 200);
    drop(server);
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains(r"[r.a\nfake\x1b[31m]"), "{log:?}");
    assert!(!log.contains('\u{1b}') && log.lines().all(|line| !line.starts_with("fake")), "{log:?}");
}

#[test]
fn sessions_are_released_when_ended_or_idle_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--session-ttl-secs", "1", "--max-sessions", "2"];
    let server = Serve::start_with(&recording(dir.path()), &flags, Stdio::null());
    let chat = |session: &str, text: &str| {
        let body = CHAT.replace("\"hi\"", &format!("\"{text}\""));
        exchange(&server.addr, &request("POST", &format!("/s/{session}/v1/chat/completions"), "", &body)).0
    };
    assert_eq!(chat("r.a", "one"), 200);
    // A different request on the same session wants exchange 1: there is none.
    assert_eq!(chat("r.a", "two"), 400);
    // Ended: the name replays afresh.
    assert_eq!(exchange(&server.addr, &request("DELETE", "/s/r.a", "", "")).0, 204);
    assert_eq!(exchange(&server.addr, &request("DELETE", "/s/r.a", "", "")).0, 404);
    assert_eq!(chat("r.a", "three"), 200);
    // The cap: two live sessions.
    assert_eq!(chat("r.b", "one"), 200);
    let (status, head, body) = exchange(&server.addr, &request("POST", "/s/r.c/v1/chat/completions", "", CHAT));
    assert_eq!(status, 503, "{body}");
    assert!(head.contains("application/json") && body.contains("too many live sessions"), "{body}");
    // Idle past the TTL: released, so the cap has room and `r.a` starts over.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(chat("r.c", "one"), 200);
    assert_eq!(chat("r.a", "four"), 200);
}

/// Resident memory of `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The load check of issue 9: 256 concurrent streaming sessions × 3 rounds,
/// no errors, and resident memory after round 3 within 10 % of round 1.
#[test]
fn serve_load_256_sessions_three_rounds_memory_flat() {
    let dir = tempfile::tempdir().unwrap();
    let text = "word ".repeat(400);
    let recording = write(dir.path(), "r.yaml", &format!("format: reloop.recording/v1\nexchanges:\n  - text: \"{text}\"\n"));
    let server = Serve::start_with(&recording, &["--max-connections", "512"], Stdio::null());
    let mut rss = Vec::new();
    for round in 0..3 {
        let clients: Vec<_> = (0..256)
            .map(|i| {
                let addr = server.addr.clone();
                std::thread::spawn(move || {
                    let session = format!("r.round{round}-{i}");
                    let (status, _, body) = exchange(&addr, &request("POST", &format!("/s/{session}/v1/chat/completions"), "", CHAT));
                    let complete = status == 200 && body.contains("data: [DONE]");
                    let ended = exchange(&addr, &request("DELETE", &format!("/s/{session}"), "", "")).0 == 204;
                    complete && ended
                })
            })
            .collect();
        let errors = clients.into_iter().map(|c| c.join().unwrap()).filter(|ok| !ok).count();
        assert_eq!(errors, 0, "round {round}: {errors} of 256 sessions failed");
        rss.push(rss_kib(server.pid()));
    }
    eprintln!("serve RSS after each round (KiB): {rss:?}");
    assert!(rss[2] as f64 <= rss[0] as f64 * 1.10, "RSS grew more than 10 % from round 1 to 3: {rss:?}");
}

/// The text a streamed Chat answer carries: every `delta.content` joined.
fn streamed_text(sse: &[u8]) -> String {
    let text = String::from_utf8_lossy(sse);
    let chunks = text.lines().filter_map(|line| line.strip_prefix("data: ")).filter(|data| *data != "[DONE]");
    chunks.filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok()?["choices"][0]["delta"]["content"].as_str().map(str::to_owned)).collect()
}

/// Issue 44: 64 sessions at once, each 20 streamed turns with its growing
/// conversation (a parallel test suite's load), lose no session and mix
/// none: every turn of every session gets that turn's recorded answer.
#[test]
fn sixty_four_concurrent_twenty_turn_sessions_each_get_their_own_turns() {
    let dir = tempfile::tempdir().unwrap();
    let exchanges: String = (1..=20).map(|turn| format!("  - text: \"Turn {turn} of the session.\"\n")).collect();
    let recording = write(dir.path(), "load.yaml", &format!("format: reloop.recording/v1\nexchanges:\n{exchanges}"));
    let server = Serve::start_with(&recording, &[], Stdio::null());
    let sessions: Vec<_> = (0..64)
        .map(|i| {
            let addr = server.addr.clone();
            std::thread::spawn(move || {
                let mut messages = vec![serde_json::json!({ "role": "user", "content": format!("Session {i}.") })];
                let mut wrong = Vec::new();
                for turn in 1..=20 {
                    let body = serde_json::json!({ "model": "gpt-4o", "stream": true, "messages": messages }).to_string();
                    let (head, sse) = crate::util::post(&addr, &format!("/s/load/r/{i}/v1/chat/completions"), "", &body);
                    let text = streamed_text(&sse);
                    if !head.starts_with("HTTP/1.0 200") || text != format!("Turn {turn} of the session.") {
                        wrong.push(format!("session {i} turn {turn}: {} {text:?}", head.lines().next().unwrap_or_default()));
                    }
                    messages.push(serde_json::json!({ "role": "assistant", "content": text }));
                    messages.push(serde_json::json!({ "role": "user", "content": "Next." }));
                }
                wrong
            })
        })
        .collect();
    let wrong: Vec<String> = sessions.into_iter().flat_map(|session| session.join().unwrap()).collect();
    assert!(wrong.is_empty(), "{} of 1,280 turns lost or mixed, the first: {:?}", wrong.len(), wrong.first());
}

/// Regression: clients that sent their headers and then trickled the body
/// one byte a second held their connection slots for ever (header
/// slowloris was handled, body slowloris not). A thousand of them trickle
/// while a normal client is answered, then every one is dropped at the
/// body timeout, its slot freed.
#[test]
fn a_thousand_clients_trickling_bodies_are_dropped_at_the_body_timeout_while_others_are_answered() {
    const TRICKLERS: usize = 1000;
    let dir = tempfile::tempdir().unwrap();
    let server = Serve::start_with(&recording(dir.path()), &["--body-timeout-secs", "2"], Stdio::inherit());
    let addr = server.addr.trim_start_matches("http://").to_owned();
    let head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{";
    let tricklers: std::sync::Arc<Vec<TcpStream>> = std::sync::Arc::new(
        (0..TRICKLERS)
            .map(|_| {
                let mut stream = TcpStream::connect(&addr).unwrap();
                stream.write_all(head.as_bytes()).unwrap();
                stream
            })
            .collect(),
    );
    let started = std::time::Instant::now();
    let trickling = std::sync::Arc::clone(&tricklers);
    let trickle = std::thread::spawn(move || {
        // One byte a second each, for at most ten seconds.
        for _ in 0..10 {
            std::thread::sleep(Duration::from_secs(1));
            let alive = trickling.iter().filter(|stream| (&mut &**stream).write_all(b" ").is_ok()).count();
            if alive == 0 {
                break;
            }
        }
    });

    let asked = std::time::Instant::now();
    let (status, _, body) = exchange(&server.addr, &request("POST", "/v1/chat/completions", "", CHAT));
    let answered = asked.elapsed();
    eprintln!("a normal client was answered in {answered:?} while {TRICKLERS} clients trickled");
    assert_eq!(status, 200, "{body}");
    assert!(answered < Duration::from_secs(1), "{answered:?}");

    std::thread::sleep(Duration::from_secs(3).saturating_sub(started.elapsed()));
    let held = tricklers
        .iter()
        .filter(|stream| {
            let mut stream: &TcpStream = stream;
            stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut rest = Vec::new();
            // EOF (after the server's answer) or a reset: dropped; our own timeout: still held.
            matches!(stream.read_to_end(&mut rest), Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
        })
        .count();
    eprintln!("{} of {TRICKLERS} trickling clients dropped {:?} after they connected", TRICKLERS - held, started.elapsed());
    assert_eq!(held, 0, "trickling clients still held after the 2 s body timeout");
    trickle.join().unwrap();
    let (status, _, body) = exchange(&server.addr, &request("POST", "/v1/models", "", ""));
    assert_ne!(status, 0, "the server still answers: {body}");
}

/// Regression: Gemini routes answered `[]` and `{"model": 1}` with 200 and
/// used up the recorded turn. They get Google's 400; the turn stays.
#[test]
fn malformed_gemini_bodies_get_googles_400_and_leave_the_recorded_turn() {
    let dir = tempfile::tempdir().unwrap();
    let server = Serve::start_with(&recording(dir.path()), &[], Stdio::null());
    let path = "/v1beta/models/gemini-2.5-flash:generateContent";
    for body in ["[]", r#"{"model": 1}"#] {
        let (status, _, answer) = exchange(&server.addr, &request("POST", path, "", body));
        assert_eq!(status, 400, "{body}: {answer}");
        let error: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!((error["error"]["code"].as_u64(), error["error"]["status"].as_str()), (Some(400), Some("INVALID_ARGUMENT")), "{body}: {answer}");
    }
    let valid = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    let (status, _, answer) = exchange(&server.addr, &request("POST", path, "", valid));
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("Hello."), "the recorded turn is still there: {answer}");
}
