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
//!
//! The accounting unit is a span: `line` N is the file's Nth span. A line
//! of a JSON Lines file that gives no span (not JSON, not a request) is
//! counted in the first trace's account and named by its line.

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
