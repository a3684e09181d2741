//! `reloop serve` answers an outside HTTP client with SSE.

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, Serve, post, reloop, stderr, write};

#[test]
fn serve_streams_a_recorded_turn_to_a_raw_http_client() {
    let dir = tempfile::tempdir().unwrap();
    let recording = write(dir.path(), "r.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Hello from the recording.\n");
    let mut server = Serve::start(&recording);
    let base = server
        .stdout
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| line.trim().strip_prefix("r ").map(|url| url.trim().to_owned()))
        .expect("serve prints session `r` with its base URL");
    let base = base.strip_suffix("/s/r/v1").map(|root| format!("{root}/v1")).expect("the session's OpenAI base URL");
    let authority = base.strip_prefix("http://").and_then(|rest| rest.strip_suffix("/v1")).unwrap();
    assert!(authority.starts_with("127.0.0.1:"), "binds loopback only: {authority}");
    assert_eq!(server.addr, format!("http://{authority}"));

    let body = r#"{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}"#;
    let mut stream = TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer sk-test\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    assert!(response.to_ascii_lowercase().contains("content-type: text/event-stream"), "{response}");
    let headers = response.to_ascii_lowercase();
    assert!(headers.contains("x-request-id: req_reloop_default_00000"), "the OpenAI SDKs' request id: {response}");
    assert!(headers.contains("\r\nrequest-id: req_reloop_default_00000"), "the Anthropic SDK's request id: {response}");
    let text: String = response
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "Hello from the recording.");
    assert!(response.contains("data: [DONE]"), "{response}");
    assert!(response.contains("\"usage\":{\"prompt_tokens\":"), "{response}");
}

mod sessions_and_log {
    //! Issue 12 §4: whole-segment session names, auxiliary requests, the log.

    use std::process::Stdio;

    use crate::serve_limits::{exchange, request};
    use crate::util::{Serve, write};

    const TOOL: &str = r#"[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]"#;

