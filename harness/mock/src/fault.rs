//! Fault injection: what a scenario can make the provider do wrong, per
//! recorded exchange. A fault hits the first `times` attempts at its
//! exchange; a retry after that gets the recorded answer.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// A fault as written in a scenario's `faults:` list; exactly one kind.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// The exchange (0-based) whose attempts it hits.
    pub exchange: usize,
    /// How many attempts in a row it hits.
    #[serde(default = "one")]
    pub times: u32,
    /// Answer with this HTTP status instead.
    #[serde(default)]
    pub http: Option<HttpFault>,
    /// Send this many stream events, then break the connection.
    #[serde(default)]
    pub cut_after_events: Option<usize>,
    /// Go silent mid-stream.
    #[serde(default)]
    pub stall: Option<Stall>,
    /// Replace the event after this many with a garbled line.
    #[serde(default)]
    pub garble_after_events: Option<usize>,
    /// Cut every tool call's arguments in half (invalid JSON).
    #[serde(default)]
    pub truncate_arguments: bool,
    /// Answer with the provider's context-length error.
    #[serde(default)]
    pub context_length_exceeded: bool,
    /// Send a provider error event inside the stream, after the first events.
    #[serde(default)]
    pub stream_error: Option<StreamErrorKind>,
}

fn one() -> u32 {
    1
}

/// An HTTP error reply.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpFault {
    /// The status, e.g. 429, 500, 503, 529.
    pub status: u16,
    /// Extra headers, e.g. `retry-after: "3"`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body; by default the provider's own error body for the status.
    #[serde(default)]
    pub body: Option<String>,
}

/// A silence in the middle of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stall {
    /// Events sent before the silence.
    pub after_events: usize,
    /// Its length, in seconds of the run's clock.
    pub seconds: f64,
}

/// The kind of an in-stream provider error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamErrorKind {
    /// `overloaded_error`.
    Overloaded,
    /// A server error.
    ServerError,
    /// A rate-limit error.
    RateLimited,
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
    /// The one fault this spec names, or why it is not exactly one.
    pub fn fault(&self) -> Result<Fault, String> {
        let mut kinds = Vec::new();
        if let Some(http) = &self.http {
            kinds.push(Fault::Http(http.clone()));
        }
        if let Some(after_events) = self.cut_after_events {
            kinds.push(Fault::Cut { after_events });
        }
        if let Some(stall) = self.stall {
            if !(stall.seconds.is_finite() && stall.seconds >= 0.0) {
                return Err("`stall.seconds` must be a non-negative number".into());
            }
            kinds.push(Fault::Stall { after_events: stall.after_events, duration: Duration::from_secs_f64(stall.seconds) });
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
            0 => Err("names no fault: give one of `http`, `cut_after_events`, `stall`, `garble_after_events`, `truncate_arguments`, `context_length_exceeded`, `stream_error`".into()),
            _ => Err("names more than one fault; use one entry per fault".into()),
        }
    }
}

/// The faults of a session, with the attempts seen per exchange.
#[derive(Debug, Default)]
pub struct FaultPlan {
    faults: Vec<(usize, u32, Fault)>,
    attempts: BTreeMap<usize, u32>,
}

impl FaultPlan {
    /// A plan from validated specs.
    pub fn new(specs: &[FaultSpec]) -> Result<Self, String> {
        let faults = specs.iter().map(|s| Ok((s.exchange, s.times, s.fault()?))).collect::<Result<_, String>>()?;
        Ok(Self { faults, attempts: BTreeMap::new() })
    }

    /// Counts an attempt at `exchange` and returns the fault it meets, if any.
    /// Faults on one exchange apply in the order written, each `times` times.
    pub fn next_attempt(&mut self, exchange: usize) -> Option<Fault> {
        let attempt = self.attempts.entry(exchange).or_default();
        let current = *attempt;
        *attempt += 1;
        let mut first_attempt = 0;
        for (at, times, fault) in &self.faults {
            if *at != exchange {
                continue;
            }
            if current < first_attempt + times {
                return Some(fault.clone());
            }
            first_attempt += times;
        }
        None
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
        assert!(spec(serde_json::json!({"exchange": 0})).fault().unwrap_err().contains("names no fault"));
        let two = spec(serde_json::json!({"exchange": 0, "truncate_arguments": true, "context_length_exceeded": true}));
        assert!(two.fault().unwrap_err().contains("more than one"));
    }

    #[test]
    fn faults_hit_their_attempts_in_order() {
        let specs = [
            spec(serde_json::json!({"exchange": 1, "times": 2, "http": {"status": 429}})),
            spec(serde_json::json!({"exchange": 1, "cut_after_events": 3})),
        ];
        let mut plan = FaultPlan::new(&specs).unwrap();
        assert_eq!(plan.next_attempt(0), None);
        assert!(matches!(plan.next_attempt(1), Some(Fault::Http(_))));
        assert!(matches!(plan.next_attempt(1), Some(Fault::Http(_))));
        assert_eq!(plan.next_attempt(1), Some(Fault::Cut { after_events: 3 }));
        assert_eq!(plan.next_attempt(1), None);
    }
}
