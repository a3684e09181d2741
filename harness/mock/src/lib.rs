//! The mock provider (`docs/architecture.md`): a real HTTP server on loopback that
//! speaks the providers' APIs and answers from a [`Recording`].
//!
//! Two layers. [`replay`] is the provider without a network: a
//! [`Session`] takes one decoded request and answers it from the recording,
//! counting every prompt with a real BPE tokenizer ([`tokens`]), simulating
//! the provider's prompt cache and its context management, enforcing the
//! context window and refusing requests the recording cannot answer as a
//! [`Divergence`]: it never guesses. [`http`] puts it on the wire:
//! [`MockServer`] serves many sessions at once, one per run, addressed by
//! path prefix (`reloop_recording::session_path`), and forwards calls live or
//! records a proxy's traffic. The replay layer imports nothing of the HTTP
//! one, nor axum, hyper or reqwest.
//!
//! The modules other crates read are re-exported here; the rest is private.

mod http;
mod replay;

pub use http::{connections, json_log, live, record};
pub use replay::{auxiliary, cache_explain, pacing, sent, session, tokens, tool_results};

pub use connections::ConnectionLimits;
pub use http::{MockServer, Registry, SessionFactory, SessionLimits, SessionRefusal, WentLive, recording_factory, scenario_factory};
pub use pacing::{NoPacer, Pacer, RealPacer};
pub use reloop_recording::Recording;
pub use reloop_recording::fault::{Fault, FaultSpec};
pub use reloop_recording::session_path::DEFAULT_SESSION;
pub use replay::divergence::Divergence;
pub use session::{ReplayRequest, RequestRecord, Session, SessionConfig};
pub use tokens::TokenCounter;
