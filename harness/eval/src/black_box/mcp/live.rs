//! The real server behind `reloop mcp-replay` under `agent.tools:
//! replay-or-live`: a request the recording lacks goes to it instead of
//! being refused. It starts at the first such request, not before (a run
//! the recording covers never starts it), and is greeted with the
//! client's own `initialize` and `notifications/initialized`, so it
//! answers as it would have answered the client; a client of the
//! stateless protocol (2026-07-28: no `initialize`, each request's version
//! in its `_meta`, as Claude Code 2.1 speaks) sent none, and the server
//! gets none either. What it sends before its
//! answer (notifications) goes to the client first; a request of its own
//! (sampling, roots, elicitation) is refused on the spot, since the
//! client is not reading while a replayed server waits. It is killed when
//! the replay ends.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// The id of the handshake's `initialize`, reloop's own (the client's
/// was answered from the recording long before).
const HANDSHAKE_ID: &str = "reloop-mcp-replay-initialize";

/// A started server.
#[derive(Debug)]
pub struct LiveServer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl LiveServer {
    /// Starts `command` and greets it with `initialize` when the client
    /// sent one (its params, as it sent them).
    ///
    /// # Errors
    ///
    /// The program cannot start, or it does not answer the handshake.
    pub fn start(command: &[String], initialize: Option<&Value>) -> Result<Self, String> {
        let (program, args) = command.split_first().ok_or("names no live server command")?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the live server `{program}`: {e}"))?;
        let input = child.stdin.take().expect("piped");
        let output = BufReader::new(child.stdout.take().expect("piped"));
        let mut server = Self { child, input, output };
        let Some(params) = initialize else { return Ok(server) };
        let (_, answer) = server.ask(&json!({ "jsonrpc": "2.0", "id": HANDSHAKE_ID, "method": "initialize", "params": params }))?;
        if let Some(error) = answer.get("error") {
            return Err(format!("the live server `{program}` refused the handshake: {error}"));
        }
        server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(server)
    }

    /// Sends the client's `request` (its own id) and reads until the
    /// answer: the server's notifications before it, then the answer.
    ///
    /// # Errors
    ///
    /// The server cannot be written to, or ends before it answers.
    pub fn ask(&mut self, request: &Value) -> Result<(Vec<Value>, Value), String> {
        let id = &request["id"];
        self.send(request)?;
        let mut notifications = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            match self.output.read_line(&mut line) {
                Ok(0) => return Err("the live server ended before it answered".to_owned()),
                Ok(_) => {}
                Err(e) => return Err(format!("cannot read the live server: {e}")),
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            match (message.get("method"), message.get("id")) {
                (None, Some(answered)) if answered == id => return Ok((notifications, message)),
                (Some(_), Some(asked)) => {
                    let refusal = json!({ "jsonrpc": "2.0", "id": asked, "error": { "code": -32601, "message": "reloop mcp-replay does not pass a live server's requests on to the client" } });
                    self.send(&refusal)?;
                }
                (Some(_), None) => notifications.push(message),
                (None, _) => {}
            }
        }
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        writeln!(self.input, "{message}").and_then(|()| self.input.flush()).map_err(|e| format!("cannot write to the live server: {e}"))
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
