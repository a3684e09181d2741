//! `reloop mcp-replay`: an MCP server on stdio (one JSON-RPC 2.0 message
//! per line, the spec's stdio transport) whose every answer comes from a
//! recorded server's `messages`. A request takes the first unused entry of
//! its method and params ([`McpMessage::answers`]) and is answered with the
//! client's own id, after the notifications the server sent before that
//! answer. A handshake, ping or listing asked again takes the entry that
//! answered it last ([`repeatable`]); an unrecorded `ping` gets the empty
//! result the spec requires. Anything else the recording lacks is answered
//! with a JSON-RPC error and logged as a divergence, or under
//! `replay-or-live` asked of the real server ([`LiveServer`]) and logged as
//! live. Notifications from the client are accepted; nothing else is ever
//! forwarded anywhere.

use std::io::{self, BufRead, Write};
use std::path::Path;

use reloop_recording::mcp::{McpMessage, McpServer, repeatable};
use serde_json::{Value, json};

use super::LogLine;
use super::live::LiveServer;

/// The JSON-RPC code of a request the recording has no answer for (the
/// range the spec leaves to servers).
pub const NOT_RECORDED: i64 = -32000;
/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid request.
const INVALID_REQUEST: i64 = -32600;

/// The replay of one server: which of its entries were used, and under
/// `replay-or-live` the real server asked what they lack.
#[derive(Debug)]
pub struct Replayer<'a> {
    server: &'a McpServer,
    used: Vec<bool>,
    live: Live,
    /// The params of the client's `initialize`, the live server's greeting.
    initialize: Option<Value>,
}

/// The real server of a `replay-or-live` replay.
#[derive(Debug)]
enum Live {
    /// `replay`: none.
    Off,
    /// Its command line, not started yet.
    Ready(Vec<String>),
    Started(LiveServer),
    /// It could not start or answer: why, given for every later request.
    Failed(String),
}

impl<'a> Replayer<'a> {
    /// A replay of `server` from its first message.
    pub fn new(server: &'a McpServer) -> Self {
        Self::with_live(server, Vec::new())
    }

    /// A replay of `server` that asks what the recording lacks of the real
    /// server started as `live` (a command line; empty: none).
    pub fn with_live(server: &'a McpServer, live: Vec<String>) -> Self {
        let live = if live.is_empty() { Live::Off } else { Live::Ready(live) };
        Self { server, used: vec![false; server.messages.len()], live, initialize: None }
    }

    /// The real server's answer to `request` and what it sent before it;
    /// `None` without a live server; `Err`: why it cannot answer.
    fn ask_live(&mut self, request: &Value) -> Option<Result<Vec<Value>, String>> {
        if let Live::Ready(command) = &self.live {
            self.live = match LiveServer::start(command, self.initialize.as_ref()) {
                Ok(server) => Live::Started(server),
                Err(why) => Live::Failed(why),
            };
        }
        match &mut self.live {
            Live::Off | Live::Ready(_) => None,
            Live::Failed(why) => Some(Err(why.clone())),
            Live::Started(server) => Some(server.ask(request).map(|(notes, answer)| notes.into_iter().chain([answer]).collect())),
        }
    }

    /// What to write back for one line the client sent (each value one
    /// line), and the log line of a request.
    pub fn answer(&mut self, line: &str) -> (Vec<Value>, Option<LogLine>) {
        let message = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(message)) => message,
            Ok(_) => return (vec![error(&Value::Null, INVALID_REQUEST, "not a JSON-RPC message object (batches are not replayed)")], None),
            Err(e) => return (vec![error(&Value::Null, PARSE_ERROR, &format!("parse error: {e}"))], None),
        };
        // A response (to a server's request) or a notification: nothing to answer.
        let (Some(method), Some(id)) = (message.get("method").and_then(Value::as_str), message.get("id")) else { return (Vec::new(), None) };
        let params = message.get("params");
        if method == "initialize" {
            self.initialize = Some(params.cloned().unwrap_or_else(|| json!({})));
        }
        let mut log = LogLine { server: self.server.name.clone(), method: method.to_owned(), params: params.cloned(), ..LogLine::default() };
        let fresh = (0..self.used.len()).find(|i| !self.used[*i] && self.server.messages[*i].answers(method, params));
        let again = || (0..self.used.len()).rev().find(|i| self.used[*i] && self.server.messages[*i].answers(method, params)).filter(|_| repeatable(method));
        let lines = match fresh.or_else(again) {
            Some(index) => {
                let entry = &self.server.messages[index];
                let notes = if fresh.is_some() { notifications(entry) } else { Vec::new() };
                self.used[index] = true;
                log.entry = Some(index);
                notes.into_iter().chain([response(id, entry)]).collect()
            }
            None if method == "ping" => vec![json!({ "jsonrpc": "2.0", "id": id, "result": {} })],
            None => {
                let id = id.clone();
                let live = self.ask_live(&Value::Object(message.clone()));
                if let Some(Ok(lines)) = live {
                    log.live = true;
                    lines
                } else {
                    log.diverged = true;
                    log.live_error = live.and_then(Result::err);
                    let why = log.live_error.as_ref().map_or_else(String::new, |why| format!(" (and the live server could not answer: {why})"));
                    let message =
                        format!("reloop mcp-replay: the recording's server `{}` has no answer for `{method}` with these params{why}", self.server.name);
                    vec![error(&id, NOT_RECORDED, &message)]
                }
            }
        };
        (lines, Some(log))
    }
}

