//! `reloop mcp-record`: the real server between the agent's client and
//! reloop. Every line passes through unchanged in both directions; each
//! one that is a JSON-RPC message is kept, and after every answer the
//! server's frames ([`frames`]) are written into the recording's `mcp:`
//! (secrets redacted), so a client that kills its server mid-session
//! still leaves what was answered.
//!
//! Left out, and said on standard error: requests the server started (a
//! replay cannot ask the client: sampling, roots, elicitation), the
//! client's answers to them, and requests the server never answered.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use reloop_files::recording_file::write_recording;
use reloop_files::{validate_settings, yaml};
use reloop_recording::capture::{InjectedSecrets, Redaction};
use reloop_recording::mcp::{McpError, McpMessage, McpNotification, McpServer};
use serde_json::Value;

/// Who sent a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The agent's MCP client.
    Client,
    /// The server.
    Server,
}

/// Variables of reloop's environment whose values are taken for
/// credentials a server may echo (its own API keys and tokens), by the end
/// of their names.
const SECRET_SUFFIXES: [&str; 5] = ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PAT"];

/// Shorter values are not credentials (`SOME_KEY=1`).
const SHORTEST_SECRET: usize = 8;

/// Runs `command` as the server named `name`, tees it, and keeps its
/// frames in the recording `out`; the server's exit code.
///
/// # Errors
///
/// `out` is not a recording, the server cannot start, or writing fails.
pub fn record(command: &[String], name: &str, out: &Path, redact_body: &[String]) -> Result<i32, String> {
    let keys = InjectedSecrets::from_environment();
    let known: Vec<&str> = keys.variables().collect();
    let secrets = std::env::vars().filter(|(variable, value)| {
        SECRET_SUFFIXES.iter().any(|s| variable.ends_with(s)) && value.len() >= SHORTEST_SECRET && !known.contains(&variable.as_str())
    });
    let values: std::collections::BTreeSet<String> = secrets.map(|(_, value)| regex::escape(&value)).collect();
    let patterns: Vec<String> = redact_body.iter().cloned().chain(values).collect();
    let redaction = Redaction::new(&[], &patterns)?.with_secrets(keys);
    // Refused before the server starts: a missing recording would lose the session.
    load(out)?;
    let (program, args) = command.split_first().ok_or("names no server command (`-- COMMAND ARGS...`)")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start the server `{program}`: {e}"))?;
    let lines: Arc<Mutex<Vec<(Side, Value)>>> = Arc::default();
    let mut to_server = child.stdin.take().expect("piped");
    let kept = Arc::clone(&lines);
    // The client's side; ends with the client's end (the server's stdin then closes).
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            keep(&kept, Side::Client, &line);
            if writeln!(to_server, "{line}").and_then(|()| to_server.flush()).is_err() {
                break;
            }
        }
    });
    let from_server = BufReader::new(child.stdout.take().expect("piped"));
    let mut to_client = std::io::stdout().lock();
    for line in from_server.lines() {
        let line = line.map_err(|e| format!("cannot read the server's output: {e}"))?;
        let answer = keep(&lines, Side::Server, &line).is_some_and(|message| message.get("method").is_none());
        writeln!(to_client, "{line}").and_then(|()| to_client.flush()).map_err(|e| format!("cannot write to the client: {e}"))?;
        if answer {
            save(out, name, command, &lines, &redaction, false)?;
        }
    }
    let status = child.wait().map_err(|e| format!("cannot wait for the server: {e}"))?;
    save(out, name, command, &lines, &redaction, true)?;
    Ok(status.code().unwrap_or(1))
}

/// Keeps `line` when it is a JSON-RPC message; the message.
fn keep(lines: &Mutex<Vec<(Side, Value)>>, side: Side, line: &str) -> Option<Value> {
    let message = serde_json::from_str::<Value>(line).ok().filter(Value::is_object)?;
    lines.lock().expect("transcript poisoned").push((side, message.clone()));
    Some(message)
}

/// Writes the frames so far into `out`'s `mcp:` under a lock on its folder
/// (several servers of one agent record into one file); `last`: say what
/// was left out.
fn save(out: &Path, name: &str, command: &[String], lines: &Mutex<Vec<(Side, Value)>>, redaction: &Redaction, last: bool) -> Result<(), String> {
    let (server, left_out) = frames(name, command, &lines.lock().expect("transcript poisoned"));
    if last {
        for why in &left_out {
            eprintln!("reloop mcp-record: left out of server `{name}`: {why}");
        }
    }
    let mut value = serde_json::to_value(&server).expect("plain data");
    redaction.value(&mut value);
    let server: McpServer = serde_json::from_value(value).expect("the same shape with strings redacted");
    let folder = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let lock = std::fs::File::open(folder).and_then(|dir| dir.lock().map(|()| dir)).map_err(|e| format!("cannot lock {}: {e}", folder.display()))?;
    let mut recording = load(out)?;
    match recording.mcp.iter_mut().find(|kept| kept.name == name) {
        Some(kept) => *kept = server,
        None => recording.mcp.push(server),
    }
    recording.redacted.extend(redaction.describe().into_iter().filter(|what| !what.starts_with("header:")));
    let mut seen = std::collections::HashSet::new();
    recording.redacted.retain(|what| seen.insert(what.clone()));
    write_recording(out, &recording).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    drop(lock);
    Ok(())
}

