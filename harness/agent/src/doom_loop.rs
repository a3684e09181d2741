//! Doom-loop detection, as OpenCode's rule: the same tool called with
//! identical arguments `threshold` times in a row (default 3).
//!
//! Arguments are compared after parsing and re-serializing, so whitespace or
//! key-order noise in the model's JSON does not hide a loop.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the loop does when it detects a doom loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DoomLoopReaction {
    /// Tell the model it is repeating itself, and go on.
    #[default]
    Warn,
    /// End the run with outcome `doom_loop_stopped`.
    Stop,
}

/// Settings of the detector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DoomLoopConfig {
    /// Identical consecutive calls that make a loop (OpenCode: 3).
    pub threshold: usize,
    /// What to do about it.
    pub reaction: DoomLoopReaction,
}

impl Default for DoomLoopConfig {
    fn default() -> Self {
        Self { threshold: 3, reaction: DoomLoopReaction::Warn }
    }
}

/// A detected loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoomLoop {
    /// The detection rule that fired (`identical_calls`).
    pub kind: &'static str,
    /// The repeated tool.
    pub tool: String,
    /// How many identical calls in a row.
    pub repeats: usize,
}

/// Watches the stream of tool calls.
#[derive(Debug)]
pub struct DoomLoopDetector {
    threshold: usize,
    last: Option<(String, String)>,
    run: usize,
}

impl DoomLoopDetector {
    /// A detector firing at `threshold` identical calls in a row.
    pub fn new(threshold: usize) -> Self {
        Self { threshold: threshold.max(2), last: None, run: 0 }
    }

    /// Records one call; returns the loop when this call completes one.
    ///
    /// Fires once per run of identical calls reaching the threshold, and again
    /// each further `threshold` repeats, so a warned model that keeps going is
    /// warned again rather than indefinitely ignored.
    pub fn observe(&mut self, tool: &str, arguments: &str) -> Option<DoomLoop> {
        let key = (tool.to_owned(), canonical_arguments(arguments));
        if self.last.as_ref() == Some(&key) {
            self.run += 1;
        } else {
            self.last = Some(key);
            self.run = 1;
        }
        self.run.is_multiple_of(self.threshold).then(|| DoomLoop {
            kind: "identical_calls",
            tool: tool.to_owned(),
            repeats: self.run,
        })
    }
}

fn canonical_arguments(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(value) => canonical_json(&value),
        Err(_) => arguments.trim().to_owned(),
    }
}

/// JSON with object keys sorted, so equal values compare equal.
fn canonical_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let body: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", serde_json::Value::from(k.as_str()), canonical_json(v)))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        serde_json::Value::Array(items) => {
            format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_identical_calls_are_a_loop() {
        let mut d = DoomLoopDetector::new(3);
        assert_eq!(d.observe("read", r#"{"path":"a"}"#), None);
        assert_eq!(d.observe("read", r#"{ "path" : "a" }"#), None);
        let hit = d.observe("read", r#"{"path":"a"}"#).expect("third identical call");
        assert_eq!(hit.repeats, 3);
        assert_eq!(hit.tool, "read");
    }

    #[test]
    fn key_order_does_not_hide_a_loop() {
        let mut d = DoomLoopDetector::new(3);
        d.observe("grep", r#"{"a":1,"b":2}"#);
        d.observe("grep", r#"{"b":2,"a":1}"#);
        assert!(d.observe("grep", r#"{"a":1,"b":2}"#).is_some());
    }

    #[test]
    fn same_tool_with_different_arguments_is_not_a_loop() {
        let mut d = DoomLoopDetector::new(3);
        for page in 0..10 {
            assert_eq!(d.observe("read", &format!(r#"{{"page":{page}}}"#)), None);
        }
    }

    #[test]
    fn an_interruption_resets_the_count() {
        let mut d = DoomLoopDetector::new(3);
        d.observe("read", "{}");
        d.observe("read", "{}");
        d.observe("list", "{}");
        assert_eq!(d.observe("read", "{}"), None);
    }
}
