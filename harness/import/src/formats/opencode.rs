//! OpenCode session exports (sst/opencode, now anomalyco/opencode):
//! `opencode export <sessionID>` (`packages/opencode/src/cli/cmd/export.ts`)
//! writes one pretty-printed document `{info, messages: [{info, parts}],
//! todos?}`: the session's `info` (`directory`, `parentID` for a sub-session),
//! then each message's `info` and `parts` as `session/message-v2.ts` declares
//! them. The accounting unit is a record: the session's `info`, each
//! message's `info`, each part, and `todos`; `line` is the line of the
//! file where the record's `"id"` is (a document stringified with
//! `null, 2`, or compact), or the record's number when no id is found.
//!
//! Messages: a `user` message is a prompt (its `text` parts, not those
//! marked `ignored`, which OpenCode never sends; its `synthetic` ones, the
//! text of attached files, it does send), or the start of a compaction (a
//! `compaction` part). An `assistant` message holds one model call per step,
//! `step-start` .. `step-finish` (a message of OpenCode 1.x holds one, older
//! ones several): the step's `text`, `reasoning` and `tool` parts are the
//! call's response, its `step-finish` the call's `tokens`, `cost` and
//! `reason`; each tool part's `state` holds the call's result (`completed`:
//! `output`; `error`: `error`, or the partial `metadata.output` of an
//! interrupted one, which is what the model read; `pending`/`running`: the
//! `[Tool execution was interrupted]` OpenCode sends). An assistant message
//! with `summary: true` is the compaction's summary, not a turn. A message's
//! `error` is the failed call (`APIError`, `ContextOverflowError`, ...) or
//! the user's abort (`MessageAbortedError`); a `retry` part is a failed call
//! OpenCode retried. `patch`, `snapshot`, `file`, `agent` and `subtask` parts
//! are OpenCode's bookkeeping. A `task` call runs a sub-session that the
//! export of its parent does not hold: its result is what the replay serves,
//! so it is not merged (a warning names it; a sub-session exported alone
//! imports as a session of its own, said in the report).

use serde_json::{Map, Value};

use super::{str_at, u64_at, whole_document};
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// What OpenCode sends the model for a call that never finished
/// (`toModelMessages`, pending or running tool parts).
const INTERRUPTED_TOOL: &str = "[Tool execution was interrupted]";

/// Whether a JSON document is an OpenCode export (for `--format auto`):
/// a session `info` object and `messages` whose first holds `info` and
/// `parts`.
pub fn is_export(document: &Value) -> bool {
    let first_is_message =
        |messages: &Vec<Value>| messages.first().is_none_or(|m| m.get("info").is_some_and(Value::is_object) && m.get("parts").is_some_and(Value::is_array));
    document.get("info").is_some_and(Value::is_object) && document.get("messages").and_then(Value::as_array).is_some_and(first_is_message)
}

/// Reads an OpenCode export.
pub fn parse(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "opencode", agent: Some("opencode"), ..Default::default() };
    let Some(document) = whole_document(text, &mut session) else { return session };
    if !is_export(&document) {
        session.lines.read = 1;
        session.lines.skip(1, "a JSON document without a session `info` and `messages` of `{info, parts}`: not an OpenCode export; nothing imported");
        return session;
    }
    Reader { session, lines: Lines::new(text), pending_compaction: None }.export(&document)
}

/// Finds the line of each record from its id, in file order.
struct Lines<'t> {
    text: &'t str,
    from: usize,
    records: usize,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        Self { text, from: 0, records: 0 }
    }

    /// The 1-based line of the next record, whose id is `id`: where
    /// `"id": "<id>"` is next found, or the record's number.
    fn next(&mut self, id: Option<&str>) -> usize {
        self.records += 1;
        let Some(id) = id else { return self.records };
        let quoted = format!("\"{id}\"");
        let mut at = self.from;
        while let Some(found) = self.text[at..].find(&quoted).map(|i| at + i) {
            let before = self.text[..found].trim_end();
            if before.strip_suffix(':').is_some_and(|key| key.trim_end().ends_with("\"id\"")) {
                self.from = found + quoted.len();
                return self.text[..found].matches('\n').count() + 1;
            }
            at = found + quoted.len();
        }
        self.records
    }
}

