//! The mechanical summary a mock compaction carries: one line per message,
//! each cut to a few words, so the model reads what was asked, called and
//! answered, and the tokens saved are those of a terse but faithful digest
//! (a recording holding the provider's own summary is not needed).

use reloop_wire::Message;

/// Characters kept of each message's text, argument list or result.
const EXCERPT_CHARS: usize = 160;

/// The summary of `messages`; `instructions` (Anthropic's custom
/// summarization prompt) is named at its head, as the one it answered.
pub fn of(messages: &[Message], instructions: Option<&str>) -> String {
    let mut lines = vec![format!("Summary of {} earlier messages (reloop mock compaction):", messages.len())];
    if let Some(instructions) = instructions {
        lines.push(format!("(instructions: {})", excerpt(instructions)));
    }
    for message in messages {
        match message {
            Message::User { text } => lines.push(format!("- user: {}", excerpt(text))),
            Message::Assistant { text, tool_calls, .. } => {
                if !text.is_empty() {
                    lines.push(format!("- assistant: {}", excerpt(text)));
                }
                lines.extend(tool_calls.iter().map(|call| format!("- called {}({})", call.name, excerpt(&call.arguments))));
            }
            Message::ToolResult { tool_name, content, is_error, .. } => {
                let failed = if *is_error { " (error)" } else { "" };
                lines.push(format!("- {tool_name} returned{failed}: {}", excerpt(content)));
            }
        }
    }
    lines.join("\n")
}

/// The first [`EXCERPT_CHARS`] characters of `text` on one line, `…` when cut.
fn excerpt(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;

    #[test]
    fn each_message_is_one_short_line() {
        let call = ToolCall { id: "c1".into(), name: "read".into(), arguments: r#"{"path":"a.rs"}"#.into() };
        let long = "x ".repeat(500);
        let messages = [
            Message::user("fix the bug"),
            Message::assistant("Looking.", vec![call]),
            Message::ToolResult { call_id: "c1".into(), tool_name: "read".into(), content: long.as_str().into(), is_error: true },
        ];
        let summary = of(&messages, Some("Keep file names."));
        let lines: Vec<&str> = summary.lines().collect();
        assert_eq!(lines[0], "Summary of 3 earlier messages (reloop mock compaction):");
        assert_eq!(lines[1], "(instructions: Keep file names.)");
        assert_eq!(&lines[2..5], ["- user: fix the bug", "- assistant: Looking.", r#"- called read({"path":"a.rs"})"#]);
        assert!(lines[5].starts_with("- read returned (error): x x") && lines[5].ends_with('…') && lines[5].len() < 200, "{}", lines[5]);
    }
}
