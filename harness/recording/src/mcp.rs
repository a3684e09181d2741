//! The MCP side of a session: what the agent's MCP servers (stdio, the
//! spec's newline-delimited JSON-RPC 2.0) were asked and answered. A
//! black-box agent that calls an MCP tool starts the server itself, so a
//! replay of the model's side alone would need the server installed and
//! would get live answers the recording's next exchange was not written
//! for. Each server's messages here answer the agent's client instead
//! (`reloop mcp-replay`; `docs/recording-format.md`, `docs/black-box.md`).
//!
//! A sibling of `tool_side:` rather than a field in it: `tool_side:` stays
//! the list of shell commands it is, and the two are answered by different
//! processes (the shell shims, the MCP replayer).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The prefix of every MCP notification's method: a message with it has no
/// answer, one without it must have one.
pub const NOTIFICATION_PREFIX: &str = "notifications/";

/// One MCP server the agent started, by the name its configuration gives it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// The server's name, as `agent.mcp` and the agent's configuration give it.
    pub name: String,
    /// The command line it was recorded from, for the reader (secrets
    /// redacted); a replay never runs it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// What the client sent, in order, each request with the server's answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<McpMessage>,
}

/// One message the client sent: a request (with its `result` or `error`)
/// or a notification (`notifications/...`, with neither). The request's id
/// is the client's own and is not kept: a replay answers with the id the
/// replaying client sends.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpMessage {
    /// The JSON-RPC method (`initialize`, `tools/list`, `tools/call`, ...).
    pub method: String,
    /// Its params, as sent; a replay matches on them without `_meta`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// The server's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The server's error, instead of a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<McpError>,
    /// Notifications the server sent after this message and before its
    /// answer (progress, log messages), sent again before it on replay.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notifications: Vec<McpNotification>,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// Its message.
    pub message: String,
    /// Its data, when the server sent any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A notification the server sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpNotification {
    /// Its method (`notifications/progress`, `notifications/message`, ...).
    pub method: String,
    /// Its params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl McpMessage {
    /// Whether it is a notification (no answer).
    pub fn is_notification(&self) -> bool {
        self.method.starts_with(NOTIFICATION_PREFIX)
    }

    /// Whether this entry answers a request for `method` with `params`:
    /// the same method and the same params once `_meta` (the client's
    /// progress tokens and the like) is left out. `initialize` matches by
    /// method alone: its params describe the client, not what it asks.
    pub fn answers(&self, method: &str, params: Option<&Value>) -> bool {
        self.method == method && !self.is_notification() && (method == "initialize" || without_meta(self.params.as_ref()) == without_meta(params))
    }

    /// What is wrong with the entry, if anything: a request needs exactly
    /// one of `result` and `error`, a notification neither.
    pub fn problem(&self) -> Option<&'static str> {
        match (self.is_notification(), self.result.is_some(), self.error.is_some()) {
            (true, false, false) | (false, true, false) | (false, false, true) => None,
            (true, ..) => Some("is a notification (`notifications/...`), which has no `result` or `error`"),
            (false, true, true) => Some("has both `result` and `error`; a request has one answer"),
            (false, false, false) => Some("is a request and needs its answer: `result` or `error`"),
        }
    }
}

/// A request that may be answered again by the entry that answered it
/// before, when none is left unused: asking it changes nothing on the
/// server (clients repeat the handshake, pings and listings at will). The
/// handshake is `initialize`, or `server/discover` in the stateless
/// protocol (2026-07-28, which Claude Code 2.1 speaks).
pub fn repeatable(method: &str) -> bool {
    method == "initialize" || method == "server/discover" || method == "ping" || method.ends_with("/list")
}

