//! The provider client: turns the loop's view of the conversation into a
//! provider request, streams the answer back over HTTP, and classifies
//! failures. One module per wire format; this file holds what they share.

mod error;
mod openai_chat;

pub use error::LlmError;
pub use openai_chat::to_chat_request;

use reloop_wire::ModelTurn;

use crate::clock::{SharedClock, with_timeout};
use crate::config::{ProviderConfig, WireFormat};
use crate::message::Message;
use crate::tools::ToolSpec;

/// Everything one model call sends, provider-neutral.
#[derive(Debug, Clone, Copy)]
pub struct LlmRequest<'a> {
    /// The system prompt of this step.
    pub system: &'a str,
    /// The view of the transcript to send (already compacted).
    pub messages: &'a [Message],
    /// The frozen tool declarations.
    pub tools: &'a [ToolSpec],
    /// Ask the model not to call tools (the step budget's last turn). The
    /// tools stay declared so the cached prefix survives.
    pub forbid_tools: bool,
    /// The output slot.
    pub max_output_tokens: u32,
}

/// Talks to one provider endpoint.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    http: reqwest::Client,
    config: ProviderConfig,
    clock: SharedClock,
}

impl ProviderClient {
    /// A client for `config`, timing calls with `clock`.
    pub fn new(config: ProviderConfig, clock: SharedClock) -> Result<Self, LlmError> {
        // Never route through an environment proxy: the harness talks to
        // loopback, and a proxy would see API keys.
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| LlmError::Transport(e.to_string()))?;
        Ok(Self { http, config, clock })
    }

    /// The model requests are made for.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// Streams one model turn, calling `on_text` for each text delta as it
    /// arrives. The whole call is bounded by `timeout` in the run's clock.
    pub async fn stream_turn(
        &self,
        request: &LlmRequest<'_>,
        timeout: std::time::Duration,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelTurn, LlmError> {
        let call = async {
            match self.config.wire {
                WireFormat::OpenaiChat => {
                    openai_chat::stream(&self.http, &self.config, request, on_text).await
                }
            }
        };
        with_timeout(self.clock.as_ref(), timeout, call)
            .await
            .unwrap_or(Err(LlmError::Timeout { after_ms: timeout.as_millis() as u64 }))
    }
}
