//! `reloop import` of OTLP GenAI traces: files told apart from the other
//! formats, and the `--otlp-listen` receiver fed by real OTLP/HTTP POSTs
//! (JSON and protobuf) of real instrumentations' traces.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::util::{Serve, reloop, repo, stderr, stdout};

fn fixture(name: &str) -> PathBuf {
    repo().join("harness/import/tests/fixtures/sessions/otlp").join(name)
}

/// POSTs `body` as `content_type` over HTTP/1.0; the status code and the response body.
fn post(addr: &str, content_type: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let authority = addr.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(authority).unwrap();
    let head = format!("POST /v1/traces HTTP/1.0\r\nHost: {authority}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n", body.len());
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    let status = String::from_utf8_lossy(&response[..split]).split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, response[split..].to_vec())
}

/// The trace id of a fixture's first span.
fn trace_id(text: &str) -> String {
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"].as_str().unwrap().to_owned()
}

fn scenarios(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yaml") && !name.ends_with(".recording.yaml"))
        .collect();
    names.sort();
    names
}

#[test]
fn otlp_files_under_another_format_are_refused_naming_the_formats() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let protobuf = fixture("openai-v2-read-and-edit-protobuf.pb");
    let output = reloop(&repo(), &["import", protobuf.to_str().unwrap(), "--out", out, "--format", "pi"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("read only as format otlp, not as pi"), "{}", stderr(&output));
    let json = fixture("openai-v2-read-and-edit.jsonl");
    let output = reloop(&repo(), &["import", json.to_str().unwrap(), "--out", out, "--format", "codex"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("read as codex, holds no model call") && stderr(&output).contains("inspect, opencode, goose, otlp, vcr"),
        "{}",
        stderr(&output)
    );
    let pi = repo().join("harness/import/tests/fixtures/sessions/pi").join("pi-context-overflow-against-reloop-mock.jsonl");
    let output = reloop(&repo(), &["import", pi.to_str().unwrap(), "--out", out, "--format", "otlp"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("read as otlp, holds no model call") && stderr(&output).contains("resourceSpans"), "{}", stderr(&output));
}

#[test]
fn the_otlp_receiver_writes_one_scenario_per_trace_posted_as_json_and_protobuf_and_they_replay() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("received");
    let args = ["import", "--otlp-listen", "127.0.0.1:0", "--otlp-exit-after", "2", "--out", out.to_str().unwrap()];
    let receiver = Serve::spawn(&args, Stdio::piped());
    let pydantic = std::fs::read_to_string(fixture("pydantic-ai-read-and-edit.json")).unwrap();
    let (status, body) = post(&receiver.addr, "application/json", pydantic.trim().as_bytes());
    assert_eq!((status, body.as_slice()), (200, b"{}".as_slice()));
    let protobuf = std::fs::read(fixture("openai-v2-read-and-edit-protobuf.pb")).unwrap();
    let (status, body) = post(&receiver.addr, "application/x-protobuf", &protobuf);
    assert_eq!((status, body.len()), (200, 0), "an empty ExportTraceServiceResponse");
    let status = receiver.wait(Duration::from_secs(60));
    assert_eq!(status.code(), Some(0), "stops after the two traces");
    let openai = std::fs::read_to_string(fixture("openai-v2-read-and-edit.jsonl")).unwrap();
    let expected = vec![format!("otlp-{}.yaml", trace_id(&openai)), format!("otlp-{}.yaml", trace_id(&pydantic))];
    let mut expected_sorted = expected.clone();
    expected_sorted.sort();
    assert_eq!(scenarios(&out), expected_sorted);
    let reports = dir.path().join("reports");
    let run = reloop(&repo(), &["run", out.to_str().unwrap(), "--out", reports.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "both replay and pass as imported: {}{}", stdout(&run), stderr(&run));
    let runs = crate::tables::read_rows(&reports.join("runs.parquet"));
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|run| run["tool_calls"] == "4" && run["source"].starts_with("otlp:otlp-listen#")), "{runs:?}");
}

