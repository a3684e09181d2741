//! Claude Code transcripts (`~/.claude/projects/<dir>/<session>.jsonl`; no
//! public source, read from real files and the public docs): one JSON line
//! per event. An API message is written as one line per content block, the
//! lines sharing `message.id` and repeating `usage`: they are joined into
//! one turn. Tool results come back in `user` lines as `tool_result`
//! blocks. A sub-agent's own file (`agent-*.jsonl`, every line
//! `isSidechain: true`) imports as its own session; sidechain lines inside
//! a main transcript are ignored and counted.

use serde_json::Value;

use super::{content_text, str_at, u64_at};
use crate::jsonl::{Record, records};
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// Line types that never reach the model.
const IGNORED_TYPES: [&str; 6] = ["progress", "file-history-snapshot", "queue-operation", "last-prompt", "custom-title", "agent-name"];

/// How Claude Code writes the user stopping it (`[Request interrupted by
/// user]`, `... for tool use]`): a user message the model sees next turn.
const INTERRUPT_MARKER: &str = "[Request interrupted by user";

/// Reads a Claude Code transcript.
pub fn parse(text: &str) -> ImportedSession {
    let mut session = ImportedSession { format: "claude-code", agent: Some("claude-code"), ..Default::default() };
    let all = records(text, &mut session.lines);
    let conversation = |r: &&Record| matches!(str_at(&r.value, "type"), Some("user" | "assistant"));
    let sidechain_file =
        all.iter().filter(conversation).all(|r| r.value.get("isSidechain").and_then(Value::as_bool) == Some(true)) && all.iter().any(|r| conversation(&r));
    let mut open = OpenTurn::default();
    for record in &all {
        let value = &record.value;
        let kind = str_at(value, "type").unwrap_or_default();
        if session.cwd.is_none() {
            session.cwd = str_at(value, "cwd").map(str::to_owned);
        }
        if IGNORED_TYPES.contains(&kind) {
            session.lines.ignore_record(record, kind);
            continue;
        }
        if matches!(kind, "user" | "assistant") && !sidechain_file && value.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            session.lines.ignore_record(record, "sidechain (sub-agent) line in a main transcript");
            continue;
        }
        match kind {
            "assistant" => assistant_line(&mut session, record, &mut open),
            "user" => user_line(&mut session, record, &mut open),
            "summary" => {
                flush(&mut session, &mut open);
                session.lines.ignore_record(record, "summary (session title)");
            }
            "system" if str_at(value, "subtype") == Some("compact_boundary") => {
                flush(&mut session, &mut open);
                session.lines.use_record(record);
                let metadata = value.get("compactMetadata").unwrap_or(&Value::Null);
                session.items.push(Item::Compaction(Compaction {
                    tokens_before: metadata.get("preTokens").and_then(Value::as_u64),
                    tokens_after: metadata.get("postTokens").and_then(Value::as_u64),
                    trigger: str_at(metadata, "trigger").map(str::to_owned),
                    ..Compaction::summary(String::new(), record.line)
                }));
            }
            // A message typed while the agent worked, delivered inside the running turn.
            "attachment" if value.pointer("/attachment/type").and_then(Value::as_str) == Some("queued_command") => {
                flush(&mut session, &mut open);
                session.lines.use_record(record);
                let prompt = value.pointer("/attachment/prompt").map(content_text).unwrap_or_default();
                session.items.push(Item::User { text: prompt, line: record.line });
            }
            "system" => {
                let subtype = str_at(value, "subtype").unwrap_or("system");
                session.lines.ignore_record(record, &format!("system {subtype}"));
            }
            other => session.lines.skip_record(record, format!("unknown line type {other:?}: skipped")),
        }
    }
    flush(&mut session, &mut open);
    session
}

/// The API message being assembled from its lines, and the tool results
/// that arrived between them (parallel calls interleave with their results).
#[derive(Default)]
struct OpenTurn {
    turn: Option<(String, AssistantTurn)>,
    results: Vec<Item>,
    /// The line and output count of a streaming placeholder usage, when the
    /// open message's last usage was one.
    placeholder: Option<(usize, u64)>,
}

fn flush(session: &mut ImportedSession, open: &mut OpenTurn) {
    if let Some((_, turn)) = open.turn.take() {
        if let Some((line, output_tokens)) = open.placeholder.take().filter(|_| turn.usage.is_none()) {
            let reason =
                format!("the message's usage is a streaming placeholder (output_tokens {output_tokens}, stop_reason null), not its final usage: not kept");
            session.lines.warn(line, reason);
        }
        session.items.push(Item::Assistant(turn));
    }
    session.items.append(&mut open.results);
}

