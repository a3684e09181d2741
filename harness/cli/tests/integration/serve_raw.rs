//! Raw replay over real HTTP: a recorded Anthropic stream (a real capture,
//! read by `from_wire` and written by the one recording writer) goes back
//! byte for byte; a client of another API gets the same exchange rendered
//! from its parts.

use std::path::Path;

use reloop_recording::Recording;
use reloop_recording::from_wire::{WireResponse, exchange_from_wire};
use reloop_wire::Format;

use crate::util::{Serve, post, repo};

const CAPTURE: &str = "harness/wire/tests/data/anthropic-messages/anthropic-sdk-python-tool-use-response.sse";

/// Writes a recording of the capture, once, and returns its path.
fn recorded(dir: &Path) -> std::path::PathBuf {
    let body = std::fs::read(repo().join(CAPTURE)).unwrap();
    let headers = [("content-type".to_owned(), "text/event-stream; charset=utf-8".to_owned()), ("request-id".to_owned(), "req_recorded".to_owned())];
    let exchange = exchange_from_wire(Format::Anthropic, WireResponse { status: 200, headers: &headers, body: &body }, &body).unwrap();
    let recording: Recording = serde_json::from_value(serde_json::json!({ "format": "reloop.recording/v2", "exchanges": [] })).unwrap();
    let recording = Recording { exchanges: vec![exchange], ..recording };
    let path = dir.join("r.yaml");
    reloop_eval::recording_file::write_recording(&path, &recording).unwrap();
    path
}

#[test]
fn raw_replay_is_byte_identical_and_other_apis_get_the_parts() {
    let dir = tempfile::tempdir().unwrap();
    let recording = recorded(dir.path());
    let written = std::fs::read_to_string(&recording).unwrap();
    assert!(written.contains("type: tool_call") && written.contains("events:"), "parts and raw bytes both written:\n{written}");
    let server = Serve::start_with(&recording, &["--raw"], std::process::Stdio::null());

    let anthropic = r#"{"model":"claude-x","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"weather?"}]}"#;
    let (head, body) = post(&server.addr, "/s/r.a/v1/messages", "", anthropic);
    assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(String::from_utf8(body).unwrap(), std::fs::read_to_string(repo().join(CAPTURE)).unwrap(), "byte for byte");
    assert!(head.to_ascii_lowercase().contains("request-id: req_recorded"), "the recorded headers: {head}");

    let chat = r#"{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"weather?"}]}"#;
    let (_, body) = post(&server.addr, "/s/r.b/v1/chat/completions", "", chat);
    let body = String::from_utf8(body).unwrap();
    assert!(body.contains("\"name\":\"get_weather\"") && body.contains("toolu_01NRLabsLyVHZPKxbKvkfSMn"), "rendered from the parts: {body}");
}