/// What became of one record.
enum Fate {
    Used,
    Ignored(&'static str),
    Skipped(String),
}

/// A model call being read: its parts so far.
struct Step {
    turn: AssistantTurn,
    results: Vec<Item>,
    /// Whether it holds anything the model said (an empty step is the
    /// `step-start` of a call that failed).
    said: bool,
}

struct Reader<'t> {
    session: ImportedSession,
    lines: Lines<'t>,
    /// A `compaction` part's trigger and line, until its summary message.
    pending_compaction: Option<(String, usize)>,
}

impl Reader<'_> {
    fn export(mut self, document: &Value) -> ImportedSession {
        let info = &document["info"];
        let line = self.lines.next(str_at(info, "id"));
        self.session.cwd = str_at(info, "directory").map(str::to_owned);
        if let Some(parent) = str_at(info, "parentID") {
            self.session.lines.warn(line, format!("a sub-session (of {parent}, a `task` call's): imported on its own, not merged into its parent's"));
        }
        self.account(line, Fate::Used);
        for message in document["messages"].as_array().into_iter().flatten() {
            self.message(message);
        }
        if let Some((_, line)) = self.pending_compaction.take() {
            self.session.lines.warn(line, "a compaction part with no summary message after it: no compaction imported");
        }
        if document.get("todos").is_some() {
            let line = self.lines.next(None);
            self.account(line, Fate::Ignored("todos"));
        }
        self.session
    }

    fn account(&mut self, line: usize, fate: Fate) {
        self.session.lines.read += 1;
        match fate {
            Fate::Used => self.session.lines.used += 1,
            Fate::Ignored(kind) => self.session.lines.ignore(kind),
            Fate::Skipped(reason) => self.session.lines.skip(line, reason),
        }
    }

    fn message(&mut self, message: &Value) {
        let info = message.get("info").unwrap_or(&Value::Null);
        let line = self.lines.next(str_at(info, "id"));
        let parts = message.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        match str_at(info, "role") {
            Some("user") => {
                self.account(line, Fate::Used);
                self.user(parts);
            }
            Some("assistant") if info.get("summary").and_then(Value::as_bool) == Some(true) => {
                self.account(line, Fate::Used);
                self.summary(info, parts, line);
            }
            Some("assistant") => {
                self.account(line, Fate::Used);
                self.assistant(info, parts, line);
            }
            other => {
                self.account(line, Fate::Skipped(format!("message role {other:?}: skipped with its parts")));
                for part in parts {
                    let line = self.lines.next(str_at(part, "id"));
                    self.account(line, Fate::Skipped(format!("a part of a message of role {other:?}: skipped")));
                }
            }
        }
    }

    /// A user message: its text a prompt, or a compaction's start.
    fn user(&mut self, parts: &[Value]) {
        let mut texts = Vec::new();
        let mut first = None;
        for part in parts {
            let line = self.lines.next(str_at(part, "id"));
            let fate = match str_at(part, "type") {
                Some("text") if part.get("ignored").and_then(Value::as_bool) == Some(true) => Fate::Ignored("text marked ignored"),
                Some("text") => {
                    texts.push(str_at(part, "text").unwrap_or_default().to_owned());
                    first.get_or_insert(line);
                    Fate::Used
                }
                Some("compaction") => {
                    let trigger = if part.get("auto").and_then(Value::as_bool) == Some(true) { "auto" } else { "manual" };
                    if let Some((_, earlier)) = self.pending_compaction.replace((trigger.to_owned(), line)) {
                        self.session.lines.warn(earlier, "a compaction part with no summary message after it: no compaction imported");
                    }
                    Fate::Used
                }
                Some("file") => {
                    let mime = str_at(part, "mime").unwrap_or_default();
                    if !matches!(mime, "text/plain" | "application/x-directory") {
                        self.session.lines.warn(line, format!("an attached file ({mime}) the replay does not send"));
                    }
                    Fate::Ignored("file")
                }
                Some("agent") => Fate::Ignored("agent"),
                Some("subtask") => {
                    self.session.lines.warn(line, "a subtask the user started: its sub-session is not merged");
                    Fate::Ignored("subtask")
                }
                other => self.bookkeeping(other),
            };
            self.account(line, fate);
        }
        if let Some(line) = first {
            self.session.items.push(Item::User { text: texts.join("\n\n"), line });
        }
    }

    /// A part that is OpenCode's own bookkeeping in any message, or unknown.
    fn bookkeeping(&self, kind: Option<&str>) -> Fate {
        match kind {
            Some("patch") => Fate::Ignored("patch"),
            Some("snapshot") => Fate::Ignored("snapshot"),
            Some("step-start") => Fate::Ignored("step-start outside an assistant message"),
            other => Fate::Skipped(format!("part type {other:?}: skipped")),
        }
    }

    /// The compaction's summary message: the summary text. Its call's
    /// prompt is OpenCode's pruned copy of the conversation, not the prompt
    /// before the compaction: the sizes are left to the calls around it.
    fn summary(&mut self, info: &Value, parts: &[Value], line: usize) {
        let mut texts = Vec::new();
        for part in parts {
            let part_line = self.lines.next(str_at(part, "id"));
            let fate = match str_at(part, "type") {
                Some("text") => {
                    texts.push(str_at(part, "text").unwrap_or_default().to_owned());
                    Fate::Used
                }
                Some("step-start" | "step-finish" | "reasoning") => Fate::Used,
                other => self.bookkeeping(other),
            };
            self.account(part_line, fate);
        }
        let trigger = match self.pending_compaction.take() {
            Some((trigger, _)) => Some(trigger),
            None => {
                self.session.lines.warn(line, "a summary message with no compaction part before it: read as a compaction");
                None
            }
        };
        if info.get("error").is_some_and(|e| !e.is_null()) || texts.is_empty() {
            self.session.lines.warn(line, "the compaction's summary failed or is empty: no compaction imported");
            return;
        }
        self.session.items.push(Item::Compaction(Compaction { summary: texts.join("\n\n"), trigger, line, ..Compaction::default() }));
    }

    /// An assistant message: one turn per step, then its error.
    fn assistant(&mut self, info: &Value, parts: &[Value], line: usize) {
        let model = str_at(info, "modelID").map(str::to_owned);
        self.session.model = self.session.model.take().or_else(|| model.clone());
        if self.session.cwd.is_none() {
            self.session.cwd = info.pointer("/path/cwd").and_then(Value::as_str).map(str::to_owned);
        }
        let new_step = |line: usize| Step { turn: AssistantTurn { model: model.clone(), line, ..Default::default() }, results: Vec::new(), said: false };
        let mut step: Option<Step> = None;
        let mut finished = 0;
        for part in parts {
            let part_line = self.lines.next(str_at(part, "id"));
            let fate = match str_at(part, "type") {
                Some("step-start") => {
                    if let Some(open) = step.replace(new_step(part_line)) {
                        self.unfinished(open);
                    }
                    Fate::Used
                }
                Some("step-finish") => {
                    let mut done = step.take().unwrap_or_else(|| new_step(part_line));
                    finish(&mut done.turn, part);
                    self.flush(done);
                    finished += 1;
                    Fate::Used
                }
                Some("text") => {
                    let open = step.get_or_insert_with(|| new_step(part_line));
                    let text = str_at(part, "text").unwrap_or_default();
                    open.turn.text = if open.turn.text.is_empty() { text.to_owned() } else { format!("{}\n\n{text}", open.turn.text) };
                    open.said = true;
                    Fate::Used
                }
                Some("reasoning") => {
                    let open = step.get_or_insert_with(|| new_step(part_line));
                    open.turn.reasoning.push(str_at(part, "text").unwrap_or_default().to_owned());
                    Fate::Used
                }
                Some("tool") => {
                    let open = step.get_or_insert_with(|| new_step(part_line));
                    open.said = true;
                    let (call, result) = tool(&mut self.session, part, part_line);
                    open.turn.tool_calls.push(call);
                    open.results.push(result);
                    Fate::Used
                }
                Some("retry") => {
                    let error = part.get("error").unwrap_or(&Value::Null);
                    self.session.items.push(Item::ProviderError(provider_error(error, part_line)));
                    Fate::Used
                }
                Some("file") => Fate::Ignored("file"),
                other => self.bookkeeping(other),
            };
            self.account(part_line, fate);
        }
        // A message of one step whose `step-finish` is lost (an older
        // OpenCode, or a call cut short) keeps the message's own usage.
        if let Some(mut open) = step.take() {
            if finished == 0 {
                finish(&mut open.turn, info);
                open.turn.stop_reason = str_at(info, "finish").map(str::to_owned);
            }
            self.unfinished(open);
        }
        self.error(info, line);
    }

    /// A step that never reached its `step-finish`: kept when the model said
    /// something in it (with a warning), dropped when it is only the start of
    /// a call that failed.
    fn unfinished(&mut self, step: Step) {
        if step.said {
            if step.turn.usage.is_none() {
                self.session.lines.warn(step.turn.line, "a model call without `step-finish`: imported without usage");
            }
            self.flush(step);
        }
    }

    fn flush(&mut self, step: Step) {
        self.session.items.push(Item::Assistant(step.turn));
        self.session.items.extend(step.results);
    }

    /// The message's `error`: the user's abort, or the failed call.
    fn error(&mut self, info: &Value, line: usize) {
        let Some(error) = info.get("error").filter(|e| e.is_object()) else { return };
        match str_at(error, "name") {
            Some("MessageAbortedError") => self.session.items.push(Item::Interrupted { text: None, line }),
            Some("MessageOutputLengthError") => self.session.lines.warn(line, "the response hit the output limit (MessageOutputLengthError)"),
            _ => self.session.items.push(Item::ProviderError(provider_error(error, line))),
        }
    }
}

