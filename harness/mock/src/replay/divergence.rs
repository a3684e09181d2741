//! Divergence: a request the recording cannot answer faithfully. The server
//! never falls back to another answer; it refuses with a clear error and
//! logs what it expected against what came, for the report.

use reloop_wire::{Message, Prompt, Reasoning};
use serde::Serialize;

use reloop_recording::{Purpose, RequestExpectations};

/// One failed check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// 0-based index of the request in the session.
    pub request_index: usize,
    /// Which check failed: `recording_exhausted`, `tool_results`,
    /// `reasoning.thinking_missing`, `expect.model`, `expect.tools`,
    /// `expect.message_contains`, `expect.tool_result_contains`.
    pub check: &'static str,
    /// What the recording expected.
    pub expected: String,
    /// What the request carried.
    pub actual: String,
}

impl Divergence {
    /// A readable, multi-line account for terminals and reports.
    pub fn render(&self) -> String {
        format!("divergence at request {} ({}):\n  expected: {}\n  actual:   {}", self.request_index, self.check, self.expected, self.actual)
    }
}

/// The recording has no exchange of the request's purpose left.
pub fn recording_exhausted(request_index: usize, purpose: Purpose, exchanges: usize, request: &Prompt) -> Divergence {
    let kind = match purpose {
        Purpose::Main => "",
        Purpose::Compaction => "compaction ",
    };
    Divergence {
        request_index,
        check: "recording_exhausted",
        expected: format!("no further {kind}request (the recording has {exchanges} {kind}exchanges)"),
        actual: describe_last_message(request),
    }
}

/// A tool call the next request must answer: its call id, and the other
/// ids a result may name it by (the Responses `fc_` item id).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExpectedCall {
    /// The call id.
    pub id: String,
    /// Other ids that name the same call.
    pub aliases: Vec<String>,
}

impl ExpectedCall {
    fn answered_by(&self, answered: &[&str]) -> bool {
        std::iter::once(&self.id).chain(&self.aliases).any(|id| answered.contains(&id.as_str()))
    }
}

/// Checks that every tool call of the previous exchange is answered, by its
/// call id or an alias.
pub fn check_tool_results(request_index: usize, expected: &[ExpectedCall], request: &Prompt) -> Option<Divergence> {
    let answered: Vec<&str> = tool_results(request).into_iter().map(|(id, _)| id).collect();
    let expected_ids: Vec<&String> = expected.iter().map(|call| &call.id).collect();
    let missing: Vec<&String> = expected.iter().filter(|call| !call.answered_by(&answered)).map(|call| &call.id).collect();
    (!missing.is_empty()).then(|| Divergence {
        request_index,
        check: "tool_results",
        expected: format!("tool results for {}", quoted(expected_ids.into_iter())),
        actual: format!("no result for {}; the request answers [{}]", quoted(missing.into_iter()), answered.join(", ")),
    })
}

/// Anthropic, extended thinking with tool use: the assistant turn that made
/// the calls `call_ids` must come back with its thinking and redacted
/// thinking blocks, signatures intact (the API refuses the request
/// otherwise). `thinking` is what that turn produced.
pub fn check_thinking_returned(request_index: usize, thinking: &[Reasoning], call_ids: &[String], request: &Prompt) -> Option<Divergence> {
    let required: Vec<&Reasoning> = thinking.iter().filter(|r| matches!(r, Reasoning::Thinking { .. } | Reasoning::RedactedThinking { .. })).collect();
    let first_call = call_ids.first()?;
    if required.is_empty() {
        return None;
    }
    let sent = request.messages.iter().find_map(|message| match message {
        Message::Assistant { tool_calls, reasoning, .. } if tool_calls.iter().any(|call| &call.id == first_call) => Some(reasoning),
        _ => None,
    })?;
    let missing = required.iter().filter(|block| !sent.contains(block)).count();
    (missing > 0).then(|| Divergence {
        request_index,
        check: "reasoning.thinking_missing",
        expected: format!("the assistant turn calling `{first_call}` sent back with its {} thinking block(s), signatures intact", required.len()),
        actual: format!("{missing} of them missing or altered ({} sent)", sent.len()),
    })
}

