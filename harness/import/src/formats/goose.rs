//! Goose sessions (block/goose), in the two forms users have of them:
//!
//! - the session JSONL file of Goose's first storage era
//!   (`~/.local/share/goose/sessions/<id>.jsonl`, read by
//!   `crates/goose/src/session/legacy.rs`): a first line of session
//!   metadata (`working_dir`, `description`, `message_count`, the
//!   `total_`/`input_`/`output_tokens` of the last call and their
//!   `accumulated_*` sums), then one `Message` a line. A file whose first
//!   line is already a message has no metadata line, as Goose's reader
//!   allows.
//! - `goose session export --format json` of the SQLite era
//!   (`sessions.db`): the pretty-printed `Session`
//!   (`crates/goose/src/session/model.rs`) with the same metadata plus
//!   `model_config` and `provider_name` (newer versions nest the token
//!   counts in `usage` and `accumulated_usage`), and the messages in
//!   `conversation`. The accounting unit is a message (`line` N is message
//!   N of `conversation`).
//!
//! A `Message` (`crates/goose/src/conversation/message.rs`) is `{id?, role,
//! created, content, metadata: {userVisible, agentVisible}}`; its content
//! blocks are tagged by `type`: `text`, `image`, `toolRequest` (`toolCall`
//! `{status: success, value: {name, arguments}}` or `{status: error,
//! error}`), `toolResponse` (`toolResult` `{status: success, value}`, the
//! value a `CallToolResult` `{content, isError}` or, before it, the bare
//! content list; or `{status: error, error}`), `thinking`,
//! `redactedThinking`, and the agent's own notices: `toolConfirmationRequest`,
//! `actionRequired`, `frontendToolRequest`, `systemNotification`, and, in older versions,
//! `contextLengthExceeded`, `summarizationRequested` and
//! `conversationCompacted`.
//!
//! Goose compacts by summarizing: the messages before stay with
//! `agentVisible: false`, the summary follows as an agent-only user
//! message, then an agent-only assistant message Goose wrote itself
//! ("Your context was compacted…", no model call), then a copy of the last
//! user prompt (the original made invisible to both). Goose keeps no usage
//! per message: only the session's totals, which name no call, so no call
//! gets usage (the report's warning says what the totals were).

use serde_json::Value;

use super::str_at;
use crate::jsonl::records;
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ProviderError, ToolCall, ToolResult};

/// Whether a JSON document is a `goose session export --format json`
/// (for `--format auto`): a `Session` with its `working_dir` and
/// `conversation`.
pub fn is_export(document: &Value) -> bool {
    str_at(document, "working_dir").is_some() && document.get("conversation").is_some() && document.get("message_count").is_some()
}

/// Whether a JSON value is one Goose `Message` (`role`, integer `created`
/// seconds, `content` list): pi's messages carry `timestamp`, not `created`.
pub fn is_message(value: &Value) -> bool {
    matches!(str_at(value, "role"), Some("user" | "assistant"))
        && value.get("created").is_some_and(Value::is_i64)
        && value.get("content").is_some_and(Value::is_array)
}

/// Whether the first line of a JSONL file is a Goose one: the metadata
/// line or a message.
pub fn is_first_line(first: &Value) -> bool {
    is_metadata_line(first) || is_message(first)
}

/// The metadata line: `message_count` with `working_dir` (or, in files
/// from before Goose recorded the directory, `description`), no `type` and
/// no `role`.
fn is_metadata_line(value: &Value) -> bool {
    let named = str_at(value, "working_dir").is_some() || str_at(value, "description").is_some();
    named && value.get("message_count").is_some() && value.get("type").is_none() && value.get("role").is_none()
}

/// Reads a Goose session: an export JSON document or a session JSONL file.
pub fn parse(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "goose", ..Default::default() };
    super::document_or_lines(
        &mut session,
        text,
        is_export,
        export,
        jsonl,
        "a JSON document without `working_dir`, `message_count` and `conversation`: not a Goose session export; nothing imported",
    );
    session
}