/// A step's usage, cost and stop reason, from its `step-finish` (or a
/// message `info`, which has the same `tokens` and `cost`).
fn finish(turn: &mut AssistantTurn, finish: &Value) {
    turn.usage = finish.get("tokens").map(usage).filter(|u| *u != RecordedUsage::default());
    turn.usage_wire = finish.get("tokens").cloned();
    turn.cost_usd = finish.get("cost").and_then(Value::as_f64);
    turn.stop_reason = str_at(finish, "reason").map(str::to_owned);
}

/// Usage from OpenCode's `tokens` (`getUsage` in `session/index.ts`):
/// `input` excludes the cache reads and writes in every version, so they
/// are added back; `output` excludes `reasoning` since AI SDK v6 and did
/// not before, so the generated tokens are the lesser of `output` plus
/// `reasoning` and `total` less the prompt (when `total` is there).
fn usage(tokens: &Value) -> RecordedUsage {
    let cache = tokens.get("cache").unwrap_or(&Value::Null);
    let usage = RecordedUsage::from_anthropic(u64_at(tokens, "input"), u64_at(tokens, "output"), u64_at(cache, "read"), u64_at(cache, "write"));
    let with_reasoning = usage.output_tokens + u64_at(tokens, "reasoning");
    let generated = match tokens.get("total").and_then(Value::as_u64) {
        Some(total) if total >= usage.input_tokens + usage.output_tokens => (total - usage.input_tokens).min(with_reasoning),
        _ => with_reasoning,
    };
    RecordedUsage { output_tokens: generated, ..usage }
}

