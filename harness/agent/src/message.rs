//! The conversation as the loop keeps it: the wire crate's [`Message`], so
//! the transcript is sent without conversion.
//!
//! The transcript only grows (as in Roku's `LoopState::history`); what is sent
//! to the provider is a *view* of it built each step, so compaction never loses
//! the original and the harness can price the uncompacted counterfactual.

pub use reloop_wire::{Message, Reasoning};
