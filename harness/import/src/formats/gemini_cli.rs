//! Gemini CLI chat recordings (google-gemini/gemini-cli,
//! `packages/core/src/services/chatRecordingService.ts`), in both forms the
//! CLI has written under `~/.gemini/tmp/<project>/chats/`:
//!
//! - `session-*.json` (v0.4 to v0.38): one pretty-printed
//!   `ConversationRecord` `{sessionId, projectHash, startTime, lastUpdated,
//!   messages, kind?, summary?, directories?}`, rewritten whole on every
//!   change. The accounting unit is a message (`line` N is message N).
//! - `session-*.jsonl` (v0.39+): append-only lines, read as the CLI's own
//!   `loadConversationRecord` reads them: a header (`sessionId` and
//!   `projectHash`), message lines (a message that changes is appended
//!   again under the same `id`: the last copy is kept, where the first
//!   was), `{"$set": {...}}` merging metadata (a `messages` array in it
//!   replaces every message: a checkpoint, except that one replacing model
//!   responses by a summary is read as the compaction it is), and
//!   `{"$rewindTo": id}` dropping that message and every later one (all of
//!   them when the id is unknown).
//!
//! Messages: the `<session_context>` user message the CLI writes first
//! (date, OS, workspace tree) joins the system prompt; a `gemini` message
//! is one model response (`content` its text,
//! `thoughts` its reasoning, `toolCalls` its calls, each holding its own
//! `result` and `status`, `tokens` its usage, `model`); a `user` message is
//! a prompt; an `error` message worded `[API Error: …]` is the failed model
//! call the CLI reported there; `info` and `warning` messages and other
//! errors are the CLI's own notices, never sent to the model. A sub-agent's
//! session (`kind: subagent`, in `chats/<parentId>/`) is a file of its own:
//! its parent's tool call holds what it returned, which is what the replay
//! serves, so it is not merged (and a sub-agent file given alone imports as
//! a session of its own, said in the report).

use serde_json::{Map, Value};

use super::{str_at, u64_at};
use crate::jsonl::{Record, records};
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// Whether a JSON document is a single-JSON Gemini CLI recording (for
/// `--format auto`).
pub fn is_gemini_document(document: &Value) -> bool {
    str_at(document, "sessionId").is_some() && document.get("messages").is_some_and(Value::is_array)
}

/// Whether the first line of a JSONL file is a Gemini CLI one: the header
/// (`sessionId` and `projectHash`, and no `type`, which every Claude Code
/// line has), or a `$set` / `$rewindTo` line.
pub fn is_gemini_line(first: &Value) -> bool {
    let header = str_at(first, "sessionId").is_some() && str_at(first, "projectHash").is_some() && first.get("type").is_none();
    header || first.get("$set").is_some() || first.get("$rewindTo").is_some()
}

/// Reads a Gemini CLI chat recording, JSON or JSONL.
pub fn parse(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "gemini-cli", agent: Some("gemini-cli"), ..Default::default() };
    super::document_or_lines(
        &mut session,
        text,
        |document| document.get("messages").is_some_and(Value::is_array),
        legacy,
        jsonl,
        "a JSON document without a `messages` array: not a Gemini CLI recording; nothing imported",
    );
    session
}

/// The single-JSON form: one unit per message.
fn legacy(session: &mut ImportedSession, document: &Value) {
    metadata(session, document, 1);
    let messages = document.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    session.lines.read = messages.len();
    for (index, value) in messages.iter().enumerate() {
        let unit = index + 1;
        match message(session, value, unit) {
            Fate::Used => session.lines.used += 1,
            Fate::Ignored(kind) => session.lines.ignore(kind),
            Fate::Skipped(reason) => session.lines.skip(unit, reason),
        }
    }
}

/// Where a message of a JSONL file came from: its own line, or a `$set`
/// checkpoint line (whose line is already counted as used); or a
/// compaction there (its summary the entry's value) and the summary's own
/// messages, which are the compaction's, not turns.
enum Source<'r> {
    Line(&'r Record),
    Checkpoint(usize),
    Compaction(usize),
    Summary,
}

/// A message still in the conversation after the lines before it.
struct Live<'r> {
    id: String,
    value: Value,
    source: Source<'r>,
}