/// A `tool` part: the call, and its result as the model read it.
fn tool(session: &mut ImportedSession, part: &Value, line: usize) -> (ToolCall, Item) {
    let id = str_at(part, "callID").unwrap_or_default().to_owned();
    let name = str_at(part, "tool").unwrap_or_default().to_owned();
    let state = part.get("state").unwrap_or(&Value::Null);
    let input = state.get("input").cloned().unwrap_or_else(|| Value::Object(Map::new()));
    let (output, is_error) = match str_at(state, "status") {
        Some("completed") => (str_at(state, "output").unwrap_or_default().to_owned(), false),
        Some("error") => match state.pointer("/metadata/output").and_then(Value::as_str) {
            Some(partial) if state.pointer("/metadata/interrupted").and_then(Value::as_bool) == Some(true) => (partial.to_owned(), false),
            _ => (str_at(state, "error").unwrap_or_default().to_owned(), true),
        },
        status => {
            session
                .lines
                .warn(line, format!("call {id} never finished (status {:?}): its result is OpenCode's `{INTERRUPTED_TOOL}`", status.unwrap_or("none")));
            (INTERRUPTED_TOOL.to_owned(), true)
        }
    };
    if name == "task" {
        let child = state.pointer("/metadata/sessionId").and_then(Value::as_str).unwrap_or("unknown");
        session.lines.warn(line, format!("call {id} ran sub-session {child}: its own export is not merged; the replay serves this call's result"));
    }
    let call = ToolCall { id: id.clone(), name, arguments: Arguments::Json(input) };
    (call, Item::ToolResult(ToolResult { call_id: id, output, is_error, line }))
}