    fn chat(tools: &str, content: &str) -> String {
        format!(r#"{{"model":"gpt-4.1","messages":[{{"role":"user","content":"{content}"}}],"tools":{tools}}}"#)
    }

    /// `serve` on a dotted recording whose first turn calls a tool, logging to a file.
    fn serve(dir: &std::path::Path) -> (Serve, std::path::PathBuf) {
        let recordings = dir.join("recordings");
        write(&recordings, "gpt-4.1-answer.yaml", "format: reloop.recording/v1\nexchanges:\n  - tool_calls: [{ name: read_file, arguments: { path: a } }]\n");
        write(&recordings, "other.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Other.\n");
        let log_path = dir.join("serve.log");
        let server = Serve::start_with(&recordings, &[], Stdio::from(std::fs::File::create(&log_path).unwrap()));
        (server, log_path)
    }

    fn tool_call_name(body: &str) -> Option<String> {
        let json: serde_json::Value = serde_json::from_str(body).ok()?;
        json["choices"][0]["message"]["tool_calls"][0]["function"]["name"].as_str().map(str::to_owned)
    }

    #[test]
    fn dotted_recording_names_are_served_whole_and_each_run_path_is_a_fresh_replay() {
        let dir = tempfile::tempdir().unwrap();
        let (server, _) = serve(dir.path());
        for path in ["/s/gpt-4.1-answer/v1/chat/completions", "/s/gpt-4.1-answer/r/1/v1/chat/completions", "/s/gpt-4.1-answer/r/2.b/v1/chat/completions"] {
            let (status, _, body) = exchange(&server.addr, &request("POST", path, "", &chat(TOOL, "go")));
            assert_eq!((status, tool_call_name(&body).as_deref()), (200, Some("read_file")), "{path}: {body}");
        }
    }

    #[test]
    fn a_request_without_tools_never_gets_a_tool_call_nor_consumes_one() {
        let dir = tempfile::tempdir().unwrap();
        let (server, log) = serve(dir.path());
        let path = "/s/gpt-4.1-answer/r/title/v1/chat/completions";
        let (status, _, title) = exchange(&server.addr, &request("POST", path, "", &chat("[]", "Write a title for this chat")));
        assert_eq!(status, 200, "{title}");
        let title: serde_json::Value = serde_json::from_str(&title).unwrap();
        assert_eq!(title["choices"][0]["message"]["content"], "reloop replay");
        assert!(title["choices"][0]["message"]["tool_calls"].is_null(), "{title}");
        let (_, _, main) = exchange(&server.addr, &request("POST", path, "", &chat(TOOL, "go")));
        assert_eq!(tool_call_name(&main).as_deref(), Some("read_file"), "the recorded call waited for the main request: {main}");
        drop(server);
        let log = std::fs::read_to_string(log).unwrap();
        assert!(log.contains("[gpt-4.1-answer/r/title] #0 openai-chat 200 exchange - auxiliary"), "{log}");
    }

    fn content(body: &str) -> String {
        let json: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        json["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_owned()
    }

    #[test]
    fn the_auxiliary_list_answers_title_requests_by_pattern_without_consuming_a_text_exchange_and_log_json_has_every_request() {
        let dir = tempfile::tempdir().unwrap();
        let recordings = dir.path().join("recordings");
        let recording = "format: reloop.recording/v1\nexchanges:\n  - text: The answer.\nauxiliary:\n  - { when: title generator, text: Port lookup }\n  - { text: First summary }\n";
        write(&recordings, "titled.yaml", recording);
        let logs = dir.path().join("logs");
        let server = Serve::start_with(&recordings, &["--log-json", logs.to_str().unwrap()], Stdio::null());
        let path = "/s/titled/r/1/v1/chat/completions";
        let title = r#"{"model":"gpt-4.1","messages":[{"role":"system","content":"You are a title generator."},{"role":"user","content":"go"}]}"#;
        let answers: Vec<String> = [title, title, &chat(TOOL, "go"), &chat(TOOL, "go"), &chat("[]", "summarize")]
            .iter()
            .map(|body| content(&exchange(&server.addr, &request("POST", path, "", body)).2))
            .collect();
        // The title twice by its pattern (the next turn is text, yet it waits;
        // an auxiliary request is answered anew, not as a retry), the main
        // turn and its retry, then a tool-less request facing an
        // exhausted recording: a divergence, as before.
        assert_eq!(answers, ["Port lookup", "Port lookup", "The answer.", "The answer.", ""]);
        drop(server);
        let log = std::fs::read_to_string(logs.join("titled%2Fr%2F1.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = log.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        let fields: Vec<(&str, serde_json::Value, bool, u64)> = lines
            .iter()
            .map(|l| (l["result"].as_str().unwrap(), l["exchange"].clone(), l["retry"].as_bool().unwrap(), l["status"].as_u64().unwrap()))
            .collect();
        use serde_json::Value::Null;
        assert_eq!(
            fields,
            [
                ("auxiliary", Null, false, 200),
                ("auxiliary", Null, false, 200),
                ("ok", serde_json::json!(0), false, 200),
                ("ok", serde_json::json!(0), true, 200),
                ("divergence", Null, false, 400)
            ]
        );
        assert!(lines.iter().all(|l| l["session"] == "titled/r/1" && l["input_tokens"].as_u64() > Some(0)), "{log}");
        assert!(lines[4]["divergence_reason"].as_str().unwrap().contains("recording_exhausted"), "{log}");
    }

    #[test]
    fn the_log_gives_divergence_reasons_404s_and_count_tokens_which_is_answered() {
        let dir = tempfile::tempdir().unwrap();
        let (server, log) = serve(dir.path());
        let (status, _, _) = exchange(&server.addr, &request("POST", "/s/other/v1/chat/completions", "", &chat("[]", "hi")));
        assert_eq!(status, 200);
        let (status, _, _) = exchange(&server.addr, &request("POST", "/s/other/v1/chat/completions", "", &chat("[]", "again")));
        assert_eq!(status, 400, "the one-turn recording is exhausted");
        let (status, _, _) = exchange(&server.addr, &request("POST", "/v2/nowhere", "", "{}"));
        assert_eq!(status, 404);
        let count = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"How many tokens is this?"}]}"#;
        let (status, _, body) = exchange(&server.addr, &request("POST", "/s/other/v1/messages/count_tokens", "anthropic-version: 2023-06-01\r\n", count));
        assert_eq!(status, 200, "{body}");
        let tokens = serde_json::from_str::<serde_json::Value>(&body).unwrap()["input_tokens"].as_u64().unwrap();
        assert!(tokens > 5, "{body}");
        drop(server);
        let log = std::fs::read_to_string(log).unwrap();
        let divergence = log.lines().find(|l| l.contains(" divergence ")).unwrap_or_else(|| panic!("{log}"));
        assert!(divergence.contains("in=") && divergence.contains("recording"), "a reason after the figures: {divergence}");
        assert!(log.contains("404 POST /v2/nowhere"), "{log}");
        assert!(log.contains(&format!("[other] count_tokens 200 in={tokens}")), "{log}");
    }
}

/// `serve` prints its address, one line on addressing, then one line per
/// session (the bundled recordings: 36, which made a banner of ~110 lines).
#[test]
fn serve_prints_one_line_per_session_and_only_its_address_when_quiet() {
    let recordings = crate::util::repo().join("recordings");
    let sessions = std::fs::read_dir(&recordings).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "yaml")).count();
    let mut server = Serve::start(&recordings);
    let lines: Vec<String> = server.stdout.by_ref().map_while(Result::ok).take(sessions + 1).collect();
    assert!(lines[0].starts_with("any API key;"), "{lines:?}");
    let session_lines: Vec<&String> = lines[1..].iter().collect();
    assert_eq!(session_lines.len(), sessions, "{lines:?}");
    let one_shot = session_lines.iter().find(|l| l.trim_start().starts_with("one-shot-answer ")).expect("one line for one-shot-answer");
    assert!(one_shot.trim_end().ends_with(&format!("{}/s/one-shot-answer/v1", server.addr)), "{one_shot}");
    drop(server);

    let mut quiet = Serve::start_with(&recordings, &["--quiet"], std::process::Stdio::null());
    // Served on the thread that prints: an answer means printing is over.
    let (head, _) = post(&quiet.addr, "/s/one-shot-answer/v1/chat/completions", "", r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#);
    assert!(head.contains(" 200 "), "{head}");
    let killed = std::process::Command::new("kill").args(["-KILL", &quiet.pid().to_string()]).status().unwrap();
    assert!(killed.success());
    let rest: Vec<String> = quiet.stdout.by_ref().map_while(Result::ok).collect();
    assert_eq!(rest, Vec::<String>::new(), "--quiet prints the address line only");
}

