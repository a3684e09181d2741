//! `reloop serve` applies the providers' own context management as they do,
//! over real loopback HTTP: Anthropic context edits (and the cache they
//! break), Responses `context_management` compaction and
//! `/v1/responses/compact`, whose item expands when sent back.

use serde_json::{Value, json};

use crate::util::{Serve, post, write};

/// A recording of `n` text turns.
fn serve(dir: &std::path::Path, n: usize) -> Serve {
    let exchanges: String = (0..n).map(|i| format!("  - text: Turn {i}.\n")).collect();
    Serve::start(&write(dir, "r.yaml", &format!("format: reloop.recording/v1\nexchanges:\n{exchanges}")))
}

fn json_post(server: &Serve, path: &str, headers: &str, body: &Value) -> (String, Value) {
    let (head, body) = post(&server.addr, path, headers, &body.to_string());
    (head, serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&body))))
}

/// An Anthropic conversation of `n` tool uses with long results, the last
/// block marked for caching.
fn messages(n: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": "Read the files."})];
    for i in 0..n {
        messages.push(
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{i}"), "name": "read", "input": {"path": format!("f{i}")}}]}),
        );
        messages.push(
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": format!("row {i} ").repeat(400)}]}),
        );
    }
    messages.last_mut().unwrap()["content"][0]["cache_control"] = json!({"type": "ephemeral"});
    messages
}

const BETA: &str = "anthropic-version: 2023-06-01\r\nanthropic-beta: context-management-2025-06-27\r\n";