fn load(out: &Path) -> Result<reloop_recording::Recording, String> {
    yaml::load_checked(out, validate_settings::check_recording)
        .map_err(|e| format!("{e} (mcp-record adds a server's frames to an existing recording: record or write the model's side first)"))
}

/// The server's frames from the lines both sides sent, in order, and what
/// was left out.
pub fn frames(name: &str, command: &[String], lines: &[(Side, Value)]) -> (McpServer, Vec<String>) {
    let mut messages: Vec<McpMessage> = Vec::new();
    let mut pending: HashMap<String, usize> = HashMap::new();
    let mut left_out = Vec::new();
    for (side, line) in lines {
        let method = line.get("method").and_then(Value::as_str);
        let id = line.get("id").map(Value::to_string);
        match (side, method, id) {
            (Side::Client, Some(method), id) => {
                if let Some(id) = id {
                    pending.insert(id, messages.len());
                }
                messages.push(McpMessage { method: method.to_owned(), params: line.get("params").cloned(), ..McpMessage::default() });
            }
            (Side::Client, None, _) => left_out.push("the client's answer to a request of the server".to_owned()),
            (Side::Server, None, Some(id)) => match pending.remove(&id) {
                Some(index) => answer(&mut messages[index], line),
                None => left_out.push(format!("an answer to id {id}, which the client never asked")),
            },
            (Side::Server, None, None) => left_out.push(format!("a message that is neither a request nor an answer: {line}")),
            (Side::Server, Some(method), Some(_)) => left_out.push(format!("the server's own request `{method}` (a replay cannot ask the client)")),
            (Side::Server, Some(method), None) => {
                let latest = pending.values().max().copied().or(messages.len().checked_sub(1));
                let note = McpNotification { method: method.to_owned(), params: line.get("params").cloned() };
                match latest {
                    Some(index) => messages[index].notifications.push(note),
                    None => left_out.push(format!("the notification `{method}`, sent before the client said anything")),
                }
            }
        }
    }
    let unanswered: Vec<usize> = pending.into_values().collect();
    for index in &unanswered {
        left_out.push(format!("the request `{}`, never answered", messages[*index].method));
    }
    let messages = messages.into_iter().enumerate().filter(|(i, _)| !unanswered.contains(i)).map(|(_, message)| message).collect();
    (McpServer { name: name.to_owned(), command: command.to_vec(), messages }, left_out)
}

/// Fills `message` with the server's answer `line`.
fn answer(message: &mut McpMessage, line: &Value) {
    match line.get("error") {
        Some(error) => {
            let read = serde_json::from_value::<McpError>(error.clone());
            message.error = Some(read.unwrap_or_else(|_| McpError {
                code: error.get("code").and_then(Value::as_i64).unwrap_or_default(),
                message: error.get("message").and_then(Value::as_str).unwrap_or_default().to_owned(),
                data: Some(error.clone()),
            }));
        }
        None => message.result = Some(line.get("result").cloned().unwrap_or(Value::Null)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_pair_each_request_with_its_answer_by_id_and_keep_notifications_in_place() {
        let lines = [
            (Side::Client, json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "protocolVersion": "2025-06-18" } })),
            (Side::Server, json!({ "jsonrpc": "2.0", "id": 0, "result": { "protocolVersion": "2025-06-18" } })),
            (Side::Client, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })),
            (Side::Client, json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "slow" } })),
            (Side::Client, json!({ "jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": { "name": "bad" } })),
            (Side::Server, json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": { "progress": 1 } })),
            (Side::Server, json!({ "jsonrpc": "2.0", "id": "x", "error": { "code": -32602, "message": "unknown tool" } })),
            (Side::Server, json!({ "jsonrpc": "2.0", "id": 1, "result": { "content": [] } })),
            (Side::Server, json!({ "jsonrpc": "2.0", "id": 5, "method": "roots/list" })),
            (Side::Client, json!({ "jsonrpc": "2.0", "id": 5, "result": { "roots": [] } })),
            (Side::Client, json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" })),
        ];
        let (server, left_out) = frames("s", &["srv".into()], &lines);
        let shape: Vec<(&str, bool, bool, usize)> =
            server.messages.iter().map(|m| (m.method.as_str(), m.result.is_some(), m.error.is_some(), m.notifications.len())).collect();
        assert_eq!(
            shape,
            [("initialize", true, false, 0), ("notifications/initialized", false, false, 0), ("tools/call", true, false, 0), ("tools/call", false, true, 1)]
        );
        assert!(server.messages.iter().all(|m| m.problem().is_none()));
        assert_eq!(left_out.len(), 3, "{left_out:?}");
        assert!(left_out.iter().any(|why| why.contains("`roots/list`")) && left_out.iter().any(|why| why.contains("`tools/list`, never answered")));
    }

    #[test]
    fn an_error_the_schema_lacks_keeps_what_the_server_sent_as_data() {
        let mut message = McpMessage { method: "tools/call".into(), ..McpMessage::default() };
        answer(&mut message, &json!({ "id": 1, "error": { "code": 1, "message": "m", "extra": true } }));
        let error = message.error.unwrap();
        assert_eq!((error.code, error.message.as_str(), error.data.unwrap()["extra"].clone()), (1, "m", json!(true)));
    }
}