/// The export form: metadata, then one unit per message of `conversation`.
fn export(session: &mut ImportedSession, document: &Value) {
    metadata(session, document, 1);
    let Some(messages) = document.get("conversation").and_then(Value::as_array) else {
        session.lines.read = 1;
        return session.lines.skip(1, "`conversation` is not a list (the session was exported without its messages): nothing imported");
    };
    session.lines.read = messages.len();
    let mut reader = Reader::default();
    for (index, value) in messages.iter().enumerate() {
        let unit = index + 1;
        match reader.message(session, value, unit) {
            Fate::Used => session.lines.used += 1,
            Fate::Joined(reason) => session.lines.join(unit, reason),
            Fate::Ignored(kind) => session.lines.ignore(kind),
            Fate::Skipped(reason) => session.lines.skip(unit, reason),
        }
    }
}

/// The JSONL form: the metadata line, if any, then one message a line.
fn jsonl(session: &mut ImportedSession, text: &str) {
    let all = records(text, &mut session.lines);
    let mut reader = Reader::default();
    for (index, record) in all.iter().enumerate() {
        if index == 0 && is_metadata_line(&record.value) {
            session.lines.use_record(record);
            metadata(session, &record.value, record.line);
            continue;
        }
        if !is_message(&record.value) {
            session.lines.skip_record(record, "not a Goose message (`role`, `created`, `content` list): skipped");
            continue;
        }
        match reader.message(session, &record.value, record.line) {
            Fate::Used => session.lines.use_record(record),
            Fate::Joined(reason) if !record.accounted => session.lines.join(record.line, reason),
            Fate::Joined(_) => {}
            Fate::Ignored(kind) => session.lines.ignore_record(record, kind),
            Fate::Skipped(reason) => session.lines.skip_record(record, reason),
        }
    }
}

/// What the session's metadata holds: the working directory, the model
/// and its context window (export only), and the session's token totals,
/// which Goose does not split by call: said as a warning, attributed to
/// no call.
fn metadata(session: &mut ImportedSession, meta: &Value, line: usize) {
    session.cwd = str_at(meta, "working_dir").map(str::to_owned);
    if let Some(config) = meta.get("model_config") {
        session.model = str_at(config, "model_name").map(str::to_owned);
        session.context_window = config.get("context_limit").and_then(Value::as_u64);
    }
    // Flat `accumulated_*_tokens` until Goose nested them in `accumulated_usage`.
    let totals: Vec<String> = ["input_tokens", "output_tokens", "total_tokens"]
        .iter()
        .filter_map(|key| {
            let count = meta.get(format!("accumulated_{key}")).or_else(|| meta.pointer(&format!("/accumulated_usage/{key}")))?.as_u64()?;
            Some(format!("{key} {count}"))
        })
        .collect();
    if !totals.is_empty() {
        session.lines.warn(
            line,
            format!("Goose keeps usage for the whole session only (accumulated {}), not per model call: no call of the recording has usage", totals.join(", ")),
        );
    }
}

/// What became of one message.
enum Fate {
    Used,
    Joined(String),
    Ignored(&'static str),
    Skipped(String),
}

/// State across messages: the id of the assistant message the last turn
/// came from (Goose joins streamed parts of one response under one id), and
/// the calls Goose could not parse, whose responses answer nothing.
#[derive(Default)]
struct Reader {
    last_assistant_id: Option<String>,
    refused_calls: Vec<String>,
}

impl Reader {
    fn message(&mut self, session: &mut ImportedSession, value: &Value, unit: usize) -> Fate {
        let metadata = value.get("metadata");
        let visible = |key: &str| metadata.and_then(|m| m.get(key)).and_then(Value::as_bool).unwrap_or(true);
        let content = value.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let role = str_at(value, "role");
        if !visible("agentVisible") && !visible("userVisible") {
            // The prompt a compaction copied after its summary.
            return Fate::Ignored("message visible to neither the user nor the model (Goose archived it)");
        }
        if role == Some("assistant") && !visible("userVisible") {
            self.last_assistant_id = None;
            return Fate::Ignored("agent-only assistant message Goose wrote itself (after a compaction): no model call");
        }
        if content.is_empty() {
            return Fate::Skipped(format!("{} message with no content: skipped", role.unwrap_or("?")));
        }
        match role {
            Some("assistant") => self.assistant(session, value, content, unit),
            Some("user") if !visible("userVisible") && content.iter().all(|block| str_at(block, "type") == Some("text")) => {
                self.last_assistant_id = None;
                session.items.push(Item::Compaction(Compaction::summary(texts(content), unit)));
                Fate::Used
            }
            _ => self.user(session, content, unit),
        }
    }

