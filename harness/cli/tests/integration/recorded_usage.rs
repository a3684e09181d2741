//! A replayed recording that kept the provider's usage: the `*_recorded`
//! columns carry it beside reloop's own counts, and the run's cost is priced
//! from it (an Anthropic session's recorded cache reads and writes included).

use crate::tables::read_rows;
use crate::util::{Serve, post, reloop, repo, stderr, write};

const SCENARIO: &str = "\
model: claude-sonnet-4-5
wire: anthropic
system: You are terse.
task: What is the answer?
recording: recording.yaml
expect:
  outcome: final_answer
";

fn run(recording: &str) -> (Vec<crate::tables::Row>, Vec<crate::tables::Row>) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.yaml", SCENARIO);
    write(dir.path(), "recording.yaml", recording);
    let out = dir.path().join("out");
    let output = reloop(dir.path(), &["run", "s.yaml", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    (read_rows(&out.join("runs.parquet")), read_rows(&out.join("steps.parquet")))
}

#[test]
fn recorded_usage_fills_its_columns_and_prices_the_run() {
    let recording = "format: reloop.recording/v2\nexchanges:\n  - parts: [{ type: text, text: The answer is 42. }]\n    usage: { input_tokens: 2000000, output_tokens: 100000, cache_read_tokens: 1000000, cache_write_tokens: 500000 }\n";
    let (runs, steps) = run(recording);
    let step = &steps[0];
    assert_eq!(step["input_tokens_recorded"], "2000000");
    assert_eq!(step["cache_read_tokens_recorded"], "1000000");
    assert_eq!(step["cache_write_tokens_recorded"], "500000");
    assert_ne!(step["input_tokens"], "2000000", "reloop's own count stays beside it");
    let run = &runs[0];
    assert_eq!(run["cost_source"], "recorded");
    assert_eq!(run["input_tokens_recorded_total"], "2000000");
    assert_eq!(run["output_tokens_recorded_total"], "100000");
    // claude-sonnet-4-5 per million: 3.00 input, 0.30 cache read, 3.75 cache write, 15.0 output.
    let expected = 0.5 * 3.00 + 1.0 * 0.30 + 0.5 * 3.75 + 0.1 * 15.0;
    let cost: f64 = run["estimated_cost_usd_recorded"].parse().unwrap();
    assert!((cost - expected).abs() < 1e-9, "{cost} != {expected}");
}

#[test]
fn without_recorded_usage_the_columns_are_null_and_the_cost_simulated() {
    let (runs, steps) = run("format: reloop.recording/v2\nexchanges:\n  - text: The answer is 42.\n");
    assert_eq!(steps[0]["input_tokens_recorded"], "null");
    assert_eq!(runs[0]["input_tokens_recorded_total"], "null");
    assert_eq!(runs[0]["cost_source"], "simulated");
}

/// The neutral recording `reloop import` writes of the vcr cassette at
/// `cassette` (under the importer's fixtures), in `dir`.
fn imported(dir: &std::path::Path, cassette: &str) -> std::path::PathBuf {
    imported_with(dir, cassette, &[])
}

/// As [`imported`], with `flags` given to `import`.
fn imported_with(dir: &std::path::Path, cassette: &str, flags: &[&str]) -> std::path::PathBuf {
    let cassette = repo().join("harness/import/tests/fixtures/sessions/vcr-cassettes").join(cassette);
    let out = dir.join("out");
    let mut args = vec!["import", cassette.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend(flags);
    let output = reloop(dir, &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".recording.yaml") && !p.to_string_lossy().ends_with(".raw.recording.yaml"))
        .unwrap()
}

/// A real cassette (Anthropic, streamed) imported and served with
/// `--recorded-usage`: what the response carried that reloop does not
/// model (a `tool_use` block's `caller`, `stop_details`) is kept in the v2
/// recording and comes back where it was, to an Anthropic client only; a
/// Chat client of the same exchange gets neither.
#[test]
fn an_imported_cassettes_unmodelled_fields_come_back_to_a_client_of_its_api() {
    let dir = tempfile::tempdir().unwrap();
    let neutral = imported(dir.path(), "anthropic-messages/llm-anthropic__test_fixed_version_tool_chain_regression.yaml");
    let text = std::fs::read_to_string(&neutral).unwrap();
    assert!(text.contains("caller:") && text.contains("api: anthropic"), "kept in the recording:\n{text}");
    let recording: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let request = &recording["exchanges"][0]["request"]["body"];
    assert_eq!(request["stream"], true);
    let session = neutral.file_name().unwrap().to_string_lossy().trim_end_matches(".yaml").to_owned();
    let server = Serve::start_with(&neutral, &["--recorded-usage"], std::process::Stdio::null());
    let headers = "anthropic-version: 2023-06-01\r\nx-api-key: sk-test\r\n";
    let (_, body) = post(&server.addr, &format!("/s/{session}/r/a/v1/messages"), headers, &request.to_string());
    let stream = String::from_utf8(body).unwrap();
    assert!(stream.contains(r#""caller":{"type":"direct"}"#), "{stream}");
    assert!(stream.contains(r#""stop_details":null"#), "{stream}");
    let chat = serde_json::json!({ "model": request["model"], "messages": [{ "role": "user", "content": request["messages"][0]["content"][0]["text"] }], "tools": [{ "type": "function", "function": { "name": "fixed_version", "parameters": { "type": "object" } } }] });
    let (_, body) = post(&server.addr, &format!("/s/{session}/r/b/v1/chat/completions"), "", &chat.to_string());
    let completion = String::from_utf8(body).unwrap();
    assert!(completion.contains("fixed_version") && !completion.contains("caller") && !completion.contains("stop_details"), "{completion}");
}

/// OpenRouter's Chat streams (repeating `role` and the call's id in every
/// chunk, opening twice, without a finish reason, the usage beside a
/// choice) are imported with their chunk layout and served chunk for chunk:
/// with `--recorded-usage`, every chunk of both replies is the recorded
/// one but for the empty `system_fingerprint`, which reloop does not keep.
#[test]
fn an_imported_gateway_stream_is_served_in_its_recorded_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let name = "openai-chat/simonw-llm__test_tools_streaming_variant_a.yaml";
    let neutral = imported(dir.path(), name);
    let text = std::fs::read_to_string(&neutral).unwrap();
    assert!(text.contains("chunks:") && text.contains("content_empty") && text.contains("name: llm_version\n"), "kept in the recording:\n{text}");
    let recording: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let cassette_path = repo().join("harness/import/tests/fixtures/sessions/vcr-cassettes").join(name);
    let cassette: serde_json::Value = serde_saphyr::from_str(&std::fs::read_to_string(cassette_path).unwrap()).unwrap();
    let chunks = |stream: &str| -> Vec<serde_json::Value> {
        let data = stream.split("\n\n").filter_map(|event| event.trim().strip_prefix("data: ")).filter(|data| *data != "[DONE]");
        data.map(|data| serde_json::from_str::<serde_json::Value>(data).unwrap()).collect()
    };
    let session = neutral.file_name().unwrap().to_string_lossy().trim_end_matches(".yaml").to_owned();
    let server = Serve::start_with(&neutral, &["--recorded-usage"], std::process::Stdio::null());
    for index in 0..2 {
        let request = &recording["exchanges"][index]["request"]["body"];
        let (_, body) = post(&server.addr, &format!("/s/{session}/r/a/v1/chat/completions"), "", &request.to_string());
        let mut recorded = chunks(cassette["interactions"][index]["response"]["body"]["string"].as_str().unwrap());
        for chunk in &mut recorded {
            if chunk["system_fingerprint"] == "" {
                chunk.as_object_mut().unwrap().remove("system_fingerprint");
            }
        }
        assert_eq!(chunks(&String::from_utf8(body).unwrap()), recorded, "reply {index}");
    }
    drop(server);

    // A scenario's fault breaks the kept layout like any stream: three recorded chunks, then the cut.
    let scenario = format!("name: cut\nmodel: gpt-4.1-mini\ntask: t\nrecording: {}\nfaults: [{{ exchange: 0, cut_after_events: 3 }}]\n", neutral.display());
    let scenario = write(dir.path(), "cut.yaml", &scenario);
    let server = Serve::start_with_flags(&["--scenario", scenario.to_str().unwrap()], std::process::Stdio::null());
    let request = &recording["exchanges"][0]["request"]["body"];
    let (_, body) = post(&server.addr, "/s/cut/r/1/v1/chat/completions", "", &request.to_string());
    let body = String::from_utf8(body).unwrap();
    let recorded = chunks(cassette["interactions"][0]["response"]["body"]["string"].as_str().unwrap());
    let sent = chunks(&body);
    assert_eq!(sent.len(), 3, "{body}");
    assert_eq!(sent.iter().map(|chunk| &chunk["choices"]).collect::<Vec<_>>(), recorded[..3].iter().map(|chunk| &chunk["choices"]).collect::<Vec<_>>());
    assert!(!body.contains("[DONE]"), "{body}");
}

/// Issue 43: a provider's fields on a whole Chat completion's message and
/// choice (OpenRouter's `reasoning`, `reasoning_details`,
/// `native_finish_reason`, in a real pydantic-ai cassette) were dropped;
/// they come back where they were.
#[test]
fn a_providers_own_message_and_choice_fields_come_back_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let neutral = imported(dir.path(), "openai-chat/pydantic-ai__test_openrouter_with_reasoning.yaml");
    let recording: serde_json::Value = serde_saphyr::from_str(&std::fs::read_to_string(&neutral).unwrap()).unwrap();
    let session = neutral.file_name().unwrap().to_string_lossy().trim_end_matches(".yaml").to_owned();
    let server = Serve::start_with(&neutral, &["--recorded-usage"], std::process::Stdio::null());
    let request = &recording["exchanges"][0]["request"]["body"];
    let (_, body) = post(&server.addr, &format!("/s/{session}/r/a/v1/chat/completions"), "", &request.to_string());
    let completion: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let choice = &completion["choices"][0];
    assert_eq!(choice["native_finish_reason"], "stop", "{choice}");
    assert!(choice["message"]["reasoning"].as_str().is_some_and(|text| text.starts_with("1.  **Deconstruct")), "{choice}");
    assert_eq!(choice["message"]["reasoning_details"][0]["type"], "reasoning.text", "{choice}");
    assert_eq!(completion["provider"], "BaseTen");
}

/// Issue 43: a stream recorded without a usage chunk, whose bytes were not
/// kept (a `--redact-body` match in its output drops them), was served with
/// the mock's usage to a client asking for it (`include_usage`): the
/// recording says the provider sent none, so none is sent.
#[test]
fn a_stream_recorded_without_usage_gets_none_though_its_bytes_were_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let neutral = imported_with(dir.path(), "openai-chat/openllmetry__test_chat_tools_streaming.yaml", &["--redact-body", "San Francisco"]);
    let text = std::fs::read_to_string(&neutral).unwrap();
    let recording: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert!(recording["exchanges"][0].get("raw").is_none(), "the bytes were dropped:\n{text}");
    let session = neutral.file_name().unwrap().to_string_lossy().trim_end_matches(".yaml").to_owned();
    let server = Serve::start_with(&neutral, &["--recorded-usage"], std::process::Stdio::null());
    let mut request = recording["exchanges"][0]["request"]["body"].clone();
    request["stream_options"] = serde_json::json!({ "include_usage": true });
    let (_, body) = post(&server.addr, &format!("/s/{session}/r/a/v1/chat/completions"), "", &request.to_string());
    let stream = String::from_utf8(body).unwrap();
    let chunks: Vec<serde_json::Value> = stream
        .split("\n\n")
        .filter_map(|event| event.trim().strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    assert!(chunks.len() > 2, "{stream}");
    assert!(chunks.iter().all(|chunk| !chunk["usage"].is_object()), "usage made up:\n{stream}");
}
