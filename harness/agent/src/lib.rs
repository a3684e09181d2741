//! The agent loop under test (`docs/architecture.md`): the Roku runtime's loop with
//! the best ideas of OpenCode, pi-mono, Codex and ZeroClaw.
//!
//! [`AgentLoop`] runs one task against a provider it reaches over HTTP
//! through [`ProviderClient`], executing tools through a [`ToolRuntime`] and
//! reporting every decision as a [`LoopEvent`]. It knows nothing of the
//! harness: it gets a base URL, an API key, tools and a [`Clock`], exactly as
//! an application embedding it would.
//!
//! Each step runs in phases (see `runtime_loop`): prepare the context
//! (frozen tool schema, Layer 0 microcompaction, cache fingerprint), call the
//! model (streamed), act on the decision (tools, pseudo-tools, doom-loop
//! check, path grounding), record the step.
//!
//! The loop and its HTTP client are the `runtime` feature (on by default).
//! Without it the crate is what a scenario file describes a loop with:
//! settings, outcomes, messages, tools and strategies, with no HTTP stack.

pub mod cache_break;
pub mod client;
pub mod clock;
pub mod config;
pub mod context;
pub mod deferred_tools;
pub mod doom_loop;
pub mod estimate;
pub mod event;
pub mod grounding;
pub mod message;
pub mod outcome;
pub mod output_guard;
pub mod price_table;
pub mod prompts;
pub mod risk;
#[cfg(feature = "runtime")]
mod runtime_loop;
pub mod shell;
pub mod state;
pub mod sub_agent;
pub mod task_store;
pub mod text_tools;
pub mod tool_schema;
pub mod tool_set;
pub mod tools;

#[cfg(feature = "runtime")]
pub use client::ProviderClient;
pub use client::{LlmError, LlmRequest, ProviderConfig, RetryPolicy, WireFormat};
pub use clock::{Clock, RealClock, SharedClock, VirtualClock};
pub use config::{LoopSettings, ToolExecution};
pub use doom_loop::{DoomLoopConfig, DoomLoopKind, DoomLoopReaction};
pub use event::{LoopEvent, LoopEventSender, TimedEvent, ViewChange};
pub use message::Message;
pub use outcome::Outcome;
pub use risk::{Approval, ApprovalGate, AutoApprove};
#[cfg(feature = "runtime")]
pub use runtime_loop::{AgentLoop, LoopDeps, SKIPPED_FOR_STEERING, SystemPromptSource, UserChannel};
pub use state::{CallPurpose, CallRecord, LoopState, LoopStatus, SubAgentLink};
pub use tools::{DeclaredRisk, ToolContext, ToolInvocation, ToolOutput, ToolRuntime, ToolSpec, ToolTraits};
