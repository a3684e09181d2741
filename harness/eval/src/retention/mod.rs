//! Retention (`docs/metrics.md`, "Retention"): what a run's context still
//! held of what its actions needed. [`spans`] holds the span rules, [`run`]
//! measures a run from what the server was sent, and [`recorded`] measures
//! what an imported session's own compactions dropped.

pub mod recorded;
pub mod run;
pub mod spans;
