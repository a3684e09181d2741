//! `reloop import`: every real session fixture imports with a report that
//! accounts for every line, the bundled `scenarios/imported/` suite is what
//! the importer writes today, and the imported sessions replay with the
//! recorded tool calls, arguments and step alignment under every strategy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::tables::{Row, read_rows};
use crate::util::{reloop, repo, stderr, stdout, write};

/// The session fixtures (`harness/import/tests/fixtures/sessions/`), cassettes aside.
fn session_fixtures() -> Vec<PathBuf> {
    let root = repo().join("harness/import/tests/fixtures/sessions");
    let mut files = Vec::new();
    for format in ["pi", "codex", "claude-code", "openai-messages", "atif", "openhands", "gemini-cli", "opencode", "goose", "otlp"] {
        for entry in std::fs::read_dir(root.join(format)).unwrap() {
            let path = entry.unwrap().path();
            // openhands/ holds SDK conversation folders beside how they were made; opencode/ and otlp/ their files beside how they were made.
            let how_made = path.extension().is_some_and(|e| e == "md" || e == "py");
            let session = match format {
                "openhands" => path.is_dir(),
                _ => !how_made,
            };
            if session {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn import_into(out: &Path, files: &[PathBuf]) -> String {
    let mut args = vec!["import".to_owned()];
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    args.extend(["--out".to_owned(), out.to_string_lossy().into_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = reloop(&repo(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
}

#[test]
fn every_fixture_imports_accounting_for_every_line_and_the_bundled_suite_is_fresh() {
    let dir = tempfile::tempdir().unwrap();
    import_into(dir.path(), &session_fixtures());
    let suite = repo().join("scenarios/imported");
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        if name.ends_with(".import.json") {
            let report: serde_json::Value = serde_json::from_str(&text).unwrap();
            let lines = &report["lines"];
            let count = |key: &str| lines[key].as_array().map_or(0, Vec::len) as u64;
            let ignored: u64 = lines["ignored"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
            let accounted = lines["used"].as_u64().unwrap() + ignored + count("skipped") + count("joined");
            assert_eq!(accounted, lines["read"].as_u64().unwrap(), "{name}: every line used, ignored, skipped or joined: {lines}");
        }
        if std::env::var_os("RELOOP_BLESS").is_some() {
            std::fs::write(suite.join(&name), &text).unwrap();
        } else if std::fs::read_to_string(suite.join(&name)).ok().as_deref() != Some(text.as_str()) {
            stale.push(name);
        }
    }
    assert!(stale.is_empty(), "scenarios/imported/ is stale ({}); refresh it with RELOOP_BLESS=1 cargo nextest run -p reloop import", stale.join(", "));
}

#[test]
fn glued_objects_split_torn_lines_and_non_json_arguments_are_named_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = repo().join("harness/import/tests/fixtures/sessions");
    let printed = import_into(
        dir.path(),
        &[
            fixtures.join("pi/malformed__glued-line-and-torn-tail.jsonl"),
            fixtures.join("codex/localpush__rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.sanitized.jsonl"),
        ],
    );
    assert!(printed.contains("line 4: 2 JSON objects glued on one line: split"), "{printed}");
    assert!(printed.contains("line 11: not JSON"), "{printed}");
    assert!(printed.contains("line 17: `arguments` is not valid JSON"), "{printed}");
    // The raw arguments reach the recording byte for byte.
    let recording =
        std::fs::read_to_string(dir.path().join("localpush-rollout-2026-02-23t20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff-sanitized.recording.yaml"))
            .unwrap();
    assert!(recording.contains("[REDACTED_ARGUMENTS len=46 sha=4cb9a2fc]"), "{recording}");
}

#[test]
fn an_unknown_format_and_a_missing_file_are_bad_input_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = write(dir.path(), "notes.txt", "just words\n");
    let out = dir.path().join("out");
    let output = reloop(dir.path(), &["import", text.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(
            "notes.txt:1: is in none of the formats reloop imports (pi, codex, claude-code, openai-messages, atif, gemini-cli, inspect, opencode, goose, otlp, vcr)"
        ),
        "{}",
        stderr(&output)
    );
    let output = reloop(dir.path(), &["import", "missing.jsonl", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("missing.jsonl"), "{}", stderr(&output));
}

/// Regression (issue 43): a real Gemini CLI session (`session-*.json`) was
/// taken for Claude Code JSONL, every line skipped as not JSON, then given a
/// made-up final answer: a scenario that passed on nothing. A file read in
/// a format it is not in holds no model call; it is refused (exit 2) with
/// the format tried and the formats reloop reads, and nothing is written.
/// Tried with a real file of each format under every other `--format`.
#[test]
fn a_file_read_in_a_format_it_is_not_in_is_refused_and_nothing_is_made_up() {
    let fixtures = repo().join("harness/import/tests/fixtures/sessions");
    let files = [
        ("pi", "pi/agent-history__pi-session-01.redacted.jsonl"),
        ("codex", "codex/agent-history__codex-session-01.redacted.jsonl"),
        ("claude-code", "claude-code/spotter__short.jsonl"),
        ("openai-messages", "openai-messages/openhands__basic.json"),
        ("atif", "atif/harbor-claude-code__spotter__tool_heavy.atif.json"),
        ("gemini-cli", "gemini-cli/ai-sessions__gemini-cli-pomodoro-timer.json"),
        ("inspect", "inspect-ai/inspect-ai__browser.json"),
        ("opencode", "opencode/opencode-1-18-33-tools-against-reloop-mock.json"),
        ("goose", "goose/constructed__goose-export.json"),
        ("goose", "goose/constructed__goose-session.jsonl"),
        ("otlp", "otlp/pydantic-ai-read-and-edit.json"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (own, file) in files {
        let path = fixtures.join(file);
        for format in ["pi", "codex", "claude-code", "openai-messages", "atif", "gemini-cli", "inspect", "opencode", "goose", "otlp"]
            .into_iter()
            .filter(|format| *format != own)
        {
            let output = reloop(dir.path(), &["import", path.to_str().unwrap(), "--format", format, "--out", out.to_str().unwrap()]);
            let printed = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{own} as {format}: {printed}");
            assert!(printed.contains(&format!("read as {format}, holds no model call")), "{own} as {format}: {printed}");
            assert!(
                printed.contains("reloop imports pi, codex, claude-code, openai-messages, atif, gemini-cli, inspect, opencode, goose, otlp, vcr"),
                "{printed}"
            );
            assert!(!out.exists(), "{own} as {format}: something was written");
        }
    }
}

/// Issue 43: every Inspect AI log fixture imports with every event
/// accounted for, one scenario per sample and epoch (`NAME-ID-epoch-N`),
/// each of which replays and passes. (They are not in the bundled suite,
/// whose golden reports stay as they are.) Importing again without
/// `--force` replaces nothing; an `.eval` archive given under another
/// format is refused as the archive it is.
#[test]
fn inspect_logs_write_a_scenario_per_sample_that_passes_and_an_archive_is_no_other_format() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = repo().join("harness/import/tests/fixtures/sessions/inspect-ai");
    let out = dir.path().join("out");
    let logs: Vec<PathBuf> = [
        "inspect-ai__browser.json",
        "inspect-ai__security-guide.json",
        "inspect-ai__log_message_deduplication.eval",
        "inspect-ai__log_read_sample.eval",
        "inspect-ai-0-3-285-bash-against-reloop-mock.json",
    ]
    .map(|name| fixtures.join(name))
    .into();
    let printed = import_into(&out, &logs);
    assert!(printed.contains("inspect-ai-security-guide-3-epoch-1 (inspect:inspect-ai__security-guide.json#3-epoch-1)"), "{printed}");
    assert!(printed.contains("6 model calls, 5 tool calls (bash 5)"), "{printed}");
    assert!(printed.contains("5 model calls, 4 tool calls (web_browser_click 3, web_browser_go 1)"), "{printed}");
    let reports: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".import.json")).collect();
    assert_eq!(reports.len(), 7, "three samples and four logs of one");
    for report in &reports {
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        let lines = &report["lines"];
        let ignored: u64 = lines["ignored"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        let skipped = lines["skipped"].as_array().unwrap().len() as u64;
        assert_eq!(lines["used"].as_u64().unwrap() + ignored + skipped, lines["read"].as_u64().unwrap(), "{report}");
    }
    let runs_dir = dir.path().join("runs");
    let run = reloop(dir.path(), &["sweep", out.to_str().unwrap(), "--strategies", "roku,none", "--out", runs_dir.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "{}{}", stdout(&run), stderr(&run));
    let runs = read_rows(&runs_dir.join("runs.parquet"));
    assert_eq!(runs.len(), 14);
    assert!(runs.iter().all(|run| run["outcome"] == "final_answer" && run["divergences"] == "0"), "{runs:?}");
    let again = reloop(dir.path(), &["import", logs[1].to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("inspect-ai-security-guide-1-epoch-1.yaml, which exists already; pass --force"), "{}", stderr(&again));
    let output = reloop(dir.path(), &["import", logs[3].to_str().unwrap(), "--format", "codex", "--out", dir.path().join("x").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("a zip archive is read only as an Inspect AI `.eval` log (format inspect), not as codex"), "{}", stderr(&output));
}

/// Issue 43: one file that cannot be imported stopped the batch, and the
/// files after it were not written. Now each bad file is named with its
/// reason, the others are written, and the exit code (2) says one failed.
#[test]
fn a_batch_with_unusable_files_writes_the_others_and_names_the_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = repo().join("harness/import/tests/fixtures/sessions");
    let notes = write(dir.path(), "notes.txt", "just words\n");
    let good = fixtures.join("claude-code/spotter__short.jsonl");
    let gemini = fixtures.join("gemini-cli/ai-sessions__gemini-cli-pomodoro-timer.json");
    let out = dir.path().join("out");
    let files = [notes.to_str().unwrap(), good.to_str().unwrap(), gemini.to_str().unwrap()];
    let output = reloop(dir.path(), &["import", files[0], files[1], files[2], "--format", "claude-code", "--out", out.to_str().unwrap()]);
    let printed = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{printed}");
    assert!(printed.contains("notes.txt: read as claude-code, holds no model call"), "{printed}");
    assert!(printed.contains("ai-sessions__gemini-cli-pomodoro-timer.json: read as claude-code, holds no model call"), "{printed}");
    assert!(printed.contains("2 of 3 files not imported (named above); the others were written"), "{printed}");
    let written: Vec<String> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(written.len(), 3, "{written:?}");
    assert!(written.iter().all(|name| name.starts_with("spotter-short")), "{written:?}");
    assert!(stdout(&output).contains("wrote"), "{}", stdout(&output));
}

/// Issue 43: a cassette whose only model call failed (a real 404, an
/// unknown model) was refused, and a failed call before its retry (a real
/// Groq 400) was dropped. Each is replayed as what it was: an HTTP fault
/// with the recorded status and body, on the exchange tried next, or on one
/// standing for the call when none succeeded after it.
#[test]
fn failed_model_calls_of_a_cassette_replay_as_faults_with_their_recorded_answers() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo().join("harness/import/tests/fixtures/sessions/vcr-cassettes/failed-calls");
    let out = dir.path().join("out");
    let printed = import_into(
        &out,
        &[root.join("pydantic-ai__test_model_name_suggestion_openai-chat.yaml"), root.join("pydantic-ai__test_groq_tool_use_failed_error.yaml")],
    );
    assert!(printed.contains("interaction 0: status 404: a failed call, replayed as a fault"), "{printed}");
    let not_found = out.join("pydantic-ai-test-model-name-suggestion-openai-chat.yaml");
    let run = reloop(dir.path(), &["run", not_found.to_str().unwrap(), "--out", dir.path().join("runs").to_str().unwrap()]);
    let runs = read_rows(&dir.path().join("runs/runs.parquet"));
    assert_eq!(runs[0]["outcome"], "llm_error", "{}{}", stdout(&run), stderr(&run));
    assert!(runs[0]["error"].contains("404"), "{:?}", runs[0]);
    let chat = |model: &str, content: &str| serde_json::json!({ "model": model, "messages": [{ "role": "user", "content": content }] }).to_string();
    let server = crate::util::Serve::start_with_flags(&["--scenario", not_found.to_str().unwrap()], std::process::Stdio::null());
    for attempt in 0..3 {
        let (head, body) = crate::util::post(
            &server.addr,
            "/s/pydantic-ai-test-model-name-suggestion-openai-chat/r/1/v1/chat/completions",
            "",
            &chat("gpt-5.2-proo", "hello"),
        );
        assert!(head.contains(" 404 "), "attempt {attempt}: {head}");
        assert!(String::from_utf8_lossy(&body).contains("The model `gpt-5.2-proo` does not exist"), "{}", String::from_utf8_lossy(&body));
    }
    drop(server);
    let groq = std::fs::read_to_string(out.join("pydantic-ai-test-groq-tool-use-failed-error.yaml")).unwrap();
    let scenario: serde_json::Value = serde_saphyr::from_str(&groq).unwrap();
    let faults = scenario["faults"].as_array().unwrap();
    assert_eq!(
        (faults.len(), &faults[0]["exchange"], &faults[0]["times"], &faults[0]["http"]["status"]),
        (1, &serde_json::json!(0), &serde_json::json!(1), &serde_json::json!(400)),
        "{groq}"
    );
    assert!(faults[0]["http"]["body"].as_str().unwrap().contains("tool_use_failed"), "{groq}");
}

/// Issue 43: a recording written as JSON was taken for a scenario by `run`
/// ("unknown field `format`"), as a YAML one given by name was; both are
/// named as recordings, and `serve` replays the JSON one.
#[test]
fn a_recording_given_where_a_scenario_goes_is_named_as_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    let json = write(dir.path(), "rec.json", "{\"format\": \"reloop.recording/v1\", \"exchanges\": [{\"text\": \"Hello.\"}]}\n");
    let yaml = write(dir.path(), "rec.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Hello.\n");
    for recording in [&json, &yaml] {
        let output = reloop(dir.path(), &["run", recording.to_str().unwrap(), "--out", "out"]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains("is a recording (`format: reloop.recording/...`), not a scenario"), "{}", stderr(&output));
    }
    let server = crate::util::Serve::start_with(&json, &[], std::process::Stdio::null());
    let (_, body) = crate::util::post(&server.addr, "/v1/chat/completions", "", r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#);
    assert!(String::from_utf8_lossy(&body).contains("Hello."), "{}", String::from_utf8_lossy(&body));
}

/// The recorded main exchanges of each imported scenario, with their calls.
fn recorded_calls(suite: &Path) -> BTreeMap<String, (usize, Vec<(String, String)>)> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(suite).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().unwrap().to_str().unwrap().strip_suffix(".recording.yaml").map(str::to_owned) else { continue };
        let recording: serde_json::Value = serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let main: Vec<&serde_json::Value> = recording["exchanges"].as_array().unwrap().iter().filter(|e| e.get("purpose").is_none()).collect();
        let calls = main
            .iter()
            .flat_map(|e| e.get("parts").and_then(|p| p.as_array()).cloned().unwrap_or_default())
            .filter(|part| part["type"] == "tool_call")
            .map(|call| {
                let arguments = match call.get("arguments") {
                    Some(serde_json::Value::String(raw)) => raw.clone(),
                    Some(other) => other.to_string(),
                    // v2 leaves out the default, empty arguments.
                    None => "{}".to_owned(),
                };
                (call["name"].as_str().unwrap().to_owned(), arguments)
            })
            .collect();
        out.insert(name, (main.len(), calls));
    }
    out
}

/// Each imported scenario's `ending.outcome`.
fn recorded_endings(suite: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(suite).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_str().unwrap();
        if !file.ends_with(".yaml") || file.ends_with(".recording.yaml") {
            continue;
        }
        let scenario: serde_json::Value = serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        out.insert(scenario["name"].as_str().unwrap().to_owned(), scenario["ending"]["outcome"].as_str().unwrap().to_owned());
    }
    out
}

#[test]
fn imported_sessions_replay_their_calls_and_stay_step_aligned_under_every_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let suite = repo().join("scenarios/imported");
    let output = reloop(&repo(), &["sweep", suite.to_str().unwrap(), "--strategies", "roku,opencode,codex,masking,none", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "every expectation (outcome, the recorded tool-call sequence) holds: {}{}", stdout(&output), stderr(&output));
    let recorded = recorded_calls(&suite);
    let endings = recorded_endings(&suite);
    for ending in ["final_answer", "stopped", "submitted", "llm_error"] {
        assert!(endings.values().any(|e| e == ending), "the suite holds a session ending {ending}: {endings:?}");
    }
    let runs = read_rows(&out.join("runs.parquet"));
    assert_eq!(runs.len(), recorded.len() * 5);
    for run in &runs {
        let (exchanges, calls) = &recorded[&run["scenario"]];
        assert_eq!(run["divergences"], "0", "{run:?}");
        assert_eq!(run["outcome"], endings[&run["scenario"]], "the replay ends as the session did: {run:?}");
        // Step alignment: every main exchange answered a main request, none a summary request;
        // the exchange of a failed last call answers with its fault, which uses no step.
        let failed = matches!(endings[&run["scenario"]].as_str(), "llm_error" | "context_exceeded");
        assert_eq!(run["steps_used"], (exchanges - usize::from(failed)).to_string(), "{} under {}", run["scenario"], run["variant"]);
        assert_eq!(run["tool_calls"], calls.len().to_string(), "{run:?}");
        assert!(run["source"].contains(':') && run["source"] != "null", "source names format:file: {run:?}");
    }
    assert!(recorded.values().any(|(exchanges, _)| *exchanges >= 20), "the suite holds sessions of at least 20 steps");
    agent_compactions_and_recorded_cache_writes_are_reported(&suite, &out, &runs);
    // The calls the loop started are the recorded ones, with the recorded arguments, in order.
    let events = read_rows(&out.join("events.parquet"));
    for (scenario, (_, calls)) in &recorded {
        for variant in ["none", "roku"] {
            let started: Vec<(String, String)> = events
                .iter()
                .filter(|e| &e["scenario"] == scenario && e["variant"] == variant && e["kind"] == "tool_start")
                .map(|e| {
                    let payload: serde_json::Value = serde_json::from_str(&e["payload"]).unwrap();
                    (payload["tool"].as_str().unwrap().to_owned(), payload["arguments"].as_str().unwrap().to_owned())
                })
                .collect();
            assert_eq!(&started, calls, "{scenario} under {variant}");
        }
    }
}

/// The agents' own compactions (Claude Code, pi, Codex, OpenHands) are
/// `agent_compaction` events with their real sizes under every strategy,
/// and their savings the `tokens_saved_recorded` column beside the
/// strategy's `tokens_saved_total`; Claude Code's 1-hour cache writes fill
/// `cache_write_1h_tokens_recorded`, which recorded pricing charges at the
/// 1-hour rate. The OTLP export shows the agents' compactions as
/// `reloop.compaction` span events of strategy `recorded`.
fn agent_compactions_and_recorded_cache_writes_are_reported(suite: &Path, out: &Path, runs: &[crate::tables::Row]) {
    let events = read_rows(&out.join("events.parquet"));
    let import_report =
        |name: &str| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(suite.join(format!("{name}.import.json"))).unwrap()).unwrap() };
    let formats = [
        "constructed-claude-code-compaction",
        "constructed-pi-compaction",
        "constructed-codex-compaction",
        "constructed-openhands-condensation",
        "spotter-ae4a77f8-lines-1481-1531",
        "spotter-8463c716-lines-714-743",
        "pi-mono-compact-2638daee-line-1-and-lines-670-674",
    ];
    for scenario in formats {
        let report = import_report(scenario);
        let compaction = &report["compactions"][0];
        for run in runs.iter().filter(|r| r["scenario"] == scenario) {
            assert_eq!(run["tokens_saved_recorded"], report["tokens_saved_recorded"].to_string(), "{run:?}");
            let event = events
                .iter()
                .find(|e| e["scenario"] == scenario && e["variant"] == run["variant"] && e["kind"] == "agent_compaction")
                .expect("the agent's compaction is an event");
            assert_eq!(
                (event["tokens_before"].as_str(), event["tokens_after"].as_str()),
                (compaction["tokens_before"].to_string().as_str(), compaction["tokens_after"].to_string().as_str())
            );
            assert_eq!(event["step"], (compaction["after_calls"].as_u64().unwrap() + 1).to_string());
        }
    }
    assert_eq!(import_report("constructed-claude-code-compaction")["compactions"][0]["tokens_before"], 158_977, "Claude Code's preTokens");
    assert_eq!(
        runs.iter().find(|r| r["scenario"] == "agent-history-codex-session-01-redacted").unwrap()["tokens_saved_recorded"],
        "null",
        "no compaction, no figure"
    );
    let short = runs.iter().find(|r| r["scenario"] == "spotter-short" && r["variant"] == "none").unwrap();
    let written = import_report("spotter-short")["usage_recorded"]["cache_write_1h_tokens"].as_u64().unwrap();
    assert!(written > 0);
    assert_eq!(short["cache_write_1h_tokens_recorded"], written.to_string(), "{short:?}");
    let traces = out.join("traces.json");
    let output = reloop(&repo(), &["export", out.to_str().unwrap(), "--otlp", traces.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let recorded = std::fs::read_to_string(&traces).unwrap().matches(r#"{"key":"reloop.strategy","value":{"stringValue":"recorded"}}"#).count();
    let compactions: usize = runs.iter().map(|r| import_report(&r["scenario"])["compactions"].as_array().map_or(0, Vec::len)).sum();
    assert_eq!(recorded, compactions, "one span event per agent compaction and run");
}

/// A real session that compacted, cut to its compaction and what followed
/// (SOURCES.md says where), imported and replayed through the binary: the
/// agent's compaction is an `agent_compaction` event at step 1 with the size
/// the agent wrote before it and the billed prompt of its first call after,
/// and the run's `tokens_saved_recorded` is that difference on every call
/// after it. The sizes are the source's own numbers, read off the file.
fn a_real_compaction_replays_as_an_event(fixture: &str, scenario: &str, tokens_before: u64, tokens_after: u64, calls_after: u64) {
    let (compactions, saved) = replayed_compactions(fixture, scenario);
    assert_eq!(compactions, [[1, tokens_before, tokens_after]]);
    assert_eq!(saved, ((tokens_before - tokens_after) * calls_after).to_string());
}

/// Imports `fixture` and replays it through the binary, which must pass as
/// imported: its `agent_compaction` events as `[step, tokens_before,
/// tokens_after]`, and the run's `tokens_saved_recorded`.
fn replayed_compactions(fixture: &str, scenario: &str) -> (Vec<[u64; 3]>, String) {
    let dir = tempfile::tempdir().unwrap();
    import_into(dir.path(), &[repo().join("harness/import/tests/fixtures/sessions").join(fixture)]);
    let out = dir.path().join("run");
    let output = reloop(&repo(), &["run", dir.path().join(format!("{scenario}.yaml")).to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "the session replays and passes as imported: {}{}", stdout(&output), stderr(&output));
    let events = read_rows(&out.join("events.parquet"));
    let number = |e: &Row, key: &str| e[key].parse::<u64>().unwrap_or_else(|_| panic!("{key}: {e:?}"));
    let compactions =
        events.iter().filter(|e| e["kind"] == "agent_compaction").map(|e| [number(e, "step"), number(e, "tokens_before"), number(e, "tokens_after")]).collect();
    let runs = read_rows(&out.join("runs.parquet"));
    (compactions, runs[0]["tokens_saved_recorded"].clone())
}

/// Claude Code 2.1.39's manual `/compact` (marot/spotter): `preTokens`
/// 142,431; its first call after bills 3 + 21,448 read + 23,812 written.
#[test]
fn a_real_claude_code_compact_boundary_is_an_event_with_its_pre_tokens_and_the_next_billed_prompt() {
    a_real_compaction_replays_as_an_event("claude-code/spotter__ae4a77f8__lines-1481-1531.jsonl", "spotter-ae4a77f8-lines-1481-1531", 142_431, 45_263, 3);
}

/// Claude Code 2.1.39's automatic compaction (marot/spotter): `preTokens`
/// 167,731; its first call after bills 3 + 21,445 read + 21,155 written. The
/// session goes on from the summary alone, which is then the task.
#[test]
fn a_real_claude_code_auto_compaction_is_an_event_and_its_summary_the_task() {
    a_real_compaction_replays_as_an_event("claude-code/spotter__8463c716__lines-714-743.jsonl", "spotter-8463c716-lines-714-743", 167_731, 42_603, 2);
    let scenario = std::fs::read_to_string(repo().join("scenarios/imported/spotter-8463c716-lines-714-743.yaml")).unwrap();
    assert!(scenario.contains("task: |-\n  This session is being continued from a previous conversation"), "{}", &scenario[..600]);
}

/// pi's v1 `compaction` entry (badlogic/pi-mono's own session):
/// `tokensBefore` 184,525; its first call after bills 3 + 32,559 written.
#[test]
fn a_real_pi_compaction_entry_is_an_event_with_its_tokens_before_and_the_next_billed_prompt() {
    a_real_compaction_replays_as_an_event(
        "pi/pi-mono__compact-2638daee__line-1-and-lines-670-674.jsonl",
        "pi-mono-compact-2638daee-line-1-and-lines-670-674",
        184_525,
        32_562,
        2,
    );
}

/// OpenHands SDK 1.58.2's `Condensation` (a conversation folder the real SDK
/// wrote against reloop's mock, model replies authored): the agent's fifth
/// call billed 3,916 prompt tokens, its first after the condensation (step 6)
/// 3,827; the condenser's own 661-token call is not one of the agent's.
#[test]
fn a_real_openhands_sdk_condensation_is_an_event_with_the_prompt_before_and_the_next_billed_one() {
    let name = "openhands-sdk-1-58-2-condensation-against-reloop-mock";
    let (compactions, saved) = replayed_compactions(&format!("openhands/{name}"), name);
    assert_eq!((compactions, saved.as_str()), (vec![[6, 3_916, 3_827]], "178"));
}

/// Rollouts the real Codex CLI 0.169.0 wrote while reloop's mock replayed
/// scenarios/agents/codex-compaction.yaml (model replies authored, agent
/// and file real). Remote (`/responses/compact`): before is the compaction
/// request's own prompt (`latest_token_usage_record`), 8,558 then 5,630;
/// after the next call's billed 1,965 then 2,005. Local: the summary turn
/// (`compaction_output`) is the compaction's call, 7,179 then 8,278 before,
/// 5,981 after each; the session keeps its 3 calls.
#[test]
fn a_real_codex_0_169_rollout_compaction_is_an_event_with_the_compacted_prompt_and_the_next_billed_one() {
    let (remote, saved) = replayed_compactions("codex/codex-0.169-remote-compaction-rollout.jsonl", "codex-0-169-remote-compaction-rollout");
    assert_eq!((remote, saved.as_str()), (vec![[2, 8_558, 1_965], [3, 5_630, 2_005]], "16811"));
    let (local, saved) = replayed_compactions("codex/codex-0.169-local-compaction-rollout.jsonl", "codex-0-169-local-compaction-rollout");
    assert_eq!((local, saved.as_str()), (vec![[2, 7_179, 5_981], [3, 8_278, 5_981]], "4693"));
    let report = std::fs::read_to_string(repo().join("scenarios/imported/codex-0-169-remote-compaction-rollout.import.json")).unwrap();
    assert!(report.contains("keep no readable summary") && !report.contains("never compacted"), "{report}");
}

/// An export the real OpenCode 1.18.33 wrote after reloop's mock refused its
/// third request for its 12,000-token window (model replies authored): its
/// `compaction` part and `summary` message are a compaction after call 2
/// (the event at step 3), whose billed prompt was 3,598 + 7,168 read tokens;
/// the first call after it billed 185 + 7,168 read. The refused call left an empty assistant
/// message, no call.
#[test]
fn a_real_opencode_compaction_is_an_event_with_the_prompts_of_the_calls_around_it() {
    let name = "opencode-1-18-33-compaction-on-overflow-against-reloop-mock";
    let (compactions, saved) = replayed_compactions(&format!("opencode/{name}.json"), name);
    assert_eq!((compactions, saved.as_str()), (vec![[3, 10_766, 7_353]], "3413"));
}

#[test]
fn summary_requests_never_consume_main_exchanges_even_when_every_strategy_compacts() {
    // The sessions of 20+ steps in a 6,000-token window: every strategy
    // that compacts asks for summaries, which the recording's compaction
    // exchanges answer; each main exchange still answers a main request.
    // Gemini CLI's session gets 20,000: its 16 tool declarations alone are
    // about 5,000 tokens and one of its results about 10,000, so a smaller
    // window ends it on a context overflow whatever the strategy.
    let dir = tempfile::tempdir().unwrap();
    let suite = repo().join("scenarios/imported");
    let recorded = recorded_calls(&suite);
    let long: Vec<&String> = recorded.iter().filter(|(_, (exchanges, _))| *exchanges >= 20).map(|(name, _)| name).collect();
    assert!(long.len() >= 2, "{long:?}");
    for name in &long {
        let window = if name.starts_with("aim-") { "context_window: 20000" } else { "context_window: 6000" };
        let scenario = std::fs::read_to_string(suite.join(format!("{name}.yaml"))).unwrap().replace("context_window: 200000", window);
        std::fs::write(dir.path().join(format!("{name}.yaml")), scenario).unwrap();
        std::fs::copy(suite.join(format!("{name}.recording.yaml")), dir.path().join(format!("{name}.recording.yaml"))).unwrap();
    }
    let out = dir.path().join("sweep");
    let output = reloop(&repo(), &["sweep", dir.path().to_str().unwrap(), "--strategies", "roku,opencode,codex,masking", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let steps = read_rows(&out.join("steps.parquet"));
    let summaries = steps.iter().filter(|s| s["purpose"] != "main").count();
    assert!(summaries > 0, "the small window makes the strategies ask for summaries");
    for run in read_rows(&out.join("runs.parquet")) {
        assert_eq!(run["steps_used"], recorded[&run["scenario"]].0.to_string(), "{} under {}", run["scenario"], run["variant"]);
        assert_eq!(run["divergences"], "0", "{run:?}");
    }
}

#[test]
fn every_cassette_imports_as_neutral_and_raw_v2_with_a_skeleton_gzip_bodies_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo().join("harness/import/tests/fixtures/sessions/vcr-cassettes");
    let mut cassettes = Vec::new();
    for api in ["openai-chat", "openai-responses", "anthropic-messages", "gemini"] {
        cassettes
            .extend(std::fs::read_dir(root.join(api)).unwrap().map(|e| e.unwrap().path()).filter(|path| path.extension().is_some_and(|ext| ext == "yaml")));
    }
    cassettes.sort();
    assert_eq!(cassettes.len(), 18);
    import_into(dir.path(), &cassettes);
    for cassette in &cassettes {
        let name = reloop_name(cassette);
        let neutral = std::fs::read_to_string(dir.path().join(format!("{name}.recording.yaml"))).unwrap();
        let raw = std::fs::read_to_string(dir.path().join(format!("{name}.raw.recording.yaml"))).unwrap();
        let scenario = std::fs::read_to_string(dir.path().join(format!("{name}.yaml"))).unwrap();
        assert!(neutral.contains("format: reloop.recording/v2") && neutral.contains("raw:"), "{name}: parts and raw bytes");
        assert!(!neutral.contains("replay: raw"), "{name}");
        assert!(raw.contains("replay: raw"), "{name}");
        assert!(scenario.contains("task:") && scenario.contains("recording:"), "{name}");
    }
    // The `!!binary` gzip body: the SSE text is only readable after decompressing.
    let gzip = std::fs::read_to_string(dir.path().join("llm-anthropic-test-tools-gzip-body.recording.yaml")).unwrap();
    assert_eq!(gzip.matches("type: tool_call").count(), 2, "two parallel tool calls read from the gzip body: {gzip}");
    // Gemini: the signed call, its signature kept beside it; the skeleton speaks Gemini.
    let signed = std::fs::read_to_string(dir.path().join("pydantic-ai-test-google-streaming-tool-call-thought-signature.recording.yaml")).unwrap();
    assert!(signed.contains("name: get_country") && signed.contains("signature:") && signed.contains("EpwICpkIAXLI2n"), "{signed}");
    let skeleton = std::fs::read_to_string(dir.path().join("pydantic-ai-test-google-model-stream.yaml")).unwrap();
    assert!(skeleton.contains("wire: gemini") && skeleton.contains("What is the capital of France?"), "{skeleton}");
}

fn reloop_name(path: &Path) -> String {
    let stem = path.file_stem().unwrap().to_string_lossy().to_lowercase();
    let mut name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect();
    while name.contains("--") {
        name = name.replace("--", "-");
    }
    name.trim_matches('-').to_owned()
}

#[test]
fn a_cassette_loses_its_credential_headers_and_user_patterns() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = repo().join("harness/import/tests/fixtures/sessions/vcr-cassettes/openai-chat/simonw-llm__test_tool_use_basic.yaml");
    let out = dir.path().to_string_lossy().into_owned();
    let output = reloop(&repo(), &["import", cassette.to_str().unwrap(), "--out", &out, "--redact-body", "gpt-4o-mini-[0-9-]+"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut written = 0;
    for file in std::fs::read_dir(dir.path()).unwrap() {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
        for secret in ["__cf_bm", "user-r3e61fpak04cbaokp5buoae4", "gpt-4o-mini-2024-07-18"] {
            assert!(!text.contains(secret), "{secret} reached an imported file:\n{text}");
        }
        written += 1;
    }
    assert_eq!(written, 3, "neutral and raw recordings and a skeleton");
    let raw = std::fs::read_to_string(dir.path().join("simonw-llm-test-tool-use-basic.raw.recording.yaml")).unwrap();
    assert!(raw.contains("header:set-cookie") && raw.contains("body:#1:"), "{raw}");
}

/// A real cassette with what real test suites record around the model
/// calls: a model listing first, and a rate-limited call before its retry.
#[test]
fn a_cassette_keeps_its_successful_model_calls_and_names_what_it_skips() {
    let dir = tempfile::tempdir().unwrap();
    let real =
        std::fs::read_to_string(repo().join("harness/import/tests/fixtures/sessions/vcr-cassettes/openai-chat/simonw-llm__test_tool_use_basic.yaml")).unwrap();
    let noise = r#"interactions:
- request:
    body: null
    headers: {}
    method: GET
    uri: https://api.openai.com/v1/models
  response:
    body:
      string: '{"object":"list","data":[]}'
    headers: {}
    status:
      code: 200
      message: OK
- request:
    body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"What is 1231 * 2331?"}]}'
    headers: {}
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}'
    headers: {}
    status:
      code: 429
      message: Too Many Requests
"#;
    let cassette = write(dir.path(), "noisy.yaml", &real.replacen("interactions:\n", noise, 1));
    let out = dir.path().join("out");
    let output = reloop(dir.path(), &["import", cassette.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let printed = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{printed}{}", stderr(&output));
    assert!(printed.contains("2 exchanges") && printed.contains("interaction 0: `/v1/models`") && printed.contains("interaction 1: status 429"), "{printed}");
    let run = reloop(dir.path(), &["run", out.join("noisy.yaml").to_str().unwrap(), "--out", dir.path().join("report").to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "the skeleton replays: {}", stdout(&run));
}

/// vcrpy keeps a request body it cannot store as text as `!!binary`.
#[test]
fn a_binary_request_body_is_decoded() {
    let dir = tempfile::tempdir().unwrap();
    // The base64 of `{"model":"gpt-4o-mini","messages":[{"role":"system",
    // "content":"Be brief."},{"role":"user","content":"Say hi."}]}`.
    let request = "eyJtb2RlbCI6ImdwdC00by1taW5pIiwibWVzc2FnZXMiOlt7InJvbGUiOiJzeXN0ZW0iLCJjb250ZW50IjoiQmUgYnJpZWYuIn0seyJyb2xlIjoidXNlciIsImNvbnRlbnQiOiJTYXkgaGkuIn1dfQ==";
    let response = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#;
    let cassette = format!(
        "interactions:\n- request:\n    body: !!binary |\n      {}\n    headers: {{}}\n    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n  response:\n    body:\n      string: '{response}'\n    headers: {{}}\n    status:\n      code: 200\n      message: OK\nversion: 1\n",
        request
    );
    let file = write(dir.path(), "binary.yaml", &cassette);
    let out = dir.path().join("out");
    let output = reloop(dir.path(), &["import", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let skeleton = std::fs::read_to_string(out.join("binary.yaml")).unwrap();
    assert!(skeleton.contains("system: Be brief.") && skeleton.contains("task: Say hi."), "{skeleton}");
}

#[test]
fn a_session_ending_on_a_failed_call_replays_that_failure_under_every_strategy() {
    // A real Codex rollout that ends after a tool round, with the error
    // event Codex logs when the next call fails appended: the context
    // overflowing, or another provider failure.
    let rollout =
        repo().join("harness/import/tests/fixtures/sessions/codex/codemie-code__rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl");
    let text = std::fs::read_to_string(rollout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let error = |message: &str| {
        format!("{{\"timestamp\":\"2026-01-02T16:40:00.000Z\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"error\",\"message\":\"{message}\"}}}}\n")
    };
    let overflow = write(
        dir.path(),
        "overflow.jsonl",
        &(text.clone() + &error("Your input exceeds the context window of this model. Please adjust your input and try again.")),
    );
    let failed = write(dir.path(), "failed.jsonl", &(text + &error("503 Service Unavailable")));
    let suite = dir.path().join("suite");
    import_into(&suite, &[overflow, failed]);
    let out = dir.path().join("sweep");
    let output = reloop(&repo(), &["sweep", suite.to_str().unwrap(), "--strategies", "roku,opencode,codex,masking,none", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let endings = recorded_endings(&suite);
    assert_eq!(endings["overflow"], "context_exceeded");
    assert_eq!(endings["failed"], "llm_error");
    for run in read_rows(&out.join("runs.parquet")) {
        assert_eq!(run["outcome"], endings[&run["scenario"]], "{run:?}");
        assert_eq!(run["passed"], "true", "{run:?}");
        assert_eq!(run["tool_calls"], "3", "the recorded calls all ran before the failed call: {run:?}");
        assert_eq!(run["divergences"], "0", "{run:?}");
    }
}

/// Regression: a session whose only model call failed was given a made-up
/// final answer before the failed call, so it replayed as `final_answer`.
#[test]
fn a_session_whose_only_model_call_failed_replays_that_error() {
    let dir = tempfile::tempdir().unwrap();
    let session = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-02T10:00:00.000Z","cwd":"/work"}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-02T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"List the files."}],"timestamp":1}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-02T10:00:02.000Z","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"error","errorMessage":"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}","timestamp":2}}"#,
    ];
    let file = write(dir.path(), "only-failed.jsonl", &(session.join("\n") + "\n"));
    let suite = dir.path().join("suite");
    import_into(&suite, &[file]);
    assert_eq!(recorded_endings(&suite)["only-failed"], "llm_error");
    let out = dir.path().join("run");
    let output = reloop(&repo(), &["run", suite.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let runs = read_rows(&out.join("runs.parquet"));
    assert_eq!((runs[0]["outcome"].as_str(), runs[0]["passed"].as_str()), ("llm_error", "true"), "{runs:?}");
}

/// The bundled real sessions of each ending, copied into a folder and run
/// as imported.
fn run_bundled(dir: &Path, names: &[&str]) -> PathBuf {
    let suite = repo().join("scenarios/imported");
    for name in names {
        for file in [format!("{name}.yaml"), format!("{name}.recording.yaml")] {
            std::fs::copy(suite.join(&file), dir.join(&file)).unwrap();
        }
    }
    let out = dir.join("run");
    let output = reloop(&repo(), &["run", dir.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    out
}

/// One real bundled session per ending replays to that ending and passes:
/// an answer (spotter's slash-command session), stopped after a tool round
/// (spotter tool_heavy), a submit call (SWE-agent), a provider error
/// (openclaw's pi session, whose last model call failed with `fetch
/// failed`: no status recorded, so the fault is a 500 through the retries),
/// a context overflow (the session file real pi 0.73.1 wrote against the
/// mock's `scenarios/agents/pi-context-overflow.yaml`: its second call
/// refused with Anthropic's 400 "prompt is too long"; and the folder the
/// real OpenHands SDK 1.58.2 wrote when the mock's 4,000-token window
/// refused its fifth call, an `LLMContextWindowExceedError`).
#[test]
fn a_real_session_of_each_ending_replays_to_that_ending() {
    let dir = tempfile::tempdir().unwrap();
    let endings = [
        ("spotter-subagent", "final_answer", 12),
        ("spotter-tool-heavy", "stopped", 4),
        ("swe-agent-function-calling-simple", "submitted", 5),
        ("openclaw-session-8555a0a4-first-9-lines", "llm_error", 0),
        ("pi-context-overflow-against-reloop-mock", "context_exceeded", 1),
        ("openhands-sdk-1-58-2-context-overflow-against-reloop-mock", "context_exceeded", 4),
    ];
    let out = run_bundled(dir.path(), &endings.map(|(name, _, _)| name));
    let runs = read_rows(&out.join("runs.parquet"));
    for (name, outcome, steps) in endings {
        let run = runs.iter().find(|r| r["scenario"] == name).unwrap_or_else(|| panic!("{name}: {runs:?}"));
        assert_eq!((run["outcome"].as_str(), run["passed"].as_str()), (outcome, "true"), "{run:?}");
        assert_eq!(run["steps_used"], steps.to_string(), "{run:?}");
    }
}

/// The user messages of one run, in the order the loop first sent them,
/// with the call that first carried each.
fn user_messages_sent(out: &Path, scenario: &str) -> Vec<(u64, String)> {
    let mut steps: Vec<crate::tables::Row> = read_rows(&out.join("steps.parquet")).into_iter().filter(|s| s["scenario"] == scenario).collect();
    steps.sort_by_key(|row| row["call_index"].parse::<u64>().unwrap());
    let mut users = Vec::new();
    for row in steps.iter().filter(|row| row["messages_first_seen"] != "null") {
        let first: Vec<serde_json::Value> = serde_json::from_str(&row["messages_first_seen"]).unwrap();
        for message in first.iter().filter(|m| m["body"]["role"] == "user") {
            users.push((row["call_index"].parse().unwrap(), message["body"]["text"].as_str().unwrap_or_default().to_owned()));
        }
    }
    users
}

/// Claude Code's user rows reach the replay in order, whatever wrote them
/// (real sessions): a prompt slash command (its `<command-message>` row
/// and the prompt it expanded to, an `isMeta` row) is the task; after an
/// interrupt, a local command's rows (caveat, `<command-name>/mcp`,
/// `<local-command-stdout>`) and the typed follow-up are the next user
/// message, sent with the call after the tool round they followed. The
/// `system` `local_command` rows (the screen's) are not sent.
#[test]
fn slash_commands_local_commands_and_typed_follow_ups_are_delivered_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_bundled(dir.path(), &["spotter-subagent", "spotter-tool-heavy"]);
    let users = user_messages_sent(&out, "spotter-subagent");
    assert_eq!(users.len(), 2, "{users:?}");
    let (task, follow_up) = (&users[0], &users[1]);
    assert_eq!(task.0, 0);
    assert!(task.1.starts_with("<command-message>handgemacht:create-beads</command-message>"), "{task:?}");
    assert!(task.1.contains("Create beads (epic + tasks + dependencies)"), "the command's prompt follows it: {task:?}");
    assert_eq!((follow_up.0, follow_up.1.as_str()), (8, "[Request interrupted by user]\n\ncreate the beads"), "sent after the 8th call's tool round");
    let users = user_messages_sent(&out, "spotter-tool-heavy");
    let texts: Vec<&str> = users.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(texts.len(), 2, "{users:?}");
    assert_eq!(texts[0], "start phoenix in background");
    let order = ["[Request interrupted by user]", "<local-command-caveat>", "<command-name>/mcp", "Reconnected to tidewave.", "scrolling back in xterm.js"];
    let at: Vec<usize> = order.iter().map(|part| texts[1].find(part).unwrap_or_else(|| panic!("{part} in {:?}", texts[1]))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "in the session's order: {:?}", texts[1]);
    assert!(!texts[1].contains("MCP dialog dismissed"), "a system local_command row is not sent");
}

/// One pi session fixture, copied into `dir` as `name`.
fn session_named(dir: &Path, name: &str) -> PathBuf {
    let fixture = session_fixtures().into_iter().find(|f| f.to_string_lossy().contains("/pi/")).unwrap();
    let copy = dir.join(name);
    std::fs::copy(fixture, &copy).unwrap();
    copy
}

/// Regression (issue 28): `import` overwrote an edited scenario (exit 0),
/// `Session.jsonl` and `session.jsonl` both became `session.*` (the second
/// replacing the first), and `___.jsonl` became hidden `.yaml` files that
/// `run DIR/` skips. Each is refused now, before anything is written.
#[test]
fn import_refuses_to_overwrite_to_merge_two_sources_or_to_write_a_hidden_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = |files: &[&Path], extra: &[&str]| {
        let mut args = vec!["import"];
        args.extend(files.iter().map(|f| f.to_str().unwrap()));
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(extra);
        reloop(dir.path(), &args)
    };
    let lower = session_named(dir.path(), "session.jsonl");
    let upper = session_named(&folder(dir.path(), "other"), "Session.jsonl");
    let both = run(&[&lower, &upper], &[]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert!(stderr(&both).contains("would become scenario `session`") && stderr(&both).contains(lower.to_str().unwrap()), "{}", stderr(&both));
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(), "nothing written");

    let hidden = session_named(dir.path(), "___.jsonl");
    let refused = run(&[&hidden], &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("no scenario name can be made"), "{}", stderr(&refused));

    assert_eq!(run(&[&lower], &[]).status.code(), Some(0));
    let scenario = out.join("session.yaml");
    std::fs::write(&scenario, "edited by hand\n").unwrap();
    let again = run(&[&lower], &[]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains(&format!("would replace {}", scenario.display())) && stderr(&again).contains("--force"), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(&scenario).unwrap(), "edited by hand\n");
    assert_eq!(run(&[&lower], &["--force"]).status.code(), Some(0));
    assert_ne!(std::fs::read_to_string(&scenario).unwrap(), "edited by hand\n");
    let names: Vec<String> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|name| !name.starts_with('.')), "{names:?}");
}

/// Regression (issue 28): `import` read a FIFO forever and `/dev/zero`
/// until memory ran out; `--system` and `--tools` had no size limit. Every
/// input is checked as scenarios are: a regular file within the limit.
#[test]
fn import_sources_system_and_tools_must_be_regular_files_within_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("session.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let session = session_named(&folder(dir.path(), "s"), "real.jsonl");
    let big = write(dir.path(), "system.txt", &"x".repeat(2000));
    let cases: [(Vec<&str>, &str); 4] = [
        (vec![fifo.to_str().unwrap()], "session.jsonl: is not a regular file"),
        (vec!["/dev/zero"], "/dev/zero: is not a regular file"),
        (vec![session.to_str().unwrap(), "--tools", "/dev/zero"], "/dev/zero: is not a regular file"),
        (vec![session.to_str().unwrap(), "--system", big.to_str().unwrap()], "larger than the input limit of 1000 bytes"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["import"];
        all.extend(&args);
        all.extend(["--out", "out"]);
        let output =
            std::process::Command::new(env!("CARGO_BIN_EXE_reloop")).current_dir(dir.path()).args(&all).env("RELOOP_MAX_INPUT_BYTES", "1000").output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(expected), "{args:?}: {}", stderr(&output));
    }
}

/// `dir/name`, made.
fn folder(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(&path).unwrap();
    path
}