#[test]
fn the_otlp_receiver_refuses_bad_bodies_and_other_hosts_and_writes_what_came_at_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("received");
    let output = reloop(&repo(), &["import", "--otlp-listen", "0.0.0.0:4318", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not a loopback address") && stderr(&output).contains("--otlp-allow-remote"), "{}", stderr(&output));
    let receiver = Serve::spawn(&["import", "--otlp-listen", "127.0.0.1:0", "--out", out.to_str().unwrap()], Stdio::piped());
    assert_eq!(post(&receiver.addr, "text/plain", b"hello").0, 415);
    let (status, body) = post(&receiver.addr, "application/x-protobuf", b"\x0a\x05\x12");
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&body).contains("runs past the end"), "a google.rpc.Status naming the byte");
    let (status, body) = post(&receiver.addr, "application/json", b"{\"resourceSpans\": [");
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&body).contains("not JSON"));
    let pydantic = std::fs::read_to_string(fixture("pydantic-ai-read-and-edit.json")).unwrap();
    assert_eq!(post(&receiver.addr, "application/json", pydantic.trim().as_bytes()).0, 200);
    assert_eq!(receiver.interrupt().code(), Some(130), "Ctrl-C ends it as serve and record end");
    assert_eq!(scenarios(&out), [format!("otlp-{}.yaml", trace_id(&pydantic))]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(format!("otlp-{}.import.json", trace_id(&pydantic)))).unwrap()).unwrap();
    assert_eq!(report["lines"]["read"], 10, "{report}");
    let remote = Serve::spawn(&["import", "--otlp-listen", "0.0.0.0:0", "--otlp-allow-remote", "--out", out.to_str().unwrap()], Stdio::piped());
    assert_eq!(remote.interrupt().code(), Some(2), "binds when asked; nothing received, nothing written");
}

/// The main agent's tool calls of each run of a report, by (scenario, variant): `(tool, arguments)` in order.
fn main_calls(report: &Path) -> std::collections::HashMap<(String, String), Vec<(String, String)>> {
    let mut calls: std::collections::HashMap<(String, String), Vec<(String, String)>> = std::collections::HashMap::new();
    let mut depth: std::collections::HashMap<(String, String), usize> = std::collections::HashMap::new();
    let mut events = crate::tables::read_rows(&report.join("events.parquet"));
    events.sort_by_key(|event| (event["scenario"].clone(), event["variant"].clone(), event["seq"].parse::<u64>().unwrap()));
    for event in events {
        let run = (event["scenario"].clone(), event["variant"].clone());
        let depth = depth.entry(run.clone()).or_default();
        match event["kind"].as_str() {
            "sub_agent_started" => *depth += 1,
            "sub_agent_finished" => *depth = depth.saturating_sub(1),
            _ => {}
        }
        let entry = calls.entry(run).or_default();
        if event["kind"] == "tool_start" && *depth == 0 {
            let payload: serde_json::Value = serde_json::from_str(&event["payload"]).unwrap();
            let arguments = payload["arguments"].as_str().unwrap();
            let canonical = serde_json::from_str::<serde_json::Value>(arguments).map_or_else(|_| arguments.to_owned(), |v| v.to_string());
            entry.push((payload["tool"].as_str().unwrap().to_owned(), canonical));
        }
    }
    calls
}

/// `reloop export --otlp` of the bundled suite's report imports back: one
/// scenario per run, which replays and passes with the run's tool calls.
#[test]
fn a_reloop_otlp_export_imports_back_and_replays_with_the_same_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = repo().join("reports/baseline");
    let file = dir.path().join("traces.json");
    let out = reloop(&repo(), &["export", baseline.to_str().unwrap(), "--otlp", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The run each trace is, from its invoke_agent span.
    let request: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut run_of = std::collections::HashMap::new();
    for span in request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap() {
        let attribute =
            |key: &str| span["attributes"].as_array().unwrap().iter().find(|a| a["key"] == key).map(|a| a["value"]["stringValue"].as_str().unwrap().to_owned());
        if let (Some(scenario), Some(variant)) = (attribute("reloop.scenario"), attribute("reloop.variant")) {
            run_of.insert(span["traceId"].as_str().unwrap().to_owned(), (scenario, variant));
        }
    }
    let imported = dir.path().join("imported");
    let import = reloop(&repo(), &["import", file.to_str().unwrap(), "--out", imported.to_str().unwrap()]);
    let written: Vec<String> = scenarios(&imported);
    assert!(written.len() * 10 >= run_of.len() * 9, "at least 90% of the runs import: {} of {}: {}", written.len(), run_of.len(), stderr(&import));
    let reports = dir.path().join("replayed");
    let run = reloop(&repo(), &["run", imported.to_str().unwrap(), "--out", reports.to_str().unwrap()]);
    assert!(run.status.code().is_some(), "{}", stderr(&run));
    let original = main_calls(&baseline);
    let replayed = main_calls(&reports);
    let runs = crate::tables::read_rows(&reports.join("runs.parquet"));
    let (mut same, mut passed) = (0, 0);
    for row in &runs {
        let trace = row["source"].rsplit_once('#').map(|(_, trace)| trace.to_owned()).unwrap();
        let source_run = &run_of[&trace];
        if replayed[&(row["scenario"].clone(), row["variant"].clone())] == original[source_run] {
            same += 1;
        }
        passed += usize::from(row["passed"] == "true");
    }
    assert!(same * 10 >= runs.len() * 9, "at least 90% of the runs replay the exported run's tool calls: {same} of {}", runs.len());
    assert!(passed * 10 >= runs.len() * 9, "at least 90% pass as imported: {passed} of {}", runs.len());
}