    /// An assistant message: one model call, or (a part streamed under the
    /// same id) the rest of the one before.
    fn assistant(&mut self, session: &mut ImportedSession, value: &Value, content: &[Value], unit: usize) -> Fate {
        if let Some(block) = content.iter().find(|block| str_at(block, "type") == Some("contextLengthExceeded")) {
            self.last_assistant_id = None;
            let message = str_at(block, "msg").unwrap_or("context length exceeded");
            let error = ProviderError { context_overflow: true, ..ProviderError::from_message(message, None, unit) };
            session.items.push(Item::ProviderError(error));
            return Fate::Used;
        }
        let mut turn = AssistantTurn { line: unit, model: session.model.clone(), ..Default::default() };
        let mut text = Vec::new();
        for block in content {
            match str_at(block, "type") {
                Some("text") => text.push(str_at(block, "text").unwrap_or_default().to_owned()),
                Some("thinking") => turn.reasoning.push(str_at(block, "thinking").unwrap_or_default().to_owned()),
                Some("reasoning") => turn.reasoning.push(str_at(block, "text").unwrap_or_default().to_owned()),
                Some("toolRequest") => match tool_call(block) {
                    Ok(call) => turn.tool_calls.push(call),
                    Err(why) => {
                        session.lines.warn(unit, why);
                        self.refused_calls.push(str_at(block, "id").unwrap_or_default().to_owned());
                    }
                },
                Some("image") => session.lines.warn(unit, "an image in an assistant message: not replayed"),
                Some(
                    "redactedThinking"
                    | "toolConfirmationRequest"
                    | "actionRequired"
                    | "frontendToolRequest"
                    | "systemNotification"
                    | "summarizationRequested"
                    | "conversationCompacted",
                ) => {}
                other => session.lines.warn(unit, format!("assistant content of unknown type {other:?}: not replayed")),
            }
        }
        turn.text = text.join("\n\n");
        if turn.text.is_empty() && turn.tool_calls.is_empty() && turn.reasoning.is_empty() {
            self.last_assistant_id = None;
            return Fate::Ignored(notice_kind(content));
        }
        let id = str_at(value, "id").map(str::to_owned);
        if let (Some(id), Some(Item::Assistant(last))) = (&id, session.items.last_mut())
            && self.last_assistant_id.as_ref() == Some(id)
        {
            last.text = [std::mem::take(&mut last.text), turn.text].into_iter().filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n");
            last.reasoning.extend(turn.reasoning);
            last.tool_calls.extend(turn.tool_calls);
            return Fate::Joined(format!("continues the assistant message {id} (one response streamed in parts): joined"));
        }
        self.last_assistant_id = id;
        session.items.push(Item::Assistant(turn));
        Fate::Used
    }

