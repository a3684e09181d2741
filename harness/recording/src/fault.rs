//! Fault injection: what a scenario can make the provider do wrong, per
//! recorded exchange. A fault hits the first `times` attempts at its
//! exchange; a retry after that gets the recorded answer.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A fault as written in a scenario's `faults:` list; exactly one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// The exchange (0-based) whose attempts it hits.
    pub exchange: usize,
    /// How many attempts in a row it hits.
    #[serde(default = "one")]
    pub times: u32,
    /// Answer with this HTTP status instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpFault>,
    /// Send this many stream events, then break the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_after_events: Option<usize>,
    /// Go silent mid-stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// Replace the event after this many with a garbled line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub garble_after_events: Option<usize>,
    /// Cut every tool call's arguments in half (invalid JSON).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncate_arguments: bool,
    /// Answer with the provider's context-length error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub context_length_exceeded: bool,
    /// Send a provider error event inside the stream, after the first events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_error: Option<StreamErrorKind>,
}

fn one() -> u32 {
    1
}

/// An HTTP error reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpFault {
    /// The status, e.g. 429, 500, 503, 529.
    pub status: u16,
    /// Extra headers, e.g. `retry-after: "3"`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The body; by default the provider's own error body for the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// A silence in the middle of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stall {
    /// Events sent before the silence.
    pub after_events: usize,
    /// Its length, in seconds of the run's clock.
    pub seconds: f64,
}

pub use reloop_wire::codec::StreamErrorKind;

/// The longest virtual wait a scenario may ask for: one day. Longer waits
/// are typos (or overflow `Duration`), not tests.
pub const MAX_VIRTUAL_SECS: u64 = 86_400;

/// Why a fault spec is refused: the field (relative to the fault) and the
/// problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultError {
    /// The field inside the fault, e.g. `stall.seconds`; empty for the whole fault.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl FaultError {
    fn new(field: &str, message: impl Into<String>) -> Self {
        Self { field: field.to_owned(), message: message.into() }
    }
}

impl std::fmt::Display for FaultError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() { f.write_str(&self.message) } else { write!(f, "`{}` {}", self.field, self.message) }
    }
}

/// A validated fault.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// An HTTP error reply.
    Http(HttpFault),
    /// A stream broken after so many events.
    Cut {
        /// Events sent first.
        after_events: usize,
    },
    /// A silence before an event.
    Stall {
        /// Events sent first.
        after_events: usize,
        /// The silence.
        duration: Duration,
    },
    /// A garbled event.
    Garble {
        /// Events sent intact first.
        after_events: usize,
    },
    /// Truncated tool-call arguments.
    TruncateArguments,
    /// The context-length error.
    ContextLengthExceeded,
    /// An error event inside the stream.
    StreamError(StreamErrorKind),
}

impl FaultSpec {
    /// The one fault this spec names, or why it is not exactly one or is
    /// out of range (`times` ≥ 1, an error status 400–599, waits finite and
    /// at most [`MAX_VIRTUAL_SECS`]).
    pub fn fault(&self) -> Result<Fault, FaultError> {
        if self.times == 0 {
            return Err(FaultError::new("times", "must be at least 1"));
        }
        let mut kinds = Vec::new();
        if let Some(http) = &self.http {
            http.check()?;
            kinds.push(Fault::Http(http.clone()));
        }
        if let Some(after_events) = self.cut_after_events {
            kinds.push(Fault::Cut { after_events });
        }
        if let Some(stall) = self.stall {
            let duration = virtual_seconds(stall.seconds).ok_or_else(|| FaultError::new("stall.seconds", DURATION_RANGE))?;
            kinds.push(Fault::Stall { after_events: stall.after_events, duration });
        }
        if let Some(after_events) = self.garble_after_events {
            kinds.push(Fault::Garble { after_events });
        }
        if self.truncate_arguments {
            kinds.push(Fault::TruncateArguments);
        }
        if self.context_length_exceeded {
            kinds.push(Fault::ContextLengthExceeded);
        }
        if let Some(kind) = self.stream_error {
            kinds.push(Fault::StreamError(kind));
        }
        match kinds.len() {
            1 => Ok(kinds.remove(0)),
            0 => Err(FaultError::new(
                "",
                "names no fault: give one of `http`, `cut_after_events`, `stall`, `garble_after_events`, `truncate_arguments`, `context_length_exceeded`, `stream_error`",
            )),
            _ => Err(FaultError::new("", "names more than one fault; use one entry per fault")),
        }
    }
}