/// Serves `server` on `input` and `output` until the client closes its
/// end, asking the real server started as `live` (empty: none) what the
/// recording lacks, appending each request to `log` when given; how many
/// requests went unanswered (each also said on standard error).
///
/// # Errors
///
/// Reading, writing or the log fails.
pub fn serve(server: &McpServer, live: Vec<String>, input: impl BufRead, mut output: impl Write, log: Option<&Path>) -> io::Result<usize> {
    let mut replayer = Replayer::with_live(server, live);
    let mut diverged = 0;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let (answers, logged) = replayer.answer(&line);
        for answer in answers {
            writeln!(output, "{answer}")?;
        }
        output.flush()?;
        if let Some(logged) = logged {
            if logged.diverged {
                diverged += 1;
                eprintln!("{}", super::divergence_message(&logged));
            }
            if let Some(path) = log {
                append(path, &logged)?;
            }
        }
    }
    Ok(diverged)
}

/// Appends one line to the run's log, under its lock (several servers of
/// one run share it).
fn append(path: &Path, line: &LogLine) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.lock()?;
    writeln!(file, "{}", serde_json::to_string(line).expect("plain JSON"))
}

/// The notifications recorded before `entry`'s answer, as sent.
fn notifications(entry: &McpMessage) -> Vec<Value> {
    let note = |method: &str, params: &Option<Value>| match params {
        Some(params) => json!({ "jsonrpc": "2.0", "method": method, "params": params }),
        None => json!({ "jsonrpc": "2.0", "method": method }),
    };
    entry.notifications.iter().map(|n| note(&n.method, &n.params)).collect()
}