/// The JSONL form, folded as the CLI folds it, then mapped in order.
fn jsonl(session: &mut ImportedSession, text: &str) {
    let all = records(text, &mut session.lines);
    let mut meta = Map::new();
    let mut live: Vec<Live> = Vec::new();
    for record in &all {
        let value = &record.value;
        if let Some(set) = value.get("$set").and_then(Value::as_object) {
            session.lines.use_record(record);
            if let Some(messages) = set.get("messages").and_then(Value::as_array) {
                checkpoint(session, &mut live, messages, record.line);
            }
            meta.extend(set.iter().filter(|(key, _)| *key != "messages").map(|(k, v)| (k.clone(), v.clone())));
        } else if let Some(target) = value.get("$rewindTo") {
            session.lines.use_record(record);
            let from = live.iter().position(|m| Some(m.id.as_str()) == target.as_str()).unwrap_or(0);
            drop_lines(session, live.drain(from..), "rewound (a later `$rewindTo` dropped it)");
        } else if let Some(id) = str_at(value, "id") {
            let copy = Live { id: id.to_owned(), value: value.clone(), source: Source::Line(record) };
            match live.iter_mut().find(|m| m.id == id) {
                Some(earlier) if matches!(earlier.source, Source::Summary) => {
                    session.lines.ignore_record(record, "re-records a message of a compaction summary");
                }
                Some(earlier) => {
                    let earlier = std::mem::replace(earlier, copy);
                    drop_lines(session, [earlier], "re-recorded on a later line (the last copy is kept)");
                }
                None => live.push(copy),
            }
        } else if str_at(value, "sessionId").is_some() && str_at(value, "projectHash").is_some() {
            session.lines.use_record(record);
            meta.extend(value.as_object().into_iter().flatten().filter(|(key, _)| *key != "messages").map(|(k, v)| (k.clone(), v.clone())));
            // A whole legacy record on one line is accepted as a header.
            if let Some(messages) = value.get("messages").and_then(Value::as_array) {
                live.extend(messages.iter().map(|m| checkpointed(m, record.line)));
            }
        } else {
            session.lines.skip_record(record, "neither a header, a message (string `id`), `$set` nor `$rewindTo`: skipped");
        }
    }
    metadata(session, &Value::Object(meta), all.first().map_or(1, |r| r.line));
    for entry in live {
        match entry.source {
            Source::Line(record) => match message(session, &entry.value, record.line) {
                Fate::Used => session.lines.use_record(record),
                Fate::Ignored(kind) => session.lines.ignore_record(record, kind),
                Fate::Skipped(reason) => session.lines.skip_record(record, reason),
            },
            Source::Checkpoint(line) => {
                if let Fate::Skipped(reason) = message(session, &entry.value, line) {
                    session.lines.warn(line, format!("a message of the checkpoint: {reason}"));
                }
            }
            Source::Compaction(line) => {
                let summary = entry.value.as_str().unwrap_or_default().to_owned();
                session.items.push(Item::Compaction(Compaction::summary(summary, line)));
            }
            Source::Summary => {}
        }
    }
}

/// A `$set` messages checkpoint: the CLI rebuilds its messages from it
/// (`updateMessagesFromHistory`, from the history the model is sent). One
/// that drops a model response and brings messages of its own is the
/// history compressed (`/compress`, or automatically): a compaction here,
/// its summary the new messages' text, so that the calls made before it
/// stay in the replay. Any other (the first one of a session, a rollback
/// after an aborted or failed call) replaces the messages, as in the CLI.
fn checkpoint<'r>(session: &mut ImportedSession, live: &mut Vec<Live<'r>>, messages: &[Value], line: usize) {
    let in_checkpoint = |id: &str| messages.iter().any(|m| str_at(m, "id") == Some(id));
    let drops_a_response = live.iter().any(|m| str_at(&m.value, "type") == Some("gemini") && !in_checkpoint(&m.id));
    let new: Vec<&Value> = messages.iter().filter(|m| !live.iter().any(|l| Some(l.id.as_str()) == str_at(m, "id"))).collect();
    if drops_a_response && !new.is_empty() {
        let texts: Vec<String> = new.iter().map(|m| parts_text(m.get("content").unwrap_or(&Value::Null), false)).filter(|t| !t.is_empty()).collect();
        live.push(Live { id: String::new(), value: Value::String(texts.join("\n\n")), source: Source::Compaction(line) });
        live.extend(new.iter().map(|m| Live { id: str_at(m, "id").unwrap_or_default().to_owned(), value: Value::Null, source: Source::Summary }));
        return;
    }
    drop_lines(session, live.drain(..), "replaced by a later `$set` messages checkpoint");
    live.extend(messages.iter().map(|m| checkpointed(m, line)));
}