/// Claude Code writes a message's lines as it streams: a line written before
/// the message ended has `stop_reason: null` and the output count of the
/// first delta (1 to 4 tokens seen), not the message's. Such a usage is not
/// kept: a later line of the same message with its final usage replaces it,
/// and a call left without one has no recorded usage (so it is never priced
/// as recorded).
const STREAMING_PLACEHOLDER_MAX_OUTPUT: u64 = 4;

fn assistant_line(session: &mut ImportedSession, record: &Record, open: &mut OpenTurn) {
    let Some(message) = record.value.get("message") else {
        return session.lines.skip_record(record, "assistant line without `message`: skipped");
    };
    if record.value.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
        flush(session, open);
        session.lines.use_record(record);
        let status = record.value.get("apiErrorStatus").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok());
        let error = ProviderError::from_message(&content_text(message.get("content").unwrap_or(&Value::Null)), status, record.line);
        return session.items.push(Item::ProviderError(error));
    }
    if str_at(message, "model") == Some("<synthetic>") {
        return session.lines.ignore_record(record, "synthetic assistant message (written by Claude Code, not the model)");
    }
    let id = str_at(message, "id").unwrap_or_default().to_owned();
    match &open.turn {
        Some((open_id, _)) if *open_id == id && !id.is_empty() => {
            if !record.accounted {
                session.lines.join(record.line, format!("continues message {id}: joined (usage repeated, last kept)"));
            }
        }
        _ => {
            flush(session, open);
            session.lines.use_record(record);
            open.turn = Some((id, AssistantTurn { line: record.line, ..Default::default() }));
        }
    }
    let turn = &mut open.turn.as_mut().expect("opened above").1;
    for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
        match str_at(block, "type") {
            Some("text") => {
                let text = str_at(block, "text").unwrap_or_default();
                turn.text = if turn.text.is_empty() { text.to_owned() } else { format!("{}\n\n{text}", turn.text) };
            }
            Some("thinking") => turn.reasoning.push(str_at(block, "thinking").unwrap_or_default().to_owned()),
            Some("tool_use") => turn.tool_calls.push(ToolCall {
                id: str_at(block, "id").unwrap_or_default().to_owned(),
                name: str_at(block, "name").unwrap_or_default().to_owned(),
                arguments: Arguments::Json(block.get("input").cloned().unwrap_or(Value::Object(Default::default()))),
            }),
            _ => {}
        }
    }
    if let Some(usage) = message.get("usage") {
        let output_tokens = u64_at(usage, "output_tokens");
        let placeholder = str_at(message, "stop_reason").is_none() && output_tokens <= STREAMING_PLACEHOLDER_MAX_OUTPUT;
        open.placeholder = placeholder.then_some((record.line, output_tokens));
        turn.usage = (!placeholder).then(|| RecordedUsage::of_anthropic(usage));
        turn.usage_wire = (!placeholder).then(|| usage.clone());
    }
    turn.stop_reason = str_at(message, "stop_reason").map(str::to_owned).or(turn.stop_reason.take());
    turn.model = str_at(message, "model").map(str::to_owned);
    session.model = turn.model.clone();
}