/// The recorded answer of `entry` under the client's `id`.
fn response(id: &Value, entry: &McpMessage) -> Value {
    match (&entry.result, &entry.error) {
        (_, Some(error)) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        (result, None) => json!({ "jsonrpc": "2.0", "id": id, "result": result.clone().unwrap_or_else(|| json!({})) }),
    }
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_recording::mcp::{McpError, McpNotification};

    fn server() -> McpServer {
        let request = |method: &str, params: Value, result: Value| McpMessage {
            method: method.into(),
            params: Some(params),
            result: Some(result),
            ..McpMessage::default()
        };
        let mut call = request("tools/call", json!({ "name": "add", "arguments": { "a": 1 } }), json!({ "content": [{ "type": "text", "text": "first" }] }));
        call.notifications = vec![McpNotification { method: "notifications/progress".into(), params: Some(json!({ "progress": 1 })) }];
        let failed = McpMessage {
            method: "tools/call".into(),
            params: Some(json!({ "name": "add", "arguments": { "a": 2 } })),
            error: Some(McpError { code: -32602, message: "no".into(), data: None }),
            ..McpMessage::default()
        };
        McpServer {
            name: "calc".into(),
            command: Vec::new(),
            messages: vec![
                request("initialize", json!({ "clientInfo": { "name": "recorder" } }), json!({ "protocolVersion": "2025-06-18" })),
                McpMessage { method: "notifications/initialized".into(), ..McpMessage::default() },
                request("tools/list", json!({}), json!({ "tools": [{ "name": "add" }] })),
                call,
                failed,
            ],
        }
    }

    fn lines(replayer: &mut Replayer<'_>, message: Value) -> (Vec<Value>, Option<LogLine>) {
        replayer.answer(&message.to_string())
    }

    #[test]
    fn each_request_gets_its_recorded_answer_under_the_clients_own_id() {
        let server = server();
        let mut replayer = Replayer::new(&server);
        let (init, log) =
            lines(&mut replayer, json!({ "jsonrpc": "2.0", "id": "a-1", "method": "initialize", "params": { "clientInfo": { "name": "other" } } }));
        assert_eq!(init, [json!({ "jsonrpc": "2.0", "id": "a-1", "result": { "protocolVersion": "2025-06-18" } })]);
        assert_eq!(log.unwrap().entry, Some(0));
        assert_eq!(lines(&mut replayer, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })), (Vec::new(), None));
        let (call, _) =
            lines(&mut replayer, json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": { "name": "add", "arguments": { "a": 1 } } }));
        assert_eq!(call[0]["method"], "notifications/progress", "the server's notification first");
        assert_eq!((&call[1]["id"], &call[1]["result"]["content"][0]["text"]), (&json!(9), &json!("first")));
        let (failed, _) =
            lines(&mut replayer, json!({ "jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": { "name": "add", "arguments": { "a": 2 } } }));
        assert_eq!(failed, [json!({ "jsonrpc": "2.0", "id": 10, "error": { "code": -32602, "message": "no" } })]);
    }

    #[test]
    fn a_call_asked_again_or_changed_diverges_and_a_listing_repeats() {
        let server = server();
        let mut replayer = Replayer::new(&server);
        let call = |a: i64| json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "add", "arguments": { "a": a } } });
        assert_eq!(lines(&mut replayer, call(1)).1.unwrap().entry, Some(3));
        let (again, log) = lines(&mut replayer, call(1));
        assert_eq!((again[0]["error"]["code"].as_i64(), log.unwrap().diverged), (Some(NOT_RECORDED), true), "a call is used once");
        let (changed, log) = lines(&mut replayer, call(3));
        let log = log.unwrap();
        assert!(log.diverged && log.params.unwrap()["arguments"]["a"] == 3, "{changed:?}");
        let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
        for _ in 0..2 {
            let (answer, log) = lines(&mut replayer, list.clone());
            assert_eq!((answer[0]["result"]["tools"][0]["name"].as_str(), log.unwrap().entry), (Some("add"), Some(2)));
        }
        let (pong, log) = lines(&mut replayer, json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }));
        assert_eq!((pong[0]["result"].clone(), log.unwrap().diverged), (json!({}), false), "an unrecorded ping is the protocol's, not the world's");
    }

    #[test]
    fn a_live_server_is_started_only_for_what_the_recording_lacks_and_one_that_cannot_start_is_a_divergence_saying_why() {
        let server = server();
        let mut replayer = Replayer::with_live(&server, vec!["/nonexistent/reloop-test/mcp-server".into()]);
        let (answer, log) = lines(&mut replayer, json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
        let log = log.unwrap();
        assert_eq!((answer[0]["result"]["tools"][0]["name"].as_str(), log.live, log.live_error), (Some("add"), false, None), "recorded: no live server");
        assert!(matches!(replayer.live, Live::Ready(_)), "not started for a recorded request");
        let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "add", "arguments": { "a": 7 } } });
        for _ in 0..2 {
            let (answer, log) = lines(&mut replayer, call.clone());
            let log = log.unwrap();
            let why = log.live_error.clone().unwrap_or_default();
            assert!(log.diverged && !log.live && why.contains("cannot start the live server `/nonexistent/reloop-test/mcp-server`"), "{log:?}");
            assert!(answer[0]["error"]["message"].as_str().unwrap().contains(&why), "{answer:?}");
        }
    }

    #[test]
    fn garbage_gets_a_json_rpc_error_and_is_no_divergence() {
        let server = server();
        let mut replayer = Replayer::new(&server);
        let (answer, log) = replayer.answer("{not json");
        assert_eq!((answer[0]["error"]["code"].as_i64(), log), (Some(PARSE_ERROR), None));
        let (answer, _) = replayer.answer("[1, 2]");
        assert_eq!(answer[0]["error"]["code"].as_i64(), Some(INVALID_REQUEST));
    }

    #[test]
    fn serve_answers_line_by_line_logs_each_request_and_counts_divergences() {
        let server = server();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("mcp.jsonl");
        let input = [
            json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {} }),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": { "uri": "file:///x" } }),
        ]
        .map(|v| v.to_string())
        .join("\n\n");
        let mut output = Vec::new();
        assert_eq!(serve(&server, Vec::new(), input.as_bytes(), &mut output, Some(&log)).unwrap(), 1);
        let written: Vec<Value> = String::from_utf8(output).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(written.len(), 2);
        assert_eq!(
            super::super::read_log(&log).iter().map(|l| (l.method.as_str(), l.diverged)).collect::<Vec<_>>(),
            [("initialize", false), ("resources/read", true)]
        );
    }
}
