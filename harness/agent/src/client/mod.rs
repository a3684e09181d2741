//! The provider client: turns the loop's view of the conversation into a
//! provider request, streams the answer back over HTTP ([`http`], with the
//! `runtime` feature), and classifies failures. What a request is, how its
//! failures read and when to retry need no HTTP, so the scenario files
//! describe a loop's settings without pulling in an HTTP client.

mod body_buffers;
pub mod cache_breakpoints;
mod error;
#[cfg(feature = "runtime")]
mod formats;
#[cfg(feature = "runtime")]
mod http;
mod retry;
#[cfg(feature = "runtime")]
mod tls;

pub use error::LlmError;
#[cfg(feature = "runtime")]
pub use http::ProviderClient;
pub use retry::{RetryPolicy, parse_retry_after};
#[cfg(feature = "runtime")]
pub use tls::ensure_crypto_provider;

use reloop_wire::context_management::ContextManagement;
use reloop_wire::{Prompt, ToolChoice};

use crate::message::{Message, Reasoning};
use crate::tool_schema::FrozenToolSchema;

/// Which provider API the client speaks: the wire crate's formats.
pub use reloop_wire::Format as WireFormat;

/// Where and how to reach the provider.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Base URL up to and including `/v1`, e.g. `http://127.0.0.1:4000/s/x/v1`.
    pub base_url: String,
    /// Sent as a bearer token; never logged.
    pub api_key: String,
    /// The API spoken.
    pub wire: WireFormat,
    /// The model name sent with each request.
    pub model: String,
    /// Where Anthropic requests carry `cache_control` breakpoints.
    pub cache_breakpoints: cache_breakpoints::CacheBreakpointSettings,
    /// The provider-side context management every request asks for
    /// (`strategy: native`, [`crate::context::native`]); `None` for the others.
    pub context_management: Option<ContextManagement>,
}

/// Everything one model call sends, provider-neutral.
#[derive(Debug, Clone, Copy)]
pub struct LlmRequest<'a> {
    /// The system prompt of this step.
    pub system: &'a str,
    /// The view of the transcript to send (already compacted).
    pub messages: &'a [Message],
    /// The frozen tool declarations, sent as their frozen bytes.
    pub tools: &'a FrozenToolSchema,
    /// Ask the model not to call tools (the step budget's last turn). The
    /// tools stay declared so the cached prefix survives.
    pub forbid_tools: bool,
    /// The output slot.
    pub max_output_tokens: u32,
    /// Stream the answer (false for output-slot escalation, as in Roku).
    pub stream: bool,
}

/// The provider-neutral form of `request`: what every wire format renders.
/// Public so the harness can price a counterfactual view with exactly what
/// the loop would have sent.
pub fn to_prompt(model: &str, request: &LlmRequest<'_>) -> Prompt {
    Prompt { tools: request.tools.specs().to_vec(), messages: since_latest_compaction(request.messages).to_vec(), ..prompt_head(model, request) }
}

/// [`to_prompt`] without the messages, which the body writer reads where
/// they are, and without the tools, which the body carries as frozen bytes.
pub(super) fn prompt_head(model: &str, request: &LlmRequest<'_>) -> Prompt {
    Prompt {
        model: model.to_owned(),
        system: Some(request.system.to_owned()),
        messages: Vec::new(),
        tools: Vec::new(),
        tool_choice: if request.forbid_tools { ToolChoice::None } else { ToolChoice::Auto },
        max_output_tokens: Some(request.max_output_tokens),
        stream: request.stream,
        include_usage: request.stream,
        context_management: None,
    }
}

/// `messages` from the latest turn that carries a Responses `compaction`
/// item: that item holds what came before it, and the provider documents
/// that the items before the latest one may be dropped. All of `messages`
/// when none does.
pub(super) fn since_latest_compaction(messages: &[Message]) -> &[Message] {
    let compacted = |message: &Message| match message {
        Message::Assistant { reasoning, .. } => reasoning.iter().any(|r| matches!(r, Reasoning::ResponsesCompaction { .. })),
        _ => false,
    };
    &messages[messages.iter().rposition(compacted).unwrap_or(0)..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_turn_keeps_tools_but_forbids_them() {
        let spec = reloop_wire::ToolSpec { name: "read".into(), description: "r".into(), parameters: serde_json::json!({"type": "object"}) };
        let tools = FrozenToolSchema::freeze(vec![spec], WireFormat::OpenaiChat, &Default::default());
        let request = LlmRequest { system: "s", messages: &[], tools: &tools, forbid_tools: true, max_output_tokens: 10, stream: true };
        let prompt = to_prompt("m", &request);
        assert_eq!(prompt.tools.len(), 1);
        assert_eq!(prompt.tool_choice, ToolChoice::None);
        assert!(prompt.include_usage);
    }

    /// A Responses compaction item stands for everything before it: the
    /// request starts at the latest turn that carries one, and keeps it.
    #[test]
    fn the_request_starts_at_the_latest_compaction_item() {
        let compacted = |content: &str| Message::Assistant {
            text: "".into(),
            tool_calls: Vec::new(),
            reasoning: vec![Reasoning::ResponsesCompaction { id: None, encrypted_content: content.into() }],
        };
        let transcript = vec![Message::user("task"), compacted("first"), Message::user("more"), compacted("second"), Message::user("then")];
        let tools = FrozenToolSchema::none();
        let request = |messages| LlmRequest { system: "s", messages, tools: &tools, forbid_tools: false, max_output_tokens: 10, stream: true };
        assert_eq!(to_prompt("m", &request(&transcript)).messages, transcript[3..]);
        assert_eq!(to_prompt("m", &request(&transcript[..3])).messages, transcript[1..3]);
        assert_eq!(to_prompt("m", &request(&transcript[..1])).messages, transcript[..1], "none: all of it");
    }
}