fn user_line(session: &mut ImportedSession, record: &Record, open: &mut OpenTurn) {
    // Every `user` row is in the model's context, whatever put it there:
    // typed text, a slash command's `<command-message>` row and its prompt
    // (`isMeta`, which only hides a row from the screen), a local command's
    // caveat, `<command-name>` and `<local-command-stdout>` rows (the caveat
    // tells the model they are context, not a request).
    let value = &record.value;
    let Some(content) = value.get("message").and_then(|m| m.get("content")) else {
        return session.lines.skip_record(record, "user line without `message.content`: skipped");
    };
    if value.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
        flush(session, open);
        session.lines.use_record(record);
        // The summary follows its `compact_boundary` line: one compaction.
        return match session.items.last_mut() {
            Some(Item::Compaction(boundary)) if boundary.summary.is_empty() => boundary.summary = content_text(content),
            _ => session.items.push(Item::Compaction(Compaction::summary(content_text(content), record.line))),
        };
    }
    let results: Vec<&Value> = content.as_array().into_iter().flatten().filter(|b| str_at(b, "type") == Some("tool_result")).collect();
    if results.is_empty() {
        let text = content_text(content);
        flush(session, open);
        session.lines.use_record(record);
        if text.starts_with(INTERRUPT_MARKER) {
            return session.items.push(Item::Interrupted { text: Some(text), line: record.line });
        }
        return session.items.push(Item::User { text, line: record.line });
    }
    session.lines.use_record(record);
    for block in results {
        open.results.push(Item::ToolResult(ToolResult {
            call_id: str_at(block, "tool_use_id").unwrap_or_default().to_owned(),
            output: content_text(block.get("content").unwrap_or(&Value::Null)),
            is_error: block.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            line: record.line,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(id: &str, stop_reason: Option<&str>, output_tokens: u64, block: &str) -> String {
        let stop = stop_reason.map_or("null".to_owned(), |r| format!("\"{r}\""));
        format!(
            r#"{{"type":"assistant","message":{{"id":"{id}","model":"claude-sonnet-4-5","stop_reason":{stop},"content":[{block}],"usage":{{"input_tokens":10,"output_tokens":{output_tokens},"cache_read_input_tokens":100,"cache_creation_input_tokens":5}}}}}}"#
        )
    }

    fn usages(session: &ImportedSession) -> Vec<Option<u64>> {
        session.items.iter().filter_map(|item| if let Item::Assistant(turn) = item { Some(turn.usage.map(|u| u.output_tokens)) } else { None }).collect()
    }

    /// Claude Code logs the API's `cache_creation` split: 1-hour writes are
    /// priced at twice the input price, so they are kept apart, and the
    /// usage object is kept whole for the recording.
    #[test]
    fn cache_writes_are_split_by_lifetime_and_the_usage_object_is_kept() {
        let text = r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","stop_reason":"end_turn","content":[{"type":"text","text":"Hi."}],"usage":{"input_tokens":3,"cache_creation_input_tokens":13835,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":13835},"output_tokens":9,"service_tier":"standard"}}}"#;
        let session = parse(text);
        let Some(Item::Assistant(turn)) = session.items.first() else { panic!("{:?}", session.items) };
        let usage = turn.usage.unwrap();
        assert_eq!((usage.input_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens), (13_838, 13_835, 13_835));
        assert_eq!(turn.usage_wire.as_ref().unwrap()["service_tier"], "standard");
    }

    /// Claude Code writes a compaction as a `compact_boundary` system line
    /// with the prompt sizes, then the summary as a user line: one compaction.
    #[test]
    fn a_compact_boundary_and_its_summary_are_one_compaction_with_its_sizes() {
        let text = [
            r#"{"type":"user","message":{"role":"user","content":"go"}}"#.to_owned(),
            assistant("m1", Some("end_turn"), 57, r#"{"type":"text","text":"Done."}"#),
            r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":48213,"postTokens":3120}}"#.to_owned(),
            r#"{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued. Summary: read a."}}"#.to_owned(),
        ]
        .join("\n");
        let session = parse(&text);
        let compactions: Vec<&Compaction> = session.items.iter().filter_map(|i| if let Item::Compaction(c) = i { Some(c) } else { None }).collect();
        assert_eq!(compactions.len(), 1, "{:?}", session.items);
        let c = compactions[0];
        assert_eq!((c.tokens_before, c.tokens_after, c.trigger.as_deref(), c.line), (Some(48_213), Some(3_120), Some("manual"), 3));
        assert!(c.summary.ends_with("Summary: read a."));
        assert_eq!(session.lines.used, 4);
    }

    /// Issue 30: Claude Code's streaming placeholders (`output_tokens` 1 or 3
    /// with `stop_reason: null`) were kept as the call's recorded usage.
    #[test]
    fn a_streaming_placeholder_usage_gives_way_to_the_final_one_or_is_not_kept() {
        let text = [
            r#"{"type":"user","message":{"role":"user","content":"go"}}"#.to_owned(),
            assistant("m1", None, 3, r#"{"type":"text","text":"Reading the file first."}"#),
            assistant("m1", Some("tool_use"), 57, r#"{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a"}}"#),
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}"#.to_owned(),
            assistant("m2", None, 1, r#"{"type":"text","text":"Done: the file holds x."}"#),
        ]
        .join("\n");
        let session = parse(&text);
        assert_eq!(usages(&session), [Some(57), None], "m1 keeps its final usage; m2 has only a placeholder");
        let warning = session.lines.warnings.iter().find(|w| w.line == 5).expect("the placeholder is reported");
        assert!(warning.reason.contains("streaming placeholder (output_tokens 1"), "{}", warning.reason);
        assert_eq!(session.lines.warnings.iter().filter(|w| w.reason.contains("placeholder")).count(), 1, "m1's placeholder was replaced");
    }

    /// Claude Code builds the model's messages from the transcript's `user`
    /// rows, `isMeta` ones included (the flag hides a row from the screen):
    /// a prompt slash command is its `<command-message>` row and the
    /// expanded prompt in an `isMeta` row (real: marot/spotter
    /// `subagent.jsonl`), a local command its caveat, `<command-name>` and
    /// `<local-command-stdout>` rows. Both were dropped, so the slash
    /// command's task never reached the replay. `system` `local_command`
    /// rows are the screen's and stay out.
    #[test]
    fn slash_command_and_meta_user_rows_are_delivered_in_order_and_system_rows_are_not() {
        let text = [
            r#"{"type":"user","message":{"role":"user","content":"<command-message>handgemacht:create-beads</command-message>\n<command-name>/handgemacht:create-beads</command-name>\n<command-args>websearch credo</command-args>"}}"#.to_owned(),
            r#"{"type":"user","isMeta":true,"message":{"role":"user","content":[{"type":"text","text":"Create beads (epic + tasks)."}]}}"#.to_owned(),
            assistant("m1", Some("end_turn"), 9, r#"{"type":"text","text":"Drafted."}"#),
            r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"<local-command-caveat>Caveat: DO NOT respond to these messages.</local-command-caveat>"}}"#.to_owned(),
            r#"{"type":"user","message":{"role":"user","content":"<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n<command-args></command-args>"}}"#.to_owned(),
            r#"{"type":"user","message":{"role":"user","content":"<local-command-stdout>Reconnected to tidewave.</local-command-stdout>"}}"#.to_owned(),
            r#"{"type":"system","subtype":"local_command","content":"<local-command-stdout>MCP dialog dismissed</local-command-stdout>","isMeta":false}"#.to_owned(),
            r#"{"type":"user","message":{"role":"user","content":"create the beads"}}"#.to_owned(),
        ]
        .join("\n");
        let session = parse(&text);
        let users: Vec<(usize, &str)> =
            session.items.iter().filter_map(|i| if let Item::User { text, line } = i { Some((*line, text.as_str())) } else { None }).collect();
        let lines: Vec<usize> = users.iter().map(|(line, _)| *line).collect();
        assert_eq!(lines, [1, 2, 4, 5, 6, 8], "{users:?}");
        assert!(users[0].1.contains("/handgemacht:create-beads") && users[1].1 == "Create beads (epic + tasks).", "{users:?}");
        assert_eq!(session.lines.ignored.get("system local_command"), Some(&1), "{:?}", session.lines.ignored);
    }

    /// A message typed while Claude Code works is queued (`queue-operation`
    /// rows, bookkeeping) and reaches the model inside the running turn as
    /// an `attachment` row of type `queued_command` (its `prompt`); newer
    /// versions write it so (the shape Claude Code 2.1.332's own code
    /// reads; no public session with one was found). It was skipped as an
    /// unknown line type, so the message never reached the replay.
    #[test]
    fn a_queued_command_attachment_is_the_user_message_the_model_saw() {
        let text = [
            r#"{"type":"user","message":{"role":"user","content":"go"}}"#.to_owned(),
            assistant("m1", Some("tool_use"), 9, r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}"#),
            r#"{"type":"queue-operation","operation":"enqueue","content":"also check the tests"}"#.to_owned(),
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a"}]}}"#.to_owned(),
            r#"{"type":"attachment","attachment":{"type":"queued_command","prompt":"also check the tests","commandMode":"prompt","origin":{"kind":"human"}}}"#
                .to_owned(),
            assistant("m2", Some("end_turn"), 9, r#"{"type":"text","text":"Done."}"#),
        ]
        .join("\n");
        let session = parse(&text);
        assert!(matches!(&session.items[3], Item::User { text, line: 5 } if text == "also check the tests"), "{:?}", session.items);
        assert!(session.lines.skipped.is_empty(), "{:?}", session.lines.skipped);
    }
}
