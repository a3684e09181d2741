//! What a text-tool-calling request looks like: the tools described in the
//! system prompt (ZeroClaw's "Tool Use Protocol"), the assistant's turns as
//! the text it wrote, and each batch of results as one user message of
//! `<tool_result>` blocks (ZeroClaw's `XmlToolDispatcher::format_results`).

use std::fmt::Write;

use crate::message::Message;
use crate::tools::ToolSpec;

/// The header of a user message that carries tool results.
pub const TOOL_RESULTS_HEADER: &str = "[Tool results]";

/// The protocol and the tools, appended to the system prompt.
pub fn protocol_instructions(tools: &[ToolSpec]) -> String {
    let mut text = String::from(
        "## Tool Use Protocol\n\n\
         To use a tool, wrap a JSON object in <tool_call></tool_call> tags:\n\n\
         ```\n<tool_call>\n{\"name\": \"tool_name\", \"arguments\": {\"param\": \"value\"}}\n</tool_call>\n```\n\n\
         Or reply with a JSON object: {\"tool_calls\": [{\"name\": \"tool_name\", \"arguments\": {\"param\": \"value\"}}]}.\n\
         Results come back in a user message of <tool_result> blocks. A reply without a tool call is your final answer.\n\n\
         ### Available Tools\n\n",
    );
    for tool in tools {
        // Writing to a String cannot fail.
        let _ = writeln!(text, "- **{}**: {}\n  Parameters: `{}`", tool.name, tool.description, tool.parameters);
    }
    text
}

/// `system` with the protocol appended.
pub fn system_with_protocol(system: &str, tools: &[ToolSpec]) -> String {
    format!("{system}\n\n{}", protocol_instructions(tools))
}

/// The view as a model without native tools sees it: assistant turns keep
/// only their text (which holds the calls as written), and each run of
/// results becomes one user message.
pub fn render_view(view: Vec<Message>) -> Vec<Message> {
    let mut rendered: Vec<Message> = Vec::with_capacity(view.len());
    let mut results: Option<String> = None;
    for message in view {
        match message {
            Message::ToolResult { tool_name, content, is_error, .. } => {
                let block = results.get_or_insert_with(|| format!("{TOOL_RESULTS_HEADER}\n"));
                let status = if is_error { "error" } else { "ok" };
                let _ = writeln!(block, "<tool_result name=\"{tool_name}\" status=\"{status}\">\n{content}\n</tool_result>");
            }
            other => {
                if let Some(text) = results.take() {
                    rendered.push(Message::user(text));
                }
                rendered.push(match other {
                    Message::Assistant { text, reasoning, .. } => Message::Assistant { text, tool_calls: Vec::new(), reasoning },
                    kept => kept,
                });
            }
        }
    }
    if let Some(text) = results {
        rendered.push(Message::user(text));
    }
    rendered
}

#[cfg(test)]
mod tests {
    use reloop_wire::ToolCall;

    use super::*;

    fn result(name: &str, content: &str, is_error: bool) -> Message {
        Message::ToolResult { call_id: format!("id-{name}").into(), tool_name: name.into(), content: content.into(), is_error }
    }

    #[test]
    fn results_become_one_user_message_per_batch() {
        let call = ToolCall { id: "c".into(), name: "read".into(), arguments: "{}".into() };
        let view = vec![
            Message::user("task"),
            Message::assistant("<tool_call>…</tool_call>", vec![call]),
            result("read", "fn main() {}", false),
            result("grep", "no such file", true),
            Message::user("steer"),
        ];
        let rendered = render_view(view);
        assert_eq!(rendered.len(), 4);
        assert_eq!(rendered[1], Message::assistant("<tool_call>…</tool_call>", Vec::new()));
        assert_eq!(
            rendered[2],
            Message::user(
                "[Tool results]\n<tool_result name=\"read\" status=\"ok\">\nfn main() {}\n</tool_result>\n\
                 <tool_result name=\"grep\" status=\"error\">\nno such file\n</tool_result>\n"
            )
        );
        assert_eq!(rendered[3], Message::user("steer"));
    }

    #[test]
    fn the_protocol_lists_every_tool_with_its_schema() {
        let tools = [ToolSpec { name: "read".into(), description: "Read a file.".into(), parameters: serde_json::json!({"type": "object"}) }];
        let text = system_with_protocol("Be careful.", &tools);
        assert!(text.starts_with("Be careful.\n\n## Tool Use Protocol"));
        assert!(text.contains("- **read**: Read a file.\n  Parameters: `{\"type\":\"object\"}`"));
    }
}
