//! OpenTelemetry traces of GenAI calls (the GenAI semantic conventions),
//! one session per trace: OTLP/JSON files (one `ExportTraceServiceRequest`
//! document, or one a line as the collector's file exporter writes them),
//! OTLP protobuf files, and what `reloop import --otlp-listen` receives.
//!
//! - [`spans`] flattens the requests; [`protobuf`] reads the binary
//!   encoding into the same JSON shape first.
//! - [`messages`] reads a chat span's messages in the form its
//!   instrumentation wrote them (current attributes, v1.28–v1.36 events,
//!   OpenLLMetry's indexed attributes).
//! - [`trace`] maps one trace's spans to the session: chat spans by start
//!   time are the model calls, tool results come from the next chat span's
//!   input or from `execute_tool` spans.
//! - [`body`] decodes what an OTLP/HTTP client POSTs, for the receiver.
//!
//! The accounting unit is a span: `line` N is the file's Nth span. A line
//! of a JSON Lines file that gives no span (not JSON, not a request) is
//! counted in the first trace's account and named by its line.

pub mod body;
pub mod messages;
pub mod protobuf;
pub mod spans;
pub mod trace;

use serde_json::Value;

use crate::session::{ImportedSession, LineAccount};

/// One trace of a file and its session.
#[derive(Debug)]
pub struct Trace {
    /// The trace id, which names its scenario when the file holds several.
    pub part: String,
    /// The session.
    pub session: ImportedSession,
}

/// Whether a JSON document (or a line) is an OTLP trace request (for `--format auto`).
pub fn is_request(document: &Value) -> bool {
    spans::is_request(document)
}

/// Whether the bytes are an OTLP protobuf trace request (for `--format auto`).
pub fn is_protobuf(bytes: &[u8]) -> bool {
    protobuf::is_request(bytes)
}

/// The traces of an OTLP/JSON file: one document, or one request a line.
pub fn parse_text(text: &str) -> Vec<Trace> {
    match serde_json::from_str::<Value>(text) {
        Ok(document) => traces(vec![(1, Ok(document))]),
        Err(_) => {
            let mut account = LineAccount::default();
            let records = crate::jsonl::records(text, &mut account);
            let mut requests: Vec<(usize, Result<Value, String>)> = records.into_iter().map(|record| (record.line, Ok(record.value))).collect();
            // The lines `records` left out: blank ones are nothing, the others are named.
            requests.extend(account.skipped.into_iter().map(|note| (note.line, Err(note.reason))));
            requests.sort_by_key(|(line, _)| *line);
            traces(requests)
        }
    }
}

/// The traces of an OTLP protobuf file.
pub fn parse_protobuf(bytes: &[u8]) -> Vec<Trace> {
    traces(vec![(1, protobuf::request(bytes).map_err(|error| format!("not an OTLP protobuf ExportTraceServiceRequest: {error}")))])
}