    /// A user message: its prompt text and the tool responses it carries,
    /// in order.
    fn user(&mut self, session: &mut ImportedSession, content: &[Value], unit: usize) -> Fate {
        self.last_assistant_id = None;
        let before = session.items.len();
        let mut text = Vec::new();
        for block in content {
            match str_at(block, "type") {
                Some("text") => text.push(str_at(block, "text").unwrap_or_default().to_owned()),
                Some("toolResponse") => {
                    let call_id = str_at(block, "id").unwrap_or_default().to_owned();
                    if self.refused_calls.contains(&call_id) {
                        session.lines.warn(unit, format!("the response to call {call_id}, which Goose could not parse: not replayed"));
                        continue;
                    }
                    let (output, is_error) = tool_output(block.get("toolResult").unwrap_or(&Value::Null));
                    session.items.push(Item::ToolResult(ToolResult { call_id, output, is_error, line: unit }));
                }
                Some("image") => session.lines.warn(unit, "an image in a user message: not replayed"),
                Some("toolConfirmationRequest" | "actionRequired" | "systemNotification" | "summarizationRequested" | "conversationCompacted") => {}
                other => session.lines.warn(unit, format!("user content of unknown type {other:?}: not replayed")),
            }
        }
        if !text.is_empty() {
            session.items.push(Item::User { text: text.join("\n\n"), line: unit });
        }
        if session.items.len() == before { Fate::Ignored(notice_kind(content)) } else { Fate::Used }
    }
}

/// The kind a message holding only Goose's notices is ignored as.
fn notice_kind(content: &[Value]) -> &'static str {
    match content.first().and_then(|block| str_at(block, "type")) {
        Some("summarizationRequested") => "summarizationRequested (Goose's notice, no model call)",
        Some("conversationCompacted") => "conversationCompacted (Goose's notice, no model call)",
        Some("systemNotification") => "systemNotification (Goose's notice, never sent to the model)",
        Some("toolConfirmationRequest" | "actionRequired") => "a confirmation Goose asked of the user",
        _ => "message with nothing the model said or was sent",
    }
}

fn texts(content: &[Value]) -> String {
    content.iter().filter_map(|block| str_at(block, "text")).collect::<Vec<_>>().join("\n\n")
}

/// A `toolRequest` block's call, or why Goose itself could not read it
/// (`toolCall.status: error`: the model's call did not parse).
fn tool_call(block: &Value) -> Result<ToolCall, String> {
    let id = str_at(block, "id").unwrap_or_default();
    let call = block.get("toolCall").unwrap_or(&Value::Null);
    match (str_at(call, "status"), call.get("value")) {
        (Some("success"), Some(value)) => Ok(ToolCall {
            id: id.to_owned(),
            name: str_at(value, "name").unwrap_or_default().to_owned(),
            arguments: match value.get("arguments") {
                None | Some(Value::Null) => Arguments::Json(Value::Object(Default::default())),
                Some(Value::String(text)) => Arguments::from_text(text),
                Some(arguments) => Arguments::Json(arguments.clone()),
            },
        }),
        _ => Err(format!("call {id} did not parse in Goose ({}): not replayed", str_at(call, "error").unwrap_or("no `toolCall.value`"))),
    }
}

/// A `toolResult`'s text as the model was sent it, and whether it failed:
/// the `CallToolResult`'s content (or the bare content list Goose wrote
/// before it) without the blocks whose `annotations.audience` leaves the
/// model out (Goose filters those before sending), `isError`; or the
/// error of a `status: error` result.
fn tool_output(result: &Value) -> (String, bool) {
    if str_at(result, "status") == Some("error") {
        return (str_at(result, "error").unwrap_or_default().to_owned(), true);
    }
    let value = result.get("value").unwrap_or(&Value::Null);
    let (blocks, is_error) = match value {
        Value::Array(blocks) => (blocks.as_slice(), false),
        _ => (
            value.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default(),
            value.get("isError").and_then(Value::as_bool).unwrap_or(false),
        ),
    };
    let for_model = |block: &&Value| {
        block.pointer("/annotations/audience").and_then(Value::as_array).is_none_or(|audience| audience.iter().any(|role| role.as_str() == Some("assistant")))
    };
    let output = blocks.iter().filter(for_model).filter_map(block_text).collect::<Vec<_>>().join("\n");
    (output, is_error)
}