/// A failed call from a message's `error` or a `retry` part's: `{name,
/// data: {message, statusCode?}}`, a context overflow named so.
fn provider_error(error: &Value, line: usize) -> ProviderError {
    let data = error.get("data").unwrap_or(error);
    let message = str_at(data, "message").or_else(|| str_at(error, "name")).unwrap_or("unknown error");
    let status = data.get("statusCode").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok());
    let mut failed = ProviderError::from_message(message, status, line);
    failed.context_overflow |= str_at(error, "name") == Some("ContextOverflowError");
    failed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn export(messages: Value) -> String {
        serde_json::to_string_pretty(&json!({"info": {"id": "ses_1", "directory": "/w"}, "messages": messages, "todos": []})).unwrap()
    }

    fn tokens(input: u64, output: u64, reasoning: u64, read: u64, write: u64) -> Value {
        json!({"input": input, "output": output, "reasoning": reasoning, "cache": {"read": read, "write": write}})
    }

    #[test]
    fn each_step_of_a_message_is_a_call_its_tools_results_follow_and_every_record_is_accounted() {
        let text = export(json!([
            {"info": {"id": "msg_u", "role": "user"}, "parts": [
                {"id": "prt_1", "type": "text", "text": "fix it"},
                {"id": "prt_2", "type": "text", "text": "hidden", "ignored": true}]},
            {"info": {"id": "msg_a", "role": "assistant", "modelID": "m1", "tokens": tokens(1, 1, 0, 0, 0), "cost": 0.5}, "parts": [
                {"id": "prt_3", "type": "step-start", "snapshot": "s"},
                {"id": "prt_4", "type": "reasoning", "text": "think"},
                {"id": "prt_5", "type": "tool", "callID": "c1", "tool": "bash", "state": {"status": "completed", "input": {"command": "ls"}, "output": "a"}},
                {"id": "prt_6", "type": "tool", "callID": "c2", "tool": "read", "state": {"status": "error", "input": {"filePath": "x"}, "error": "Error: no x"}},
                {"id": "prt_7", "type": "step-finish", "reason": "tool-calls", "cost": 0.25, "tokens": tokens(10, 5, 2, 100, 3)},
                {"id": "prt_8", "type": "patch", "hash": "h", "files": []},
                {"id": "prt_9", "type": "step-start"},
                {"id": "prt_10", "type": "text", "text": "done"},
                {"id": "prt_11", "type": "step-finish", "reason": "stop", "cost": 0.25, "tokens": {"total": 130, "input": 10, "output": 4, "reasoning": 0, "cache": {"read": 100, "write": 0}}}]}
        ]));
        let session = parse(&text);
        assert_eq!(session.cwd.as_deref(), Some("/w"));
        assert_eq!(session.model.as_deref(), Some("m1"));
        let kinds: Vec<&str> = session.items.iter().map(Item::kind).collect();
        assert_eq!(kinds, ["user", "assistant", "result", "error", "assistant"]);
        let Item::Assistant(first) = &session.items[1] else { panic!() };
        assert_eq!(
            first.usage,
            Some(RecordedUsage { input_tokens: 113, output_tokens: 7, cache_read_tokens: 100, cache_write_tokens: 3, cache_write_1h_tokens: 0 })
        );
        assert_eq!((first.cost_usd, first.stop_reason.as_deref(), first.reasoning.len()), (Some(0.25), Some("tool-calls"), 1));
        let Item::Assistant(second) = &session.items[4] else { panic!() };
        assert_eq!((second.text.as_str(), second.usage.map(|u| (u.input_tokens, u.output_tokens))), ("done", Some((110, 4))));
        // session info + 2 messages + 11 parts + todos, each on its own line.
        assert_eq!((session.lines.read, session.lines.accounted()), (15, 15));
        assert_eq!(session.lines.ignored.get("patch"), Some(&1));
        let Item::User { line, .. } = session.items[0] else { panic!() };
        assert_eq!(text.lines().nth(line - 1).map(str::trim), Some("\"id\": \"prt_1\","), "a record's line is where its id is");
    }

    #[test]
    fn a_compaction_is_its_part_and_its_summary_message_and_a_task_call_is_said_not_merged() {
        let text = export(json!([
            {"info": {"id": "msg_a", "role": "assistant", "modelID": "m"}, "parts": [
                {"id": "prt_1", "type": "step-start"},
                {"id": "prt_2", "type": "tool", "callID": "t1", "tool": "task", "state": {"status": "completed", "input": {"prompt": "p"}, "output": "<task_result>r</task_result>", "metadata": {"sessionId": "ses_child"}}},
                {"id": "prt_3", "type": "step-finish", "reason": "tool-calls", "cost": 0, "tokens": tokens(5, 1, 0, 0, 0)}]},
            {"info": {"id": "msg_c", "role": "user"}, "parts": [{"id": "prt_4", "type": "compaction", "auto": true}]},
            {"info": {"id": "msg_s", "role": "assistant", "summary": true, "modelID": "m"}, "parts": [
                {"id": "prt_5", "type": "step-start"},
                {"id": "prt_6", "type": "text", "text": "so far: ran a task"},
                {"id": "prt_7", "type": "step-finish", "reason": "stop", "cost": 0, "tokens": tokens(900, 20, 0, 100, 0)}]}
        ]));
        let session = parse(&text);
        let compaction = session.items.iter().find_map(|item| if let Item::Compaction(c) = item { Some(c) } else { None }).unwrap();
        assert_eq!((compaction.summary.as_str(), compaction.tokens_before, compaction.trigger.as_deref()), ("so far: ran a task", None, Some("auto")));
        assert_eq!(session.items.iter().filter(|item| matches!(item, Item::Assistant(_))).count(), 1, "the summary is no turn");
        assert!(
            session.lines.warnings.iter().any(|w| w.reason.contains("sub-session ses_child") && w.reason.contains("not merged")),
            "{:?}",
            session.lines.warnings
        );
        assert_eq!(session.lines.read, session.lines.accounted());
    }

    #[test]
    fn a_failed_call_an_abort_a_retry_and_an_unfinished_tool_are_what_opencode_sent() {
        let text = export(json!([
            {"info": {"id": "msg_u", "role": "user"}, "parts": [{"id": "prt_1", "type": "text", "text": "go"}]},
            {"info": {"id": "msg_a", "role": "assistant", "error": {"name": "APIError", "data": {"message": "Too Many Requests", "statusCode": 429, "isRetryable": true}}}, "parts": [
                {"id": "prt_2", "type": "retry", "attempt": 1, "error": {"name": "APIError", "data": {"message": "Overloaded", "statusCode": 529}}},
                {"id": "prt_3", "type": "step-start"}]},
            {"info": {"id": "msg_b", "role": "assistant", "error": {"name": "MessageAbortedError", "data": {"message": "aborted"}}}, "parts": [
                {"id": "prt_4", "type": "step-start"},
                {"id": "prt_5", "type": "tool", "callID": "c1", "tool": "bash", "state": {"status": "running", "input": {"command": "sleep 9"}, "time": {"start": 1}}}]},
            {"info": {"id": "msg_c", "role": "assistant", "error": {"name": "ContextOverflowError", "data": {"message": "too big"}}}, "parts": []}
        ]));
        let session = parse(&text);
        let errors: Vec<(Option<u16>, bool)> =
            session.items.iter().filter_map(|item| if let Item::ProviderError(e) = item { Some((e.status, e.context_overflow)) } else { None }).collect();
        assert_eq!(errors, [(Some(529), false), (Some(429), false), (None, true)]);
        let result = session.items.iter().find_map(|item| if let Item::ToolResult(r) = item { Some(r) } else { None }).unwrap();
        assert_eq!((result.output.as_str(), result.is_error), (INTERRUPTED_TOOL, true));
        assert!(session.items.iter().any(|item| matches!(item, Item::Interrupted { .. })));
        assert_eq!(session.lines.read, session.lines.accounted());
    }

    #[test]
    fn another_document_is_no_export_and_is_skipped_with_why() {
        assert!(!is_export(&json!({"sessionId": "s", "messages": []})));
        assert!(!is_export(&json!({"info": {}, "messages": [{"role": "user", "content": "hi"}]})));
        let session = parse("{\"schema_version\": \"ATIF-v1.8\", \"steps\": []}");
        assert_eq!((session.lines.read, session.lines.skipped.len()), (1, 1));
        assert!(session.items.is_empty());
    }
}