/// Several `--scenario` files: session `NAME` replays scenario `NAME`, each
/// with its own faults, `NAME/r/RUN` afresh; a name given twice is bad input.
#[test]
fn serve_with_several_scenarios_serves_each_by_name_with_its_faults() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    let plain = write(dir.path(), "plain.yaml", &format!("name: plain\n{MINIMAL_SCENARIO}"));
    let faulty = write(dir.path(), "faulty.yaml", &format!("name: faulty\n{MINIMAL_SCENARIO}faults:\n  - {{ exchange: 0, http: {{ status: 429 }} }}\n"));
    let server =
        Serve::start_with_flags(&["--quiet", "--scenario", plain.to_str().unwrap(), "--scenario", faulty.to_str().unwrap()], std::process::Stdio::null());
    let body = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;
    let status = |path: &str| post(&server.addr, path, "", body).0.lines().next().unwrap().to_owned();
    assert!(status("/s/plain/r/1/v1/chat/completions").contains(" 200 "));
    assert!(status("/s/faulty/r/1/v1/chat/completions").contains(" 429 "));
    assert!(status("/s/faulty/r/2/v1/chat/completions").contains(" 429 "), "each run meets the fault afresh");
    assert!(status("/s/other/v1/chat/completions").contains(" 404 "), "no scenario of that name");
    drop(server);

    let twice = reloop(dir.path(), &["serve", "--scenario", plain.to_str().unwrap(), "--scenario", plain.to_str().unwrap()]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(stderr(&twice).contains("scenario name `plain` is also"), "{}", stderr(&twice));
}