/// `params` without the `_meta` the spec reserves for the protocol itself;
/// absent and `{}` alike.
fn without_meta(params: Option<&Value>) -> Value {
    match params {
        Some(Value::Object(fields)) => Value::Object(fields.iter().filter(|(key, _)| *key != "_meta").map(|(k, v)| (k.clone(), v.clone())).collect()),
        Some(other) => other.clone(),
        None => Value::Object(serde_json::Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, arguments: Value) -> McpMessage {
        McpMessage {
            method: "tools/call".into(),
            params: Some(json!({ "name": name, "arguments": arguments })),
            result: Some(json!({})),
            ..McpMessage::default()
        }
    }

    #[test]
    fn a_call_answers_its_own_tool_and_arguments_whatever_the_meta() {
        let entry = call("get_current_time", json!({ "timezone": "UTC" }));
        let asked = json!({ "name": "get_current_time", "arguments": { "timezone": "UTC" }, "_meta": { "progressToken": 7 } });
        assert!(entry.answers("tools/call", Some(&asked)));
        assert!(!entry.answers("tools/call", Some(&json!({ "name": "get_current_time", "arguments": { "timezone": "Europe/Warsaw" } }))));
        assert!(!entry.answers("tools/call", Some(&json!({ "name": "convert_time", "arguments": { "timezone": "UTC" } }))));
        assert!(!entry.answers("resources/read", Some(&asked)));
    }

    #[test]
    fn initialize_matches_by_method_and_absent_params_are_empty() {
        let init = McpMessage {
            method: "initialize".into(),
            params: Some(json!({ "clientInfo": { "name": "a" } })),
            result: Some(json!({})),
            ..McpMessage::default()
        };
        assert!(init.answers("initialize", Some(&json!({ "clientInfo": { "name": "b" } }))));
        let list = McpMessage { method: "tools/list".into(), result: Some(json!({ "tools": [] })), ..McpMessage::default() };
        assert!(list.answers("tools/list", Some(&json!({}))) && list.answers("tools/list", None));
        assert!(!list.answers("tools/list", Some(&json!({ "cursor": "2" }))));
        let note = McpMessage { method: "notifications/initialized".into(), ..McpMessage::default() };
        assert!(!note.answers("notifications/initialized", None), "a notification answers nothing");
    }

    #[test]
    fn a_request_needs_one_answer_and_a_notification_none() {
        let mut entry = call("x", json!({}));
        assert_eq!(entry.problem(), None);
        entry.error = Some(McpError { code: -32602, message: "bad".into(), data: None });
        assert!(entry.problem().unwrap().contains("both"));
        entry.result = None;
        assert_eq!(entry.problem(), None);
        entry.error = None;
        assert!(entry.problem().unwrap().contains("needs its answer"));
        let note = McpMessage { method: "notifications/initialized".into(), result: Some(json!({})), ..McpMessage::default() };
        assert!(note.problem().unwrap().contains("notification"));
    }

    #[test]
    fn listings_and_the_handshake_repeat_and_calls_do_not() {
        assert!(repeatable("initialize") && repeatable("tools/list") && repeatable("resources/templates/list") && repeatable("ping"));
        assert!(repeatable("server/discover"), "the stateless protocol's handshake");
        assert!(!repeatable("tools/call") && !repeatable("resources/read"));
    }

    #[test]
    fn a_server_reads_from_yaml_written_by_hand_and_a_misspelt_field_is_refused() {
        let server: McpServer = serde_json::from_value(json!({
            "name": "time",
            "messages": [
                { "method": "initialize", "params": { "protocolVersion": "2025-06-18" }, "result": { "protocolVersion": "2025-06-18" } },
                { "method": "notifications/initialized" },
                { "method": "tools/call", "params": { "name": "t", "arguments": {} }, "error": { "code": -32602, "message": "no" } }
            ]
        }))
        .unwrap();
        assert_eq!(server.messages.len(), 3);
        assert!(server.messages.iter().all(|m| m.problem().is_none()));
        let error = serde_json::from_value::<McpMessage>(json!({ "method": "ping", "results": {} })).unwrap_err().to_string();
        assert!(error.contains("unknown field `results`"), "{error}");
    }
}
