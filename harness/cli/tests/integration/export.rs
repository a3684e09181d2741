//! `reloop export`: the checked-in baseline report (the bundled suite: tool
//! calls, retries, compactions, cache breaks, doom loops, sub-agents) as
//! OTLP/JSON to a file and to a collector on loopback. `.ci/check_export.py`
//! parses the same file with `opentelemetry-proto`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use serde_json::Value;

use crate::util::{reloop, repo, stderr};

fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"].as_array().unwrap().iter().find(|a| a["key"] == key).map(|a| &a["value"])
}

fn operation(span: &Value) -> &str {
    attribute(span, "gen_ai.operation.name").and_then(|v| v["stringValue"].as_str()).unwrap_or_default()
}

#[test]
fn every_span_of_the_otlp_export_carries_the_gen_ai_attributes_of_its_operation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("traces.json");
    let baseline = repo().join("reports/baseline");
    let out = reloop(&repo(), &["export", baseline.to_str().unwrap(), "--otlp", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let request: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap();
    let runs = crate::tables::read_rows(&baseline.join("runs.parquet"));
    let ran = runs.iter().filter(|r| r["outcome"] != "skipped").count();
    let agents: Vec<&Value> = spans.iter().filter(|s| operation(s) == "invoke_agent").collect();
    assert_eq!(agents.len(), ran, "one invoke_agent span per run that ran");
    let traces: std::collections::HashSet<&str> = spans.iter().map(|s| s["traceId"].as_str().unwrap()).collect();
    assert_eq!(traces.len(), ran, "a trace per run");
    let mut counts = std::collections::BTreeMap::new();
    for span in spans {
        let op = operation(span);
        *counts.entry(op).or_insert(0) += 1;
        let has = |key: &str| attribute(span, key).is_some();
        for key in ["gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model"] {
            assert!(has(key), "{key} missing on {span}");
        }
        let failed = has("error.type");
        match op {
            "invoke_agent" => {
                assert!(has("gen_ai.agent.name") && has("gen_ai.response.finish_reasons") && has("reloop.outcome"), "{span}");
                assert!(has("gen_ai.usage.input_tokens") && has("gen_ai.usage.cache_creation.input_tokens"), "{span}");
            }
            "chat" => {
                assert!(failed || has("gen_ai.response.finish_reasons"), "a chat span says how it finished: {span}");
                for key in [
                    "gen_ai.usage.input_tokens",
                    "gen_ai.usage.output_tokens",
                    "gen_ai.usage.cache_read.input_tokens",
                    "gen_ai.usage.cache_creation.input_tokens",
                ] {
                    assert!(failed || has(key), "{key} missing on {span}");
                }
                assert!(span["parentSpanId"].is_string());
            }
            "execute_tool" => assert!(has("gen_ai.tool.name") && has("gen_ai.tool.call.id"), "{span}"),
            other => panic!("unexpected operation {other:?}: {span}"),
        }
        assert_eq!(failed, span["status"]["code"] == 2, "error.type exactly on spans with an error status: {span}");
        let (start, end) = (&span["startTimeUnixNano"], &span["endTimeUnixNano"]);
        assert!(start.as_str().unwrap().parse::<u64>().unwrap() <= end.as_str().unwrap().parse::<u64>().unwrap(), "{span}");
    }
    let steps = crate::tables::read_rows(&baseline.join("steps.parquet")).len();
    assert_eq!(counts["chat"], steps, "a chat span per model call");
    assert!(counts["execute_tool"] > 100, "{counts:?}");
    let finding = |name: &str| agents.iter().flat_map(|s| s["events"].as_array().unwrap()).filter(|e| e["name"] == name).count();
    assert!(finding("reloop.compaction") > 0 && finding("reloop.cache_break") > 0 && finding("reloop.doom_loop") > 0);
    // The run's virtual time: a run starts at the epoch and lasts its virtual_ms.
    let longest = runs.iter().map(|r| r["virtual_ms"].parse::<u64>().unwrap()).max().unwrap();
    let latest = agents.iter().map(|s| s["endTimeUnixNano"].as_str().unwrap().parse::<u64>().unwrap()).max().unwrap();
    assert_eq!(latest, longest * 1_000_000);
    // A sub-agent's model calls hang under the tool call that started it.
    let tool_ids: std::collections::HashSet<&str> = spans.iter().filter(|s| operation(s) == "execute_tool").map(|s| s["spanId"].as_str().unwrap()).collect();
    let nested = spans.iter().filter(|s| operation(s) == "chat" && tool_ids.contains(s["parentSpanId"].as_str().unwrap())).count();
    assert!(nested > 0, "sub-agent calls under their tool span");
}

/// `--otel-conventions v1.36` exports the same spans under that release's
/// names: `gen_ai.system` for the provider, no cache attributes, and the
/// provider's own input count (Anthropic's without the cached tokens).
#[test]
fn the_previous_conventions_are_one_flag_away() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = repo().join("reports/baseline");
    let export = |conventions: &str| {
        let file = dir.path().join(format!("{conventions}.json"));
        let out = reloop(&repo(), &["export", baseline.to_str().unwrap(), "--otlp", file.to_str().unwrap(), "--otel-conventions", conventions]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let request: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().clone()
    };
    let (current, previous) = (export("current"), export("v1.36"));
    assert_eq!(current.len(), previous.len());
    let int = |span: &Value, key: &str| attribute(span, key).map(|v| v["intValue"].as_str().unwrap().parse::<u64>().unwrap());
    let mut anthropic_calls = 0;
    for (now, then) in current.iter().zip(&previous) {
        assert_eq!((&now["spanId"], &now["name"]), (&then["spanId"], &then["name"]));
        let provider = attribute(now, "gen_ai.provider.name").unwrap();
        assert_eq!((attribute(then, "gen_ai.system"), attribute(then, "gen_ai.provider.name")), (Some(provider), None), "{then}");
        assert!(then["attributes"].as_array().unwrap().iter().all(|a| !a["key"].as_str().unwrap().starts_with("gen_ai.usage.cache")), "{then}");
        if operation(now) != "chat" || int(now, "gen_ai.usage.input_tokens").is_none() {
            continue;
        }
        let cached = int(now, "gen_ai.usage.cache_read.input_tokens").unwrap_or(0) + int(now, "gen_ai.usage.cache_creation.input_tokens").unwrap_or(0);
        let anthropic = provider["stringValue"] == "anthropic";
        anthropic_calls += usize::from(anthropic && cached > 0);
        let expected = int(now, "gen_ai.usage.input_tokens").unwrap() - if anthropic { cached } else { 0 };
        assert_eq!(int(then, "gen_ai.usage.input_tokens"), Some(expected), "{now}\n{then}");
    }
    assert!(anthropic_calls > 0, "the baseline has Anthropic calls that read or wrote the cache");
    let unknown = dir.path().join("unknown.json");
    let out = reloop(&repo(), &["export", baseline.to_str().unwrap(), "--otlp", unknown.to_str().unwrap(), "--otel-conventions", "v1.35"]);
    assert_eq!(out.status.code(), Some(2), "an unknown release is a usage error");
    assert!(stderr(&out).contains("current") && stderr(&out).contains("v1.36"), "{}", stderr(&out));
}

/// One OTLP/HTTP request on a loopback listener, read whole and answered
/// with `answer`: its request line and body.
fn receive_one(listener: &TcpListener, answer: &[u8]) -> (String, Vec<u8>) {
    let (stream, _) = listener.accept().unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let mut stream = stream;
    stream.write_all(answer).unwrap();
    (request_line, body)
}

#[test]
fn the_otlp_endpoint_receives_the_same_request_as_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("traces.json");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let ok = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    let collector = std::thread::spawn(move || receive_one(&listener, ok));
    let baseline = repo().join("reports/baseline");
    let out = reloop(&repo(), &["export", baseline.to_str().unwrap(), "--otlp", file.to_str().unwrap(), "--otlp-endpoint", &endpoint]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (request_line, body) = collector.join().unwrap();
    assert!(request_line.starts_with("POST /v1/traces "), "{request_line}");
    assert_eq!(body, std::fs::read(&file).unwrap(), "the collector got the file's bytes");
}

#[test]
fn a_collector_that_refuses_the_traces_is_an_error_naming_it() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/", listener.local_addr().unwrap());
    let refusal = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 13\r\nConnection: close\r\n\r\nbad resources";
    let collector = std::thread::spawn(move || receive_one(&listener, refusal));
    let baseline = repo().join("reports/baseline");
    let out = reloop(&repo(), &["export", baseline.to_str().unwrap(), "--otlp-endpoint", &endpoint]);
    collector.join().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("/v1/traces answered 400") && stderr(&out).contains("bad resources"), "{}", stderr(&out));
}

