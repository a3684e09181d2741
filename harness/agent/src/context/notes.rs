//! The texts compaction writes: a collapsed tool round, the deterministic
//! session memory (Layer 2, and the mechanical fallback of an LLM
//! summary), the summary request, and the note a summary becomes.

use std::collections::BTreeMap;

use crate::message::Message;

/// Longest excerpt of a statement or error kept in a note.
const EXCERPT_CHARS: usize = 160;
/// Errors and statements a session memory keeps (the most recent).
const MEMORY_ENTRIES: usize = 5;

/// The system prompt of a summary request.
pub const SUMMARY_SYSTEM_PROMPT: &str = "You compact the history of a coding agent's session. Write a summary another instance of the agent can continue from: the task, what was done and found (files, commands, results), errors and how they were handled, decisions made, and what remains to do. Be specific: keep paths, names and numbers. Do not call tools.";

/// Opens the note a summary becomes, so the model knows what it reads.
pub const SUMMARY_PREFIX: &str = "[Summary of the earlier conversation, written when the context was compacted]";

/// One line per tool call of a collapsed round (Layer 1).
pub fn collapsed_round(messages: &[Message]) -> String {
    let mut lines = vec!["[Collapsed tool round]".to_owned()];
    for message in messages {
        match message {
            Message::Assistant { text, tool_calls, .. } => {
                if !text.trim().is_empty() {
                    lines.push(format!("assistant: {}", excerpt(text)));
                }
                lines.extend(tool_calls.iter().map(|c| format!("called {}({})", c.name, excerpt(&c.arguments))));
            }
            Message::ToolResult { tool_name, content, is_error, .. } => {
                let verdict = if *is_error { "error" } else { "ok" };
                lines.push(format!("{tool_name} → {verdict}, {} lines: {}", content.lines().count(), excerpt(first_line(content))));
            }
            Message::User { text } => lines.push(format!("user: {}", excerpt(text))),
        }
    }
    lines.join("\n")
}

/// The session memory of `messages`, built without a model: tools used,
/// paths touched, recent errors and statements (Layer 2, and the fallback
/// when an LLM summary fails).
pub fn session_memory(messages: &[Message]) -> String {
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    let mut paths: Vec<String> = Vec::new();
    let mut errors = Vec::new();
    let mut statements = Vec::new();
    for message in messages {
        match message {
            Message::Assistant { text, tool_calls, .. } => {
                if !text.trim().is_empty() {
                    statements.push(excerpt(text));
                }
                for call in tool_calls {
                    *tools.entry(call.name.as_str()).or_default() += 1;
                    if let Some(path) = path_argument(&call.arguments).filter(|p| !paths.contains(p)) {
                        paths.push(path);
                    }
                }
            }
            Message::ToolResult { tool_name, content, is_error: true, .. } => {
                errors.push(format!("{tool_name}: {}", excerpt(first_line(content))));
            }
            Message::User { text } => statements.push(format!("user said: {}", excerpt(text))),
            Message::ToolResult { .. } => {}
        }
    }
    let mut note = vec![format!("[Session memory: {} earlier messages, compacted]", messages.len())];
    if !tools.is_empty() {
        let used: Vec<String> = tools.iter().map(|(name, n)| format!("{name} ×{n}")).collect();
        note.push(format!("Tools used: {}", used.join(", ")));
    }
    if !paths.is_empty() {
        note.push(format!("Paths touched: {}", paths.join(", ")));
    }
    push_recent(&mut note, "Recent errors", &errors);
    push_recent(&mut note, "Recent statements", &statements);
    note.join("\n")
}

fn push_recent(note: &mut Vec<String>, title: &str, entries: &[String]) {
    if entries.is_empty() {
        return;
    }
    note.push(format!("{title}:"));
    let start = entries.len().saturating_sub(MEMORY_ENTRIES);
    note.extend(entries[start..].iter().map(|e| format!("- {e}")));
}

/// The user message of a summary request: the history as plain text.
pub fn summary_request(messages: &[Message]) -> String {
    let mut text = String::from("Summarize this history of the session so far:\n\n");
    for message in messages {
        match message {
            Message::User { text: said } => text.push_str(&format!("USER: {said}\n\n")),
            Message::Assistant { text: said, tool_calls, .. } => {
                if !said.is_empty() {
                    text.push_str(&format!("ASSISTANT: {said}\n"));
                }
                for call in tool_calls {
                    text.push_str(&format!("TOOL CALL {}: {}\n", call.name, call.arguments));
                }
                text.push('\n');
            }
            Message::ToolResult { tool_name, content, is_error, .. } => {
                let label = if *is_error { "TOOL ERROR" } else { "TOOL RESULT" };
                text.push_str(&format!("{label} {tool_name}:\n{content}\n\n"));
            }
        }
    }
    text
}

/// The note a summary becomes in the view.
pub fn summary_note(summary: &str) -> String {
    format!("{SUMMARY_PREFIX}\n{summary}")
}

fn path_argument(arguments: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    crate::grounding::PATH_ARGUMENTS.iter().find_map(|key| value.get(*key)?.as_str().map(str::to_owned))
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// A note's quote of `text`: its first [`EXCERPT_CHARS`] characters on one line.
fn excerpt(text: &str) -> String {
    reloop_text::excerpt(text, EXCERPT_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;

    fn round() -> Vec<Message> {
        vec![
            Message::Assistant {
                text: "Reading the config.".into(),
                tool_calls: vec![ToolCall { id: "1".into(), name: "read_file".into(), arguments: r#"{"path":"app.toml"}"#.into() }],
                reasoning: Vec::new(),
            },
            Message::ToolResult { call_id: "1".into(), tool_name: "read_file".into(), content: "[server]\nport = 80\n".into(), is_error: false },
            Message::Assistant {
                text: "".into(),
                tool_calls: vec![ToolCall { id: "2".into(), name: "run".into(), arguments: r#"{"command":"make"}"#.into() }],
                reasoning: Vec::new(),
            },
            Message::ToolResult { call_id: "2".into(), tool_name: "run".into(), content: "make: *** No rule\n".into(), is_error: true },
        ]
    }

    #[test]
    fn a_collapsed_round_keeps_one_line_per_call_and_result() {
        let note = collapsed_round(&round()[..2]);
        assert_eq!(
            note,
            "[Collapsed tool round]\nassistant: Reading the config.\ncalled read_file({\"path\":\"app.toml\"})\nread_file → ok, 2 lines: [server]"
        );
    }

    #[test]
    fn session_memory_keeps_tools_paths_and_errors() {
        let memory = session_memory(&round());
        assert!(memory.contains("Tools used: read_file ×1, run ×1"), "{memory}");
        assert!(memory.contains("Paths touched: app.toml"), "{memory}");
        assert!(memory.contains("- run: make: *** No rule"), "{memory}");
    }
}
