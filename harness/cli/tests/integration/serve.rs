//! `reloop serve` answers an outside HTTP client with SSE.

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::util::{Serve, write};

#[test]
fn serve_streams_a_recorded_turn_to_a_raw_http_client() {
    let dir = tempfile::tempdir().unwrap();
    let recording = write(dir.path(), "r.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Hello from the recording.\n");
    let mut server = Serve::start(&recording);
    let base = server
        .stdout
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| line.trim().strip_prefix("OpenAI base URL:").and_then(|u| u.split_whitespace().next()).map(str::to_owned))
        .expect("serve prints its base URL");
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