fn checkpointed(message: &Value, line: usize) -> Live<'static> {
    Live { id: str_at(message, "id").unwrap_or_default().to_owned(), value: message.clone(), source: Source::Checkpoint(line) }
}

/// Counts the lines of messages no longer in the conversation as ignored.
fn drop_lines<'r>(session: &mut ImportedSession, dropped: impl IntoIterator<Item = Live<'r>>, kind: &str) {
    for message in dropped {
        if let Source::Line(record) = message.source {
            session.lines.ignore_record(record, kind);
        }
    }
}

/// What the session's metadata says: a sub-agent's session is imported on
/// its own, and the report says so.
fn metadata(session: &mut ImportedSession, meta: &Value, line: usize) {
    if str_at(meta, "kind") == Some("subagent") {
        session.lines.warn(line, "a sub-agent's session (`kind: subagent`): imported on its own, not merged into its parent's");
    }
}

/// What became of one message.
enum Fate {
    Used,
    Ignored(&'static str),
    Skipped(String),
}

/// One message into the session's items.
fn message(session: &mut ImportedSession, value: &Value, unit: usize) -> Fate {
    let content = value.get("content").unwrap_or(&Value::Null);
    match str_at(value, "type") {
        Some("user") if is_function_responses(content) => {
            // v0.44+ records the calls' responses as a synthetic user
            // message too; they are read from the calls' `result`.
            Fate::Ignored("user message of function responses (read from toolCalls)")
        }
        Some("user") if parts_text(content, false).trim_start().starts_with("<session_context>") => {
            // The CLI's first message of every session (date, OS, workspace
            // tree), set before the task: the model's context, as Codex's
            // `<environment_context>` is, so it joins the system prompt.
            let text = parts_text(content, false);
            session.system = Some(session.system.take().map_or(text.clone(), |system| format!("{system}\n\n{text}")));
            Fate::Used
        }
        Some("user") => {
            session.items.push(Item::User { text: parts_text(content, false), line: unit });
            Fate::Used
        }
        Some("gemini") => {
            gemini(session, value, unit);
            Fate::Used
        }
        Some("error") if parts_text(content, false).starts_with("[API Error") => {
            let text = parts_text(content, false);
            session.items.push(Item::ProviderError(ProviderError::from_message(&text, None, unit)));
            Fate::Used
        }
        Some("error") => Fate::Ignored("error (the CLI's, not a model call's)"),
        Some("info") => Fate::Ignored("info"),
        Some("warning") => Fate::Ignored("warning"),
        other => Fate::Skipped(format!("message type {other:?}: skipped")),
    }
}

/// A `gemini` message: one model response, then its calls' results.
fn gemini(session: &mut ImportedSession, value: &Value, unit: usize) {
    let content = value.get("content").unwrap_or(&Value::Null);
    let mut turn = AssistantTurn { text: parts_text(content, false), line: unit, ..Default::default() };
    turn.reasoning = value.get("thoughts").and_then(Value::as_array).into_iter().flatten().map(thought).collect();
    turn.reasoning.extend(Some(parts_text(content, true)).filter(|t| !t.is_empty()));
    turn.model = str_at(value, "model").map(str::to_owned);
    turn.usage = value.get("tokens").and_then(usage);
    session.model = session.model.take().or_else(|| turn.model.clone());
    let calls = value.get("toolCalls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut results = Vec::new();
    for call in calls {
        let id = str_at(call, "id").unwrap_or_default().to_owned();
        turn.tool_calls.push(ToolCall {
            id: id.clone(),
            name: str_at(call, "name").unwrap_or_default().to_owned(),
            arguments: Arguments::Json(call.get("args").cloned().unwrap_or_else(|| Value::Object(Map::new()))),
        });
        if let Some(agent) = str_at(call, "agentId") {
            session.lines.warn(unit, format!("call {id} ran sub-agent {agent}: its own recording is not merged; the replay serves this call's result"));
        }
        match call.get("result").filter(|r| !r.is_null()) {
            Some(result) => {
                let (output, error) = result_text(result);
                let is_error = error || matches!(str_at(call, "status"), Some("error" | "cancelled"));
                results.push(Item::ToolResult(ToolResult { call_id: id, output, is_error, line: unit }));
            }
            None => session.lines.warn(unit, format!("call {id} has no `result` (status {:?})", str_at(call, "status").unwrap_or("none"))),
        }
    }
    session.items.push(Item::Assistant(turn));
    session.items.extend(results);
}

/// Usage from a `tokens` summary, counted as reloop counts Gemini's
/// `usageMetadata` (`reloop_wire::gemini`): `input` (the prompt count)
/// includes the cached tokens, thought tokens are output. An all-zero
/// summary, which real files hold where the CLI got no usage, is none.
fn usage(tokens: &Value) -> Option<RecordedUsage> {
    let usage = RecordedUsage {
        input_tokens: u64_at(tokens, "input"),
        output_tokens: u64_at(tokens, "output") + u64_at(tokens, "thoughts"),
        cache_read_tokens: u64_at(tokens, "cached"),
        ..RecordedUsage::default()
    };
    (usage != RecordedUsage::default() || u64_at(tokens, "total") > 0).then_some(usage)
}

/// A thought summary: its bold subject, then its description.
fn thought(thought: &Value) -> String {
    let description = str_at(thought, "description").unwrap_or_default().trim();
    match str_at(thought, "subject").filter(|s| !s.is_empty()) {
        Some(subject) => format!("{subject}\n\n{description}"),
        None => description.to_owned(),
    }
}

/// The text of a `content` (a string, a Part or a list of Parts): its text
/// parts, the thought ones (`thought: true`) or the others.
fn parts_text(content: &Value, thoughts: bool) -> String {
    let parts = match content {
        Value::String(text) => return if thoughts { String::new() } else { text.clone() },
        Value::Array(parts) => parts.as_slice(),
        part @ Value::Object(_) => std::slice::from_ref(part),
        _ => &[],
    };
    let is_thought = |part: &&Value| part.get("thought").and_then(Value::as_bool).unwrap_or(false) == thoughts;
    parts.iter().filter(is_thought).filter_map(|part| str_at(part, "text")).collect::<Vec<_>>().join("\n\n")
}

/// Whether a content is only `functionResponse` parts.
fn is_function_responses(content: &Value) -> bool {
    content.as_array().is_some_and(|parts| !parts.is_empty() && parts.iter().all(|p| p.get("functionResponse").is_some()))
}

/// A call's `result` (its `functionResponse` parts, normally) as the text
/// the model read, and whether it reports an error (`response.error`).
fn result_text(result: &Value) -> (String, bool) {
    let parts = match result {
        Value::Array(parts) => parts.as_slice(),
        Value::String(text) => return (text.clone(), false),
        part => std::slice::from_ref(part),
    };
    let mut error = false;
    let texts: Vec<String> = parts
        .iter()
        .filter_map(|part| match part.pointer("/functionResponse/response") {
            Some(response) => {
                let (value, failed) = match (response.get("error"), response.get("output")) {
                    (Some(error), _) => (error, true),
                    (None, Some(output)) => (output, false),
                    (None, None) => (response, false),
                };
                error |= failed;
                Some(match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
            }
            None => str_at(part, "text").map(str::to_owned),
        })
        .collect();
    (texts.join("\n\n"), error)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lines(values: &[Value]) -> String {
        values.iter().map(|v| v.to_string() + "\n").collect()
    }

    fn header() -> Value {
        json!({"sessionId": "s1", "projectHash": "ab12", "startTime": "2026-05-01T10:00:00.000Z", "lastUpdated": "2026-05-01T10:00:00.000Z", "kind": "main"})
    }

    fn gemini_message(id: &str, text: &str) -> Value {
        json!({"id": id, "timestamp": "t", "type": "gemini", "content": text, "model": "gemini-2.5-pro"})
    }

    #[test]
    fn a_json_recording_maps_calls_results_thoughts_and_usage() {
        let text = serde_json::to_string_pretty(&json!({
            "sessionId": "s1", "projectHash": "ab", "startTime": "t", "lastUpdated": "t",
            "messages": [
                {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "Fix the bug."}]},
                {"id": "i1", "timestamp": "t", "type": "info", "content": "Switched model."},
                {"id": "g1", "timestamp": "t", "type": "gemini", "content": "", "model": "gemini-2.5-pro",
                 "thoughts": [{"subject": "Looking", "description": "at the file", "timestamp": "t"}],
                 "tokens": {"input": 1000, "output": 20, "cached": 600, "thoughts": 30, "tool": 0, "total": 1050},
                 "toolCalls": [
                    {"id": "read_file_1_0", "name": "read_file", "args": {"file_path": "a.py"}, "status": "success",
                     "result": [{"functionResponse": {"id": "read_file_1_0", "name": "read_file", "response": {"output": "print(1)"}}}]},
                    {"id": "replace_1_1", "name": "replace", "args": {"old_string": "x"}, "status": "error",
                     "result": [{"functionResponse": {"id": "replace_1_1", "name": "replace", "response": {"error": "no match"}}}]}
                 ]},
                {"id": "g2", "timestamp": "t", "type": "gemini", "content": "Done.", "tokens": {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, "total": 0}},
                {"id": "x", "timestamp": "t", "type": "note", "content": "?"}
            ]
        }))
        .unwrap();
        let session = parse(&text);
        assert_eq!((session.agent, session.model.as_deref()), (Some("gemini-cli"), Some("gemini-2.5-pro")));
        assert!(matches!(&session.items[0], Item::User { text, line: 1 } if text == "Fix the bug."));
        let Item::Assistant(turn) = &session.items[1] else { panic!("{:?}", session.items) };
        assert_eq!(turn.line, 3);
        assert_eq!(turn.reasoning, ["Looking\n\nat the file"]);
        assert_eq!(turn.usage, Some(RecordedUsage { input_tokens: 1000, output_tokens: 50, cache_read_tokens: 600, ..RecordedUsage::default() }));
        assert_eq!(turn.tool_calls[0].arguments, Arguments::Json(json!({"file_path": "a.py"})));
        assert!(matches!(&session.items[2], Item::ToolResult(r) if r.call_id == "read_file_1_0" && r.output == "print(1)" && !r.is_error));
        assert!(matches!(&session.items[3], Item::ToolResult(r) if r.call_id == "replace_1_1" && r.output == "no match" && r.is_error));
        assert!(matches!(&session.items[4], Item::Assistant(t) if t.text == "Done." && t.usage.is_none()), "all-zero tokens are no usage");
        assert_eq!((session.lines.read, session.lines.used, session.lines.accounted()), (5, 3, 5));
        assert_eq!(session.lines.ignored.get("info"), Some(&1));
        assert_eq!(session.lines.skipped[0].line, 5);
    }

    #[test]
    fn jsonl_keeps_the_last_copy_of_a_message_where_the_first_was() {
        let mut first = gemini_message("g1", "");
        let mut last = first.clone();
        first["toolCalls"] = json!([{"id": "c1", "name": "run_shell_command", "args": {"command": "ls"}, "status": "executing"}]);
        last["toolCalls"] = json!([{"id": "c1", "name": "run_shell_command", "args": {"command": "ls"}, "status": "success",
            "result": [{"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "a.txt"}}}]}]);
        last["tokens"] = json!({"input": 10, "output": 2, "cached": 0, "thoughts": 0, "tool": 0, "total": 12});
        let text = lines(&[
            header(),
            json!({"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "List."}]}),
            json!({"$set": {"lastUpdated": "t2"}}),
            first,
            gemini_message("g2", "It holds a.txt."),
            last,
        ]);
        let session = parse(&text);
        assert!(matches!(&session.items[1], Item::Assistant(t) if t.line == 6 && t.usage.is_some()));
        assert!(matches!(&session.items[2], Item::ToolResult(r) if r.output == "a.txt"));
        assert!(matches!(&session.items[3], Item::Assistant(t) if t.text == "It holds a.txt."), "{:?}", session.items);
        assert_eq!((session.lines.read, session.lines.used, session.lines.accounted()), (6, 5, 6));
        assert_eq!(session.lines.ignored.get("re-recorded on a later line (the last copy is kept)"), Some(&1));
    }

    #[test]
    fn rewind_drops_the_message_and_every_later_one_and_an_unknown_id_all() {
        let user = |id: &str, text: &str| json!({"id": id, "timestamp": "t", "type": "user", "content": text});
        let text = lines(&[
            header(),
            user("u1", "First."),
            gemini_message("g1", "One."),
            user("u2", "Second, a mistake."),
            gemini_message("g2", "Two."),
            json!({"$rewindTo": "u2"}),
            user("u3", "Second, again."),
            gemini_message("g3", "Three."),
        ]);
        let session = parse(&text);
        let texts: Vec<&str> = session
            .items
            .iter()
            .map(|item| match item {
                Item::User { text, .. } => text.as_str(),
                Item::Assistant(turn) => turn.text.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["First.", "One.", "Second, again.", "Three."]);
        assert_eq!(session.lines.ignored.get("rewound (a later `$rewindTo` dropped it)"), Some(&2));
        assert_eq!(session.lines.accounted(), 8);

        let cleared = parse(&lines(&[header(), user("u1", "First."), gemini_message("g1", "One."), json!({"$rewindTo": "gone"})]));
        assert!(cleared.items.is_empty(), "an unknown id clears every message, as the CLI reads it");
    }

    #[test]
    fn a_set_messages_checkpoint_replaces_every_message() {
        let text = lines(&[
            header(),
            json!({"id": "u1", "timestamp": "t", "type": "user", "content": "Long task."}),
            gemini_message("g1", "Long answer."),
            json!({"$set": {"messages": [
                {"id": "u1", "timestamp": "t", "type": "user", "content": "Long task."},
                {"id": "g1", "timestamp": "t", "type": "gemini", "content": "Short answer."}
            ], "summary": "s"}}),
            gemini_message("g2", "After."),
        ]);
        let session = parse(&text);
        assert!(matches!(&session.items[1], Item::Assistant(t) if t.text == "Short answer." && t.line == 4));
        assert!(matches!(&session.items[2], Item::Assistant(t) if t.text == "After." && t.line == 5));
        assert_eq!(session.lines.ignored.get("replaced by a later `$set` messages checkpoint"), Some(&2));
        assert_eq!((session.lines.read, session.lines.accounted()), (5, 5));
    }

    /// The CLI compressing its history writes a checkpoint holding a
    /// summary in place of the turns: the calls before it stay, then the
    /// compaction, then what followed.
    #[test]
    fn a_checkpoint_that_replaces_responses_by_a_summary_is_a_compaction() {
        let mut call = gemini_message("g1", "");
        call["toolCalls"] = json!([{"id": "c1", "name": "read_file", "args": {"file_path": "a"}, "status": "success",
            "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "text"}}}]}]);
        let summary = json!({"id": "s1", "timestamp": "t", "type": "user", "content": [{"text": "<state_snapshot>read a</state_snapshot>"}]});
        let text = lines(&[
            header(),
            json!({"id": "u1", "timestamp": "t", "type": "user", "content": "Read a."}),
            call,
            gemini_message("g2", "Read."),
            json!({"$set": {"messages": [summary.clone(), {"id": "s2", "timestamp": "t", "type": "gemini", "content": [{"text": "Got it."}]}]}}),
            summary,
            json!({"id": "u3", "timestamp": "t", "type": "user", "content": "Now b."}),
            gemini_message("g3", "Done."),
        ]);
        let session = parse(&text);
        let kinds: Vec<&str> = session.items.iter().map(Item::kind).collect();
        assert_eq!(kinds, ["user", "assistant", "result", "assistant", "compaction", "user", "assistant"]);
        let Item::Compaction(compaction) = &session.items[4] else { unreachable!() };
        assert_eq!((compaction.summary.as_str(), compaction.line), ("<state_snapshot>read a</state_snapshot>\n\nGot it.", 5));
        assert_eq!(session.lines.ignored.get("re-records a message of a compaction summary"), Some(&1));
        assert_eq!((session.lines.read, session.lines.accounted()), (8, 8));
    }

    #[test]
    fn an_api_error_message_is_a_failed_call_and_other_notices_are_ignored() {
        let notice = |id: &str, kind: &str, text: &str| json!({"id": id, "timestamp": "t", "type": kind, "content": text});
        let text = lines(&[
            header(),
            notice("u1", "user", "Hi."),
            notice("e1", "error", "[API Error: 429 Resource exhausted. Please try again later.]"),
            notice("e2", "error", "Unknown command: /frobnicate"),
            notice("w1", "warning", "Low disk space."),
            json!({"id": "f1", "timestamp": "t", "type": "user", "content": [{"functionResponse": {"id": "c", "name": "n", "response": {"output": "o"}}}]}),
            json!({"unexpected": true}),
        ]);
        let session = parse(&text);
        assert!(matches!(&session.items[1], Item::ProviderError(e) if e.status == Some(429) && e.line == 3));
        assert_eq!(session.items.len(), 2);
        assert_eq!(session.lines.ignored.get("error (the CLI's, not a model call's)"), Some(&1));
        assert_eq!(session.lines.ignored.get("warning"), Some(&1));
        assert_eq!(session.lines.skipped[0].line, 7);
        assert_eq!(session.lines.accounted(), 7);
    }

    #[test]
    fn a_sub_agent_session_is_said_to_be_imported_alone_and_a_call_to_one_is_noted() {
        let mut call = gemini_message("g1", "");
        call["toolCalls"] = json!([{"id": "c1", "name": "invoke_agent", "args": {}, "status": "success", "agentId": "sub-7",
            "result": [{"functionResponse": {"id": "c1", "name": "invoke_agent", "response": {"output": "found it"}}}]}]);
        let mut sub = header();
        sub["kind"] = json!("subagent");
        let session = parse(&lines(&[sub, call]));
        let warnings: Vec<&str> = session.lines.warnings.iter().map(|w| w.reason.as_str()).collect();
        assert!(warnings[0].contains("sub-agent's session") && warnings[1].contains("sub-agent sub-7"), "{warnings:?}");
    }

    /// The real gemini-cli 0.61.0 JSONL (written against reloop's mock):
    /// a checkpoint first, each response recorded twice, the calls'
    /// responses again as synthetic user messages.
    #[test]
    fn the_real_jsonl_reads_as_the_cli_reads_it() {
        let text = include_str!("../../tests/fixtures/sessions/gemini-cli/gemini-cli-0-61-0-doom-loop-against-reloop-mock.jsonl");
        let session = parse(text);
        assert!(session.system.as_deref().is_some_and(|s| s.starts_with("<session_context>")));
        let calls: Vec<&str> = session
            .items
            .iter()
            .filter_map(|i| if let Item::Assistant(t) = i { Some(t) } else { None })
            .flat_map(|t| &t.tool_calls)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(calls, ["run_shell_command"; 3]);
        assert!(matches!(&session.items[0], Item::User { text, line: 3 } if text == "Which port does the service in config.toml listen on?"));
        assert!(matches!(session.items.last(), Some(Item::Assistant(t)) if t.text.contains("8080") && t.usage.is_some_and(|u| u.cache_read_tokens == 9868)));
        assert_eq!(session.lines.ignored.get("re-recorded on a later line (the last copy is kept)"), Some(&3));
        assert_eq!(session.lines.ignored.get("user message of function responses (read from toolCalls)"), Some(&3));
        assert_eq!((session.lines.read, session.lines.accounted(), session.lines.skipped.len()), (21, 21, 0));
    }

    #[test]
    fn detection_takes_the_header_and_the_update_lines_not_claude_code_lines() {
        assert!(is_gemini_line(&header()));
        assert!(is_gemini_line(&json!({"$rewindTo": "m"})));
        assert!(!is_gemini_line(&json!({"sessionId": "s", "projectHash": "h", "type": "user"})));
        assert!(is_gemini_document(&json!({"sessionId": "s", "messages": []})));
        assert!(!is_gemini_document(&json!({"sessionId": "s"})));
    }
}
