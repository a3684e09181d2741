//! The mock provider (`docs/architecture.md`): a real HTTP server on loopback that
//! speaks the providers' APIs and answers from a [`Recording`].
//!
//! [`MockServer`] serves many [`Session`]s at once, one per run, addressed by
//! path prefix. A session counts every prompt it receives with a real BPE
//! tokenizer ([`tokens`]), simulates the provider's prompt cache
//! ([`cache_sim`]), enforces the context window with the provider's own error
//! body, and refuses requests the recording cannot answer as a
//! [`Divergence`]: it never guesses.

pub mod anthropic_cache;
pub mod api_errors;
pub mod auxiliary;
mod body_timeout;
pub mod cache_explain;
pub mod cache_sim;
pub mod call_ids;
pub mod connections;
pub mod divergence;
pub mod fault;
pub mod json_log;
pub mod live;
pub mod pacing;
pub mod provider_context;
pub mod provider_tokens;
pub mod raw_reply;
pub mod record;
pub mod recording;
pub mod recovery;
pub mod render;
pub mod sent;
pub mod server;
pub mod session;
pub mod session_name;
pub mod stages;
pub mod stream_plan;
pub mod tokens;
pub mod tool_results;

pub use connections::ConnectionLimits;
pub use divergence::Divergence;
pub use fault::{Fault, FaultSpec};
pub use pacing::{NoPacer, Pacer, RealPacer};
pub use recording::Recording;
pub use server::{DEFAULT_SESSION, MockServer, Registry, SessionFactory, SessionLimits, SessionRefusal, recording_factory, scenario_factory};
pub use session::{RequestRecord, Session, SessionConfig};
pub use tokens::TokenCounter;
