//! The replay layer: one session answering decoded requests from a
//! recording (stages, divergence, faults, the cache and context models,
//! token counting, the provider-side context management, the reply), with
//! no HTTP. The [`crate::http`] layer above it decodes requests and sends
//! replies; nothing here imports it.

pub(crate) mod anthropic_cache;
pub mod auxiliary;
pub mod cache_explain;
pub(crate) mod cache_sim;
pub(crate) mod call_ids;
pub(crate) mod divergence;
pub(crate) mod fault_plan;
pub mod pacing;
pub(crate) mod provider_context;
pub(crate) mod provider_tokens;
pub(crate) mod recovery;
pub(crate) mod render;
pub mod sent;
pub mod session;
pub(crate) mod stages;
pub(crate) mod stream_plan;
pub mod tokens;
pub mod tool_results;
pub mod trigger;