/// The text of one MCP content block: text, an embedded text resource, or
/// a placeholder naming what the model was sent instead of bytes.
fn block_text(block: &Value) -> Option<String> {
    match str_at(block, "type") {
        Some("text") => str_at(block, "text").map(str::to_owned),
        Some("resource") => block.get("resource").and_then(|resource| str_at(resource, "text")).map(str::to_owned),
        Some("image") => Some(format!("[image: {}]", str_at(block, "mimeType").unwrap_or("?"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(role: &str, content: &str, metadata: &str) -> String {
        format!(r#"{{"role":"{role}","created":1747178328,"content":{content},"metadata":{metadata}}}"#)
    }

    const VISIBLE: &str = r#"{"userVisible":true,"agentVisible":true}"#;

    /// The JSONL form: the metadata line names the directory and holds the
    /// session's totals (a warning, no call's usage); a call, its response
    /// (the text for the user only left out, as Goose leaves it out of the
    /// request) and the answer.
    #[test]
    fn a_session_file_maps_calls_results_and_the_metadata_line() {
        let text = [
            r#"{"working_dir":"/w","description":"d","message_count":4,"total_tokens":10,"input_tokens":8,"output_tokens":2,"accumulated_total_tokens":90,"accumulated_input_tokens":80,"accumulated_output_tokens":10}"#.to_owned(),
            message("user", r#"[{"type":"text","text":"list files"}]"#, VISIBLE),
            message("assistant", r#"[{"type":"text","text":"Listing."},{"type":"toolRequest","id":"c1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls"}}}}]"#, VISIBLE),
            message("user", r#"[{"type":"toolResponse","id":"c1","toolResult":{"status":"success","value":[{"type":"text","text":"a.txt","annotations":{"audience":["assistant"]}},{"type":"text","text":"a.txt (shown)","annotations":{"audience":["user"]}}]}}]"#, VISIBLE),
            message("assistant", r#"[{"type":"text","text":"One file."}]"#, VISIBLE),
        ]
        .join("\n");
        let session = parse(&text);
        assert_eq!(session.cwd.as_deref(), Some("/w"));
        let [Item::User { .. }, Item::Assistant(call), Item::ToolResult(result), Item::Assistant(answer)] = session.items.as_slice() else {
            panic!("{:?}", session.items)
        };
        assert_eq!((call.tool_calls[0].name.as_str(), call.usage), ("developer__shell", None));
        assert_eq!((result.output.as_str(), result.is_error), ("a.txt", false));
        assert_eq!(answer.text, "One file.");
        assert_eq!((session.lines.read, session.lines.used), (5, 5));
        assert!(session.lines.warnings[0].reason.contains("accumulated input_tokens 80"), "{:?}", session.lines.warnings);
    }

    /// The export form: `CallToolResult` values with `isError`, a call
    /// Goose could not parse (its error response answers nothing), and a
    /// compaction as Goose writes it: the summary as an agent-only user
    /// message, its own continuation text as an agent-only assistant
    /// message (no model call) and the archived prompt.
    #[test]
    fn an_export_maps_errors_and_a_compaction() {
        let conversation = [
            message("user", r#"[{"type":"text","text":"fix it"}]"#, r#"{"userVisible":true,"agentVisible":false}"#),
            message("assistant", r#"[{"type":"toolRequest","id":"c1","toolCall":{"status":"success","value":{"name":"shell","arguments":{"command":"false"}}}},{"type":"toolRequest","id":"c2","toolCall":{"status":"error","error":"-32602: bad json"}}]"#, r#"{"userVisible":true,"agentVisible":false}"#),
            message("user", r#"[{"type":"toolResponse","id":"c1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"exit 1"}],"isError":true}}},{"type":"toolResponse","id":"c2","toolResult":{"status":"error","error":"bad json"}}]"#, r#"{"userVisible":true,"agentVisible":false}"#),
            message("user", r#"[{"type":"text","text":"The user asked to fix it; shell failed."}]"#, r#"{"userVisible":false,"agentVisible":true}"#),
            message("assistant", r#"[{"type":"text","text":"Your context was compacted."}]"#, r#"{"userVisible":false,"agentVisible":true}"#),
            message("assistant", r#"[{"type":"text","text":"Done."}]"#, VISIBLE),
        ]
        .join(",");
        let text = format!(
            "{{\n\"id\":\"20260101_1\",\"working_dir\":\"/w\",\"name\":\"n\",\"message_count\":6,\"model_config\":{{\"model_name\":\"gpt-4o\",\"context_limit\":128000}},\"conversation\":[{conversation}]\n}}"
        );
        let session = parse(&text);
        assert_eq!((session.model.as_deref(), session.context_window), (Some("gpt-4o"), Some(128000)));
        let [Item::User { .. }, Item::Assistant(call), Item::ToolResult(result), Item::Compaction(compaction), Item::Assistant(done)] =
            session.items.as_slice()
        else {
            panic!("{:?}", session.items)
        };
        assert_eq!(call.tool_calls.len(), 1, "the call that did not parse is not replayed");
        assert_eq!((result.output.as_str(), result.is_error), ("exit 1", true));
        assert_eq!(compaction.summary, "The user asked to fix it; shell failed.");
        assert_eq!((done.text.as_str(), done.line), ("Done.", 6));
        assert_eq!(session.lines.read, 6);
        assert_eq!(session.lines.accounted(), 6);
        assert_eq!(session.lines.ignored.len(), 1, "{:?}", session.lines.ignored);
        assert_eq!(session.lines.warnings.len(), 2, "{:?}", session.lines.warnings);
    }

    /// Older Goose wrote a failed call over the window as an
    /// assistant message holding `contextLengthExceeded`; parts of one
    /// response under one `id` are one turn.
    #[test]
    fn context_length_exceeded_is_an_overflow_and_parts_of_one_response_join() {
        let text = [
            message("user", r#"[{"type":"text","text":"go"}]"#, VISIBLE),
            r#"{"id":"m1","role":"assistant","created":1,"content":[{"type":"text","text":"Looking."}]}"#.to_owned(),
            r#"{"id":"m1","role":"assistant","created":1,"content":[{"type":"toolRequest","id":"c1","toolCall":{"status":"success","value":{"name":"shell","arguments":null}}}]}"#.to_owned(),
            message("assistant", r#"[{"type":"contextLengthExceeded","msg":"The context length of the model has been exceeded."}]"#, VISIBLE),
        ]
        .join("\n");
        let session = parse(&text);
        let [Item::User { .. }, Item::Assistant(turn), Item::ProviderError(error)] = session.items.as_slice() else { panic!("{:?}", session.items) };
        assert_eq!((turn.text.as_str(), turn.tool_calls.len()), ("Looking.", 1));
        assert!(error.context_overflow);
        assert_eq!((session.lines.used, session.lines.joined.len()), (3, 1));
    }

    /// The two bundled Goose fixtures (one per form, `make_constructed_goose.py`):
    /// every line or message accounted for, the four calls of each kept.
    #[test]
    fn the_bundled_fixtures_account_for_every_unit_and_keep_every_call() {
        let calls = |session: &ImportedSession| {
            session.items.iter().map(|item| if let Item::Assistant(turn) = item { turn.tool_calls.len() } else { 0 }).sum::<usize>()
        };
        let jsonl = parse(include_str!("../../tests/fixtures/sessions/goose/constructed__goose-session.jsonl"));
        assert_eq!((jsonl.lines.read, jsonl.lines.accounted(), calls(&jsonl)), (11, 11, 4), "{:?}", jsonl.lines);
        let export = parse(include_str!("../../tests/fixtures/sessions/goose/constructed__goose-export.json"));
        assert_eq!((export.lines.read, export.lines.accounted(), calls(&export)), (12, 12, 4), "{:?}", export.lines);
        assert_eq!(export.items.iter().filter(|item| matches!(item, Item::Compaction(_))).count(), 1);
    }
}