/// The traces of `requests` (each with the line it came from, or why it
/// is none), in the order their first span comes: the receiver's entry
/// point as well as the files'.
pub fn traces(requests: Vec<(usize, Result<Value, String>)>) -> Vec<Trace> {
    let mut unit = 0;
    let mut spans: Vec<spans::Span> = Vec::new();
    let mut file = LineAccount::default();
    for (line, request) in requests {
        match request.and_then(|document| spans::spans_of(&document, &mut unit)) {
            Ok(found) if found.is_empty() => {
                file.read += 1;
                file.ignore("request without spans");
            }
            Ok(found) => spans.extend(found),
            Err(reason) => {
                file.read += 1;
                file.skip(line, format!("line {line}: {reason}: skipped"));
            }
        }
    }
    let mut order: Vec<String> = Vec::new();
    for span in &spans {
        if !order.contains(&span.trace_id) {
            order.push(span.trace_id.clone());
        }
    }
    let new_session = || ImportedSession { format: "otlp", ..ImportedSession::default() };
    let mut traces: Vec<Trace> = order
        .into_iter()
        .map(|id| {
            let mut session = new_session();
            let of_trace: Vec<spans::Span> = spans.iter().filter(|span| span.trace_id == id).cloned().collect();
            trace::read(&of_trace, &mut session);
            Trace { part: id, session }
        })
        .collect();
    if traces.is_empty() {
        traces.push(Trace { part: String::new(), session: new_session() });
    }
    let first = &mut traces[0].session.lines;
    first.read += file.read;
    first.ignored.extend(file.ignored);
    first.skipped.extend(file.skipped);
    traces
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::session::Item;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions/otlp").join(name)).unwrap()
    }

    fn calls(session: &ImportedSession) -> Vec<(String, String)> {
        session
            .items
            .iter()
            .filter_map(|item| if let Item::Assistant(turn) = item { Some(&turn.tool_calls) } else { None })
            .flatten()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect()
    }

    fn results(session: &ImportedSession) -> Vec<&str> {
        session.items.iter().filter_map(|item| if let Item::ToolResult(result) = item { Some(result.call_id.as_str()) } else { None }).collect()
    }

    #[test]
    fn a_real_openai_v2_trace_gives_every_call_its_result_and_accounts_every_span() {
        let traces = parse_text(std::str::from_utf8(&fixture("openai-v2-read-and-edit.jsonl")).unwrap());
        assert_eq!(traces.len(), 1);
        let session = &traces[0].session;
        let names: Vec<String> = calls(session).into_iter().map(|(_, name)| name).collect();
        assert_eq!(names, ["read_file", "read_file", "edit_file", "run_tests"]);
        assert_eq!(results(session), ["call_000_0", "call_001_0", "call_002_0", "call_003_0"]);
        assert_eq!(session.system.as_deref(), Some("You are a careful coding agent. Read before you edit; run the tests before you answer."));
        let turns = session.items.iter().filter(|item| matches!(item, Item::Assistant(_))).count();
        assert_eq!(turns, 5);
        let lines = &session.lines;
        assert_eq!((lines.read, lines.used, lines.accounted()), (10, 5, 10), "{lines:?}");
        assert_eq!(lines.ignored["execute_tool (its result read from the next chat span's input)"], 4);
        let Some(Item::Assistant(first)) = session.items.iter().find(|item| matches!(item, Item::Assistant(_))) else { unreachable!() };
        assert_eq!(first.usage.map(|u| (u.input_tokens, u.output_tokens)), Some((167, 17)));
        assert_eq!(first.model.as_deref(), Some("gpt-4o-2024-08-06"));
        assert_eq!(first.stop_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn the_protobuf_of_the_same_run_reads_as_its_json_lines() {
        let from_json = parse_text(std::str::from_utf8(&fixture("openai-v2-read-and-edit.jsonl")).unwrap());
        let bytes = fixture("openai-v2-read-and-edit-protobuf.pb");
        assert!(is_protobuf(&bytes));
        let from_protobuf = parse_protobuf(&bytes);
        assert_eq!(from_protobuf.len(), 1);
        assert_eq!(from_protobuf[0].part, from_json[0].part, "hex trace ids either way");
        // The same items; only their span numbers differ (the encoder groups the spans by scope).
        let (json, protobuf) = (&from_json[0].session, &from_protobuf[0].session);
        assert_eq!((calls(protobuf), results(protobuf), protobuf.items.len()), (calls(json), results(json), json.items.len()));
        assert_eq!(protobuf.system, json.system);
        assert_eq!(from_protobuf[0].session.lines.accounted(), 10);
    }

    #[test]
    fn a_real_pydantic_ai_trace_takes_results_from_its_input_and_tools_from_their_definitions() {
        let traces = parse_text(std::str::from_utf8(&fixture("pydantic-ai-read-and-edit.json")).unwrap());
        assert_eq!(traces.len(), 1);
        let session = &traces[0].session;
        assert_eq!(calls(session).len(), 4);
        assert_eq!(results(session).len(), 4);
        let declared: Vec<&str> = session.declared_tools.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(declared, ["read_file", "edit_file", "run_tests"]);
        assert_eq!(session.lines.accounted(), session.lines.read);
        assert!(session.lines.skipped.is_empty(), "{:?}", session.lines.skipped);
    }

    #[test]
    fn traces_split_by_id_in_the_order_they_start_and_a_bad_line_is_named() {
        let line = |trace: &str, span: &str| {
            format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{trace}","spanId":"{span}","name":"chat m","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"chat"}}}},{{"key":"gen_ai.output.messages","value":{{"stringValue":"[{{\"role\":\"assistant\",\"parts\":[{{\"type\":\"text\",\"content\":\"hi\"}}]}}]"}}}}]}}]}}]}}]}}"#
            )
        };
        let text = format!("{}\nnot json\n{}\n{}\n", line("b", "1"), line("a", "2"), line("b", "3"));
        let traces = parse_text(&text);
        let parts: Vec<&str> = traces.iter().map(|trace| trace.part.as_str()).collect();
        assert_eq!(parts, ["b", "a"]);
        assert_eq!(traces[0].session.lines.read, 3, "two spans and the bad line");
        assert!(traces[0].session.lines.skipped[0].reason.starts_with("line 2: not JSON"), "{:?}", traces[0].session.lines.skipped);
        assert_eq!(traces[1].session.lines.accounted(), 1);
    }

    #[test]
    fn a_chat_span_without_content_is_skipped_naming_the_switch_and_a_failed_one_is_a_provider_error() {
        let text = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[
            {"traceId":"t","spanId":"1","name":"chat gpt-4o","startTimeUnixNano":"1","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]},
            {"traceId":"t","spanId":"2","name":"chat gpt-4o","startTimeUnixNano":"2","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}],"status":{"code":2,"message":"429 rate limited"}},
            {"traceId":"t","spanId":"3","name":"GET /","startTimeUnixNano":"3","attributes":[{"key":"http.method","value":{"stringValue":"GET"}}]}
        ]}]}]}"#;
        let session = &parse_text(text)[0].session;
        assert!(session.lines.skipped[0].reason.contains("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"), "{:?}", session.lines.skipped);
        assert!(matches!(&session.items[..], [Item::ProviderError(error)] if error.status == Some(429)));
        assert_eq!(session.lines.ignored["span without gen_ai attributes"], 1);
        assert_eq!(session.lines.accounted(), 3);
    }

    #[test]
    fn older_anthropic_spans_have_their_cached_tokens_added_to_the_input() {
        let span = |attributes: &str| {
            let text = format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"t","spanId":"1","name":"chat c","attributes":[{attributes},{{"key":"gen_ai.operation.name","value":{{"stringValue":"chat"}}}},{{"key":"gen_ai.output.messages","value":{{"stringValue":"[{{\"role\":\"assistant\",\"parts\":[]}}]"}}}}]}}]}}]}}]}}"#
            );
            let session = parse_text(&text).remove(0).session;
            let Some(Item::Assistant(turn)) = session.items.first() else { panic!("{session:?}") };
            turn.usage.unwrap()
        };
        let int = |key: &str, n: u64| format!(r#"{{"key":"{key}","value":{{"intValue":"{n}"}}}}"#);
        let text = |key: &str, value: &str| format!(r#"{{"key":"{key}","value":{{"stringValue":"{value}"}}}}"#);
        let counts = [int("gen_ai.usage.input_tokens", 10), int("gen_ai.usage.output_tokens", 5), int("gen_ai.usage.cache_read.input_tokens", 100)].join(",");
        let older = span(&format!("{},{counts}", text("gen_ai.system", "anthropic")));
        assert_eq!((older.input_tokens, older.cache_read_tokens), (110, 100), "v1.36: Anthropic's own count leaves the cache out");
        let counts = [int("gen_ai.usage.input_tokens", 110), int("gen_ai.usage.output_tokens", 5), int("gen_ai.usage.cache_read.input_tokens", 100)].join(",");
        let current = span(&format!("{},{counts}", text("gen_ai.provider.name", "anthropic")));
        assert_eq!((current.input_tokens, current.cache_read_tokens), (110, 100), "current: the input counts the cache already");
    }
}