#[test]
fn anthropic_context_edits_are_applied_reported_and_break_the_cache_where_they_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), 2);
    let edit =
        json!({"edits": [{"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 5}, "keep": {"type": "tool_uses", "value": 2}}]});
    let request = |n: usize| json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": messages(n), "context_management": edit});
    let path = "/s/r/r/edited/v1/messages";
    // Five tool uses: under the trigger, nothing cleared, the prefix written.
    let (_, first) = json_post(&server, path, BETA, &request(5));
    assert_eq!(first["context_management"], json!({"applied_edits": []}), "{first}");
    assert!(first["usage"]["cache_creation_input_tokens"].as_u64().unwrap() > 2000, "{first}");
    // Six: the first four results cleared, so the prefix written before is lost.
    let (_, second) = json_post(&server, path, BETA, &request(6));
    let applied = &second["context_management"]["applied_edits"][0];
    assert_eq!((applied["type"].as_str(), applied["cleared_tool_uses"].as_u64()), (Some("clear_tool_uses_20250919"), Some(4)), "{second}");
    let cleared = applied["cleared_input_tokens"].as_u64().unwrap();
    assert_eq!(second["usage"]["cache_read_input_tokens"], 0, "{second}");
    // The same requests without the edit: the whole prompt, read from the cache.
    let plain = "/s/r/r/plain/v1/messages";
    let without = |n: usize| json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": messages(n)});
    json_post(&server, plain, BETA, &without(5));
    let (_, whole) = json_post(&server, plain, BETA, &without(6));
    assert!(whole["context_management"].is_null(), "{whole}");
    assert!(whole["usage"]["cache_read_input_tokens"].as_u64().unwrap() > 2000, "{whole}");
    let total = |reply: &Value| {
        ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"].iter().map(|k| reply["usage"][k].as_u64().unwrap()).sum::<u64>()
    };
    assert_eq!(total(&second), total(&whole) - cleared, "counted on the edited prompt");
    // Without the beta header, the API's 400.
    let (head, refused) = json_post(&server, "/s/r/r/nobeta/v1/messages", "anthropic-version: 2023-06-01\r\n", &request(6));
    assert!(head.contains(" 400 "), "{head}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("anthropic-beta: context-management-2025-06-27"), "{refused}");
}

/// A Responses input of `n` shell calls with long outputs.
fn input(n: usize) -> Vec<Value> {
    let mut input = vec![json!({"role": "user", "content": "Look around."})];
    for i in 0..n {
        input.push(json!({"type": "function_call", "call_id": format!("call_{i}"), "name": "shell", "arguments": format!("{{\"cmd\":\"cat f{i}\"}}")}));
        input.push(json!({"type": "function_call_output", "call_id": format!("call_{i}"), "output": format!("row {i} ").repeat(300)}));
    }
    input
}

#[test]
fn responses_compact_returns_a_sealed_window_that_is_read_back_and_context_management_compacts_past_its_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), 2);
    let (head, compacted) = json_post(&server, "/s/r/r/a/v1/responses/compact", "", &json!({"model": "gpt-5.1-codex", "input": input(6)}));
    assert!(head.contains(" 200 "), "{head}{compacted}");
    assert_eq!(compacted["object"], "response.compaction");
    let output = compacted["output"].as_array().unwrap();
    assert_eq!((output.len(), output[0]["role"].as_str(), output[1]["type"].as_str()), (2, Some("user"), Some("compaction")));
    assert!(output[1]["encrypted_content"].as_str().unwrap().starts_with("reloop-compaction-v1."));
    let full = compacted["usage"]["input_tokens"].as_u64().unwrap();
    assert!(full > 3000, "the compaction read the whole input: {compacted}");
    // The window sent back: the model reads the summary, and no exchange was consumed by the compaction.
    let mut next: Vec<Value> = output.clone();
    next.push(json!({"role": "user", "content": "Go on."}));
    let (_, reply) = json_post(&server, "/s/r/r/a/v1/responses", "", &json!({"model": "gpt-5.1-codex", "input": next}));
    assert_eq!(reply["output"][0]["content"][0]["text"], "Turn 0.", "{reply}");
    assert!(reply["usage"]["input_tokens"].as_u64().unwrap() < full / 3, "{reply}");
    // context_management on /responses: past the threshold the reply starts with the compaction item.
    let managed = json!({"model": "gpt-5.1-codex", "input": input(6), "context_management": [{"type": "compaction", "compact_threshold": 1000}]});
    let (_, reply) = json_post(&server, "/s/r/r/b/v1/responses", "", &managed);
    assert_eq!(reply["output"][0]["type"], "compaction", "{reply}");
    assert_eq!(reply["output"][1]["content"][0]["text"], "Turn 0.");
    assert!(reply["usage"]["input_tokens"].as_u64().unwrap() < full / 3, "{reply}");
    // Under it, nothing changes.
    let under = json!({"model": "gpt-5.1-codex", "input": input(6), "context_management": [{"type": "compaction", "compact_threshold": 100000}]});
    let (_, reply) = json_post(&server, "/s/r/r/c/v1/responses", "", &under);
    assert_eq!(reply["output"][0]["type"], "message", "{reply}");
    assert_eq!(reply["usage"]["input_tokens"].as_u64().unwrap(), full);
}

/// An agent that asks Anthropic for context editing (here `curl`, as any
/// client would) is measured on what the provider sent to the model: in
/// `steps.parquet` the request whose edit cleared old results breaks the
/// cache at the first cleared block, with the edit named as the cause.
#[test]
fn a_context_edit_shows_in_steps_parquet_as_a_cache_break_caused_by_the_provider() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "r.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Turn 0.\n  - text: Turn 1.\n");
    let edit =
        json!({"edits": [{"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 5}, "keep": {"type": "tool_uses", "value": 2}}]});
    for n in [5, 6] {
        let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": messages(n), "context_management": edit});
        write(dir.path(), &format!("request{n}.json"), &body.to_string());
    }
    let send = |n: u32| {
        format!(
            r#"curl -sf "$ANTHROPIC_BASE_URL/v1/messages" -H "anthropic-version: 2023-06-01" -H "anthropic-beta: context-management-2025-06-27" -H "content-type: application/json" --data @{}/request{n}.json"#,
            dir.path().display()
        )
    };
    let script = format!("{} >/dev/null && {} >/dev/null && echo done", send(5), send(6));
    let scenario = format!(
        "name: edited\nmodel: claude-sonnet-4-5\ntask: t\nrecording: r.yaml\nagent:\n  command: [sh, -c, '{script}']\n  wire: anthropic\n  timeout_s: 30\nexpect: {{ exit_code: 0 }}\n"
    );
    let file = write(dir.path(), "edited.yaml", &scenario);
    let out = dir.path().join("out");
    let output = crate::util::reloop(dir.path(), &["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}{}", crate::util::stdout(&output), crate::util::stderr(&output));
    let steps = crate::tables::read_rows(&out.join("steps.parquet"));
    let row = |i: usize, column: &str| steps[i][column].clone();
    assert_eq!((row(0, "cache_break_simulated").as_str(), row(1, "cache_break_simulated").as_str()), ("false", "true"), "{steps:#?}");
    assert_eq!(
        (row(1, "cache_break_cause").as_str(), row(1, "cache_break_role").as_str(), row(1, "cache_break_message").as_str()),
        ("edited", "tool_result", "2"),
        "{steps:#?}"
    );
    assert!(row(1, "cache_break_by").starts_with("clear_tool_uses_20250919 cleared 4 tool uses ("), "{steps:#?}");
    assert!(row(1, "cache_break_span").contains("[cleared]"), "{steps:#?}");
    assert_eq!(row(1, "cache_read_tokens"), "0");
}