/// Regression: a collector answering 307 to another origin had the traces
/// sent there, while the message named the first URL.
#[test]
fn a_collector_redirecting_elsewhere_is_an_error_naming_both_and_the_other_host_gets_nothing() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let target = format!("http://{}/v1/traces", elsewhere.local_addr().unwrap());
    let redirect = format!("HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes();
    let collector = std::thread::spawn(move || receive_one(&listener, &redirect));
    let baseline = repo().join("reports/baseline");
    let out = reloop(&repo(), &["export", baseline.to_str().unwrap(), "--otlp-endpoint", &endpoint]);
    collector.join().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("{endpoint}/v1/traces")) && stderr(&out).contains(&target), "{}", stderr(&out));
    assert!(matches!(elsewhere.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock), "the redirect was followed");
}

#[test]
fn export_without_an_output_is_refused() {
    let out = reloop(&repo(), &["export", "reports/baseline"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// The main agent's executed tool calls of `scenario` in a report: (tool,
/// arguments as JSON text).
fn executed_calls(report: &std::path::Path, scenario: &str) -> Vec<(String, String)> {
    let mut depth = 0;
    let mut calls = Vec::new();
    for event in crate::tables::read_rows(&report.join("events.parquet")).into_iter().filter(|e| e["scenario"] == scenario) {
        match event["kind"].as_str() {
            "sub_agent_started" => depth += 1,
            "sub_agent_finished" => depth -= 1,
            "tool_start" if depth == 0 => {
                let payload: Value = serde_json::from_str(&event["payload"]).unwrap();
                calls.push((payload["tool"].as_str().unwrap().to_owned(), payload["arguments"].as_str().unwrap().to_owned()));
            }
            _ => {}
        }
    }
    calls
}

#[test]
fn an_atif_export_imports_and_replays_the_same_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let baseline = repo().join("reports/baseline");
    let out = reloop(&repo(), &["export", baseline.to_str().unwrap(), "--atif", &path("atif")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // 31 tool calls and a compaction by reloop's strategy, from a real pi session.
    let scenario = "pi-mono-compact-2638daee-first-65-lines";
    let trajectory: Value = serde_json::from_slice(&std::fs::read(dir.path().join(format!("atif/{scenario}.json"))).unwrap()).unwrap();
    assert_eq!(trajectory["schema_version"], "ATIF-v1.8");
    let steps = trajectory["steps"].as_array().unwrap();
    assert_eq!((steps[0]["source"].as_str(), steps[1]["source"].as_str()), (Some("system"), Some("user")), "the scenario's prompts open it");
    let agent_steps: Vec<&Value> = steps.iter().filter(|s| s["source"] == "agent").collect();
    assert!(agent_steps.iter().all(|s| s["metrics"]["prompt_tokens"].is_u64() && s["metrics"]["completion_tokens"].is_u64()));
    let out = reloop(&repo(), &["import", &path(&format!("atif/{scenario}.json")), "--out", &path("imported")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = reloop(&repo(), &["run", &path("imported"), "--out", &path("replayed")]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", crate::util::stdout(&out), stderr(&out));
    let exported = executed_calls(&baseline, scenario);
    assert_eq!(exported.len(), 31);
    assert_eq!(executed_calls(&dir.path().join("replayed"), scenario), exported);
}

#[test]
fn a_missing_report_is_bad_input_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-report");
    let out = reloop(&repo(), &["export", missing.to_str().unwrap(), "--otlp", dir.path().join("t.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no-report: cannot read"), "{}", stderr(&out));
    assert!(!dir.path().join("t.json").exists(), "nothing written");
}
