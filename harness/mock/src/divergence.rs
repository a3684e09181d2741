//! Divergence: a request the recording cannot answer faithfully. The server
//! never falls back to another answer; it refuses with a clear error and
//! logs what it expected against what came, for the report.

use reloop_wire::openai_chat::{ApiError, ApiErrorBody, ChatMessage, ChatRequest};
use serde::Serialize;

/// The error `type` of a divergence reply, so clients and logs can tell it
/// from a provider error.
pub const DIVERGENCE_ERROR_TYPE: &str = "reloop_divergence";

/// One failed check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// 0-based index of the request in the session.
    pub request_index: usize,
    /// Which check failed: `recording_exhausted`, `tool_results`.
    pub check: &'static str,
    /// What the recording expected.
    pub expected: String,
    /// What the request carried.
    pub actual: String,
}

impl Divergence {
    /// A readable, multi-line account for terminals and reports.
    pub fn render(&self) -> String {
        format!(
            "divergence at request {} ({}):\n  expected: {}\n  actual:   {}",
            self.request_index, self.check, self.expected, self.actual
        )
    }

    /// The error body sent to the client.
    pub fn error_body(&self) -> ApiErrorBody {
        ApiErrorBody {
            error: ApiError {
                message: format!("reloop: {}", self.render()),
                kind: DIVERGENCE_ERROR_TYPE.into(),
                param: None,
                code: Some(self.check.into()),
            },
        }
    }
}

/// The recording has no exchange left for this request.
pub fn recording_exhausted(request_index: usize, exchanges: usize, request: &ChatRequest) -> Divergence {
    Divergence {
        request_index,
        check: "recording_exhausted",
        expected: format!("no further request (the recording has {exchanges} exchanges)"),
        actual: describe_last_message(request),
    }
}

/// Checks that every tool call of the previous exchange is answered.
pub fn check_tool_results(request_index: usize, expected_ids: &[String], request: &ChatRequest) -> Option<Divergence> {
    let answered: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let missing: Vec<&String> = expected_ids.iter().filter(|id| !answered.contains(&id.as_str())).collect();
    (!missing.is_empty()).then(|| Divergence {
        request_index,
        check: "tool_results",
        expected: format!("tool results for {}", join(expected_ids.iter())),
        actual: format!("no result for {}; the request answers [{}]", join(missing.into_iter()), answered.join(", ")),
    })
}

fn join<'a>(ids: impl Iterator<Item = &'a String>) -> String {
    ids.map(|id| format!("`{id}`")).collect::<Vec<_>>().join(", ")
}

/// `role: first 120 chars` of the last message.
fn describe_last_message(request: &ChatRequest) -> String {
    let Some(last) = request.messages.last() else { return "a request with no messages".into() };
    let (role, text) = match last {
        ChatMessage::System { content, .. } => ("system", content.to_text()),
        ChatMessage::Developer { content, .. } => ("developer", content.to_text()),
        ChatMessage::User { content, .. } => ("user", content.to_text()),
        ChatMessage::Assistant { content, .. } => ("assistant", content.as_ref().map(|c| c.to_text()).unwrap_or_default()),
        ChatMessage::Tool { content, tool_call_id } => ("tool", format!("[{tool_call_id}] {}", content.to_text())),
    };
    let preview: String = text.chars().take(120).collect();
    format!("a request ending with {role}: {preview:?}")
}
