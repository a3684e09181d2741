//! The spans of OTLP/JSON documents (`ExportTraceServiceRequest`, as the
//! OTLP spec's JSON encoding and the collector's file exporter write it, or
//! decoded from protobuf by [`super::protobuf`]), flattened with their
//! attributes as plain JSON values.
//!
//! Read as the OTLP JSON encoding allows: field names in lowerCamelCase or
//! the proto's snake_case, 64-bit integers as strings or numbers, enums as
//! numbers or names, ids in hex (the OTLP spec) or base64 (protobuf's
//! generic JSON mapping, which some exporters use): an id is only compared,
//! never decoded. `instrumentationLibrarySpans` (OTLP before 0.15) is read
//! as `scopeSpans`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// One span, where it is in the file, and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// 1-based position among the file's spans: the accounting unit.
    pub unit: usize,
    /// The trace it belongs to.
    pub trace_id: String,
    /// Its id.
    pub span_id: String,
    /// Its parent's id, if any.
    pub parent: Option<String>,
    /// Its name (`chat gpt-4o`).
    pub name: String,
    /// Start, nanoseconds since the epoch.
    pub start: u128,
    /// Its attributes, by key.
    pub attributes: BTreeMap<String, Value>,
    /// Its events in order.
    pub events: Vec<Event>,
    /// The status message when the status is an error.
    pub error: Option<String>,
}

/// A span event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its name (`gen_ai.choice`).
    pub name: String,
    /// Its attributes, by key.
    pub attributes: BTreeMap<String, Value>,
}

impl Span {
    /// The string attribute `key`.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }

    /// The integer attribute `key` (an `intValue`, or a number in a string).
    pub fn count(&self, key: &str) -> Option<u64> {
        self.attributes.get(key).and_then(|value| value.as_u64().or_else(|| value.as_str()?.parse().ok()))
    }
}

/// The field `camel` (or its snake_case form `snake`) of `value`.
fn field<'v>(value: &'v Value, camel: &str, snake: &str) -> Option<&'v Value> {
    value.get(camel).or_else(|| value.get(snake))
}

fn list<'v>(value: &'v Value, camel: &str, snake: &str) -> &'v [Value] {
    field(value, camel, snake).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Whether `document` is an `ExportTraceServiceRequest` (for `--format auto`).
pub fn is_request(document: &Value) -> bool {
    field(document, "resourceSpans", "resource_spans").is_some_and(Value::is_array)
}

/// The spans of one request, numbered on from `next_unit`; `Err` when it is
/// not a request.
pub fn spans_of(document: &Value, next_unit: &mut usize) -> Result<Vec<Span>, String> {
    if !is_request(document) {
        return Err("no `resourceSpans` list: not an OTLP ExportTraceServiceRequest".into());
    }
    let mut spans = Vec::new();
    for resource in list(document, "resourceSpans", "resource_spans") {
        let scopes = match list(resource, "scopeSpans", "scope_spans") {
            [] => list(resource, "instrumentationLibrarySpans", "instrumentation_library_spans"),
            scopes => scopes,
        };
        for scope in scopes {
            for span in list(scope, "spans", "spans") {
                *next_unit += 1;
                spans.push(span_of(span, *next_unit));
            }
        }
    }
    Ok(spans)
}

fn span_of(span: &Value, unit: usize) -> Span {
    let text = |camel: &str, snake: &str| field(span, camel, snake).and_then(Value::as_str).unwrap_or_default().to_owned();
    let parent = text("parentSpanId", "parent_span_id");
    let status = field(span, "status", "status").unwrap_or(&Value::Null);
    let failed = matches!(status.get("code"), Some(Value::Number(code)) if code.as_u64() == Some(2))
        || status.get("code").and_then(Value::as_str) == Some("STATUS_CODE_ERROR");
    Span {
        unit,
        trace_id: text("traceId", "trace_id"),
        span_id: text("spanId", "span_id"),
        parent: (!parent.is_empty()).then_some(parent),
        name: text("name", "name"),
        start: field(span, "startTimeUnixNano", "start_time_unix_nano").and_then(nanos).unwrap_or(0),
        attributes: attributes(list(span, "attributes", "attributes")),
        events: list(span, "events", "events")
            .iter()
            .map(|event| Event {
                name: field(event, "name", "name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                attributes: attributes(list(event, "attributes", "attributes")),
            })
            .collect(),
        error: failed.then(|| status.get("message").and_then(Value::as_str).unwrap_or("error").to_owned()),
    }
}

fn nanos(value: &Value) -> Option<u128> {
    value.as_u64().map(u128::from).or_else(|| value.as_str()?.parse().ok())
}

/// `KeyValue`s as a map of plain values.
fn attributes(pairs: &[Value]) -> BTreeMap<String, Value> {
    pairs.iter().filter_map(|pair| Some((pair.get("key")?.as_str()?.to_owned(), plain(pair.get("value").unwrap_or(&Value::Null))))).collect()
}

/// An `AnyValue` as plain JSON: a string, a number, a bool, a list, an object.
fn plain(value: &Value) -> Value {
    if let Some(text) = field(value, "stringValue", "string_value") {
        return text.clone();
    }
    if let Some(int) = field(value, "intValue", "int_value") {
        return match int {
            Value::String(text) => text.parse::<i64>().map_or_else(|_| int.clone(), Value::from),
            other => other.clone(),
        };
    }
    if let Some(other) = field(value, "doubleValue", "double_value").or_else(|| field(value, "boolValue", "bool_value")) {
        return other.clone();
    }
    if let Some(array) = field(value, "arrayValue", "array_value") {
        return Value::Array(list(array, "values", "values").iter().map(plain).collect());
    }
    if let Some(kvlist) = field(value, "kvlistValue", "kvlist_value") {
        return Value::Object(attributes(list(kvlist, "values", "values")).into_iter().collect::<Map<_, _>>());
    }
    field(value, "bytesValue", "bytes_value").cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn any_values_become_plain_json_in_either_field_spelling() {
        let document = json!({"resource_spans": [{"scope_spans": [{"spans": [{
            "trace_id": "5B8EFFF798038103D269B633813FC60C", "span_id": "EEE19B7EC3C1B174", "parent_span_id": "",
            "name": "chat", "start_time_unix_nano": 5, "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
            "attributes": [
                {"key": "s", "value": {"stringValue": "x"}},
                {"key": "i", "value": {"intValue": "12"}},
                {"key": "d", "value": {"doubleValue": 0.5}},
                {"key": "a", "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}}},
                {"key": "k", "value": {"kvlistValue": {"values": [{"key": "role", "value": {"stringValue": "user"}}]}}}
            ],
            "events": [{"name": "gen_ai.choice", "attributes": [{"key": "index", "value": {"intValue": 0}}]}]
        }]}]}]});
        let mut unit = 0;
        let spans = spans_of(&document, &mut unit).unwrap();
        let span = &spans[0];
        assert_eq!((span.unit, span.parent.as_deref(), span.start, span.error.as_deref()), (1, None, 5, Some("boom")));
        assert_eq!(span.attributes["i"], 12);
        assert_eq!(span.attributes["a"], json!(["stop"]));
        assert_eq!(span.attributes["k"], json!({"role": "user"}));
        assert_eq!(span.count("i"), Some(12));
        assert_eq!(span.events[0].attributes["index"], 0);
        assert!(spans_of(&json!({"spans": []}), &mut unit).is_err());
    }
}