/// The range every virtual wait must be in.
const DURATION_RANGE: &str = "must be a number of seconds from 0 to 86400 (one day of virtual time)";

/// `seconds` as a duration, when finite and from 0 to a day.
fn virtual_seconds(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && (0.0..=MAX_VIRTUAL_SECS as f64).contains(&seconds)).then(|| Duration::from_secs_f64(seconds))
}

impl HttpFault {
    /// An error status, and `retry-after` / `retry-after-ms` headers the
    /// client can honour: a number within a day, or an HTTP date.
    fn check(&self) -> Result<(), FaultError> {
        if !(400..=599).contains(&self.status) {
            return Err(FaultError::new("http.status", format!("must be an error status from 400 to 599, not {}", self.status)));
        }
        for (name, value) in &self.headers {
            let scale = match name.to_ascii_lowercase().as_str() {
                "retry-after" => 1.0,
                "retry-after-ms" => 1000.0,
                _ => continue,
            };
            let in_range = match value.trim().parse::<f64>() {
                Ok(number) => virtual_seconds(number / scale).is_some(),
                Err(_) => scale == 1.0 && httpdate::parse_http_date(value.trim()).is_ok(),
            };
            if !in_range {
                let unit = if scale == 1.0 { "seconds (or an HTTP date)" } else { "milliseconds" };
                return Err(FaultError::new(
                    &format!("http.headers.{name}"),
                    format!("must be a number of {unit} within one day of virtual time, not `{value}`"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: serde_json::Value) -> FaultSpec {
        serde_json::from_value(yaml).unwrap()
    }

    #[test]
    fn exactly_one_kind() {
        assert!(spec(serde_json::json!({"exchange": 0})).fault().unwrap_err().message.contains("names no fault"));
        let two = spec(serde_json::json!({"exchange": 0, "truncate_arguments": true, "context_length_exceeded": true}));
        assert!(two.fault().unwrap_err().message.contains("more than one"));
    }

    /// `stall: { seconds: 1e20 }` and `retry-after: inf` panicked with a
    /// `Duration` overflow; they are now refused with the field named.
    #[test]
    fn out_of_range_waits_and_statuses_are_refused() {
        let field = |json: serde_json::Value| spec(json).fault().unwrap_err().field;
        assert_eq!(field(serde_json::json!({"exchange": 0, "stall": {"after_events": 1, "seconds": 1e20}})), "stall.seconds");
        assert_eq!(field(serde_json::json!({"exchange": 0, "stall": {"after_events": 1, "seconds": -1.0}})), "stall.seconds");
        for value in ["inf", "1e20", "NaN", "-3", "86401", "soon"] {
            let json = serde_json::json!({"exchange": 0, "http": {"status": 429, "headers": {"retry-after": value}}});
            assert_eq!(field(json), "http.headers.retry-after", "{value}");
        }
        let ms = serde_json::json!({"exchange": 0, "http": {"status": 429, "headers": {"retry-after-ms": "1e12"}}});
        assert_eq!(field(ms), "http.headers.retry-after-ms");
        assert_eq!(field(serde_json::json!({"exchange": 0, "http": {"status": 200}})), "http.status");
        assert_eq!(field(serde_json::json!({"exchange": 0, "times": 0, "truncate_arguments": true})), "times");
        let fine =
            serde_json::json!({"exchange": 0, "http": {"status": 429, "headers": {"retry-after": "Thu, 01 Jan 2026 00:00:05 GMT", "retry-after-ms": "250"}}});
        assert!(spec(fine).fault().is_ok());
    }
}