/// Checks an exchange's own expectations, in a fixed order; the first
/// failure is reported.
pub fn check_expectations(request_index: usize, expect: &RequestExpectations, request: &Prompt) -> Option<Divergence> {
    let fail = |check, expected: String, actual: String| Some(Divergence { request_index, check, expected, actual });
    if let Some(model) = expect.model.as_ref().filter(|m| **m != request.model) {
        return fail("expect.model", format!("model `{model}`"), format!("model `{}`", request.model));
    }
    let declared: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    if let Some(missing) = expect.tools.iter().find(|t| !declared.contains(&t.as_str())) {
        return fail("expect.tools", format!("tool `{missing}` declared"), format!("tools [{}]", declared.join(", ")));
    }
    let texts: Vec<&str> = request.system.iter().map(String::as_str).chain(request.messages.iter().map(message_text)).collect();
    if let Some(needle) = expect.message_contains.iter().find(|n| !texts.iter().any(|t| t.contains(n.as_str()))) {
        return fail("expect.message_contains", format!("a message containing {needle:?}"), describe_last_message(request));
    }
    let results: Vec<&str> = tool_results(request).into_iter().map(|(_, content)| content).collect();
    if let Some(needle) = expect.tool_result_contains.iter().find(|n| !results.iter().any(|r| r.contains(n.as_str()))) {
        let previews: Vec<String> = results.iter().map(|result| format!("{:?}", preview(result))).collect();
        let actual = format!("{} tool results, none containing it: [{}]", results.len(), previews.join(", "));
        return fail("expect.tool_result_contains", format!("a tool result containing {needle:?}"), actual);
    }
    None
}

/// `(call id, content)` of every tool result.
fn tool_results(request: &Prompt) -> Vec<(&str, &str)> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult { call_id, content, .. } => Some((call_id.as_str(), content.as_str())),
            _ => None,
        })
        .collect()
}

/// The text of a message: what a user or the model wrote, or a tool's result.
pub(crate) fn message_text(message: &Message) -> &str {
    match message {
        Message::User { text } | Message::Assistant { text, .. } => text,
        Message::ToolResult { content, .. } => content,
    }
}

fn quoted<'a>(ids: impl Iterator<Item = &'a String>) -> String {
    ids.map(|id| format!("`{id}`")).collect::<Vec<_>>().join(", ")
}

/// `role: first 120 chars` of the last message.
fn describe_last_message(request: &Prompt) -> String {
    let Some(last) = request.messages.last() else { return "a request with no messages".into() };
    let (role, text) = match last {
        Message::User { text } => ("user", text.to_string()),
        Message::Assistant { text, .. } => ("assistant", text.to_string()),
        Message::ToolResult { call_id, content, .. } => ("tool", format!("[{call_id}] {content}")),
    };
    format!("a request ending with {role}: {:?}", preview(&text))
}

/// The first 120 characters of a text, enough to see what it was.
fn preview(text: &str) -> String {
    text.chars().take(120).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;

    fn request(reasoning: Vec<Reasoning>) -> Prompt {
        let call = ToolCall { id: "toolu_1".into(), name: "read".into(), arguments: "{}".into() };
        let assistant = Message::Assistant { text: "".into(), tool_calls: vec![call], reasoning };
        Prompt { messages: vec![Message::User { text: "go".into() }, assistant], ..Prompt::default() }
    }

    #[test]
    fn thinking_that_does_not_come_back_is_a_divergence() {
        let thinking = vec![
            Reasoning::Thinking { thinking: "t".into(), signature: Some("sig".into()) },
            Reasoning::RedactedThinking { data: "d".into() },
            Reasoning::ReasoningContent { text: "not required".into() },
        ];
        let ids = ["toolu_1".to_owned()];
        assert_eq!(check_thinking_returned(3, &thinking, &ids, &request(thinking[..2].to_vec())), None);
        let missing = check_thinking_returned(3, &thinking, &ids, &request(Vec::new())).unwrap();
        assert_eq!((missing.check, missing.request_index), ("reasoning.thinking_missing", 3));
        let altered = vec![Reasoning::Thinking { thinking: "t".into(), signature: Some("other".into()) }, thinking[1].clone()];
        assert!(check_thinking_returned(3, &thinking, &ids, &request(altered)).is_some(), "a changed signature is not the block");
        assert_eq!(check_thinking_returned(3, &[], &ids, &request(Vec::new())), None, "no thinking, nothing to send back");
    }
}
