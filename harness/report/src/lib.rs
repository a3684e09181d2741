//! Decisions from reports (`docs/architecture.md`): this crate reads the
//! Parquet tables a run wrote and knows nothing of how they were made.
//!
//! [`Runs::load`] reads `runs.parquet` by column name (extra columns are
//! tolerated, missing optional ones are null); [`compare::compare`] joins two
//! of them on (scenario, variant) into a [`compare::Comparison`];
//! [`gates::GateSet`] judges it; the [`render`] modules turn the verdict into
//! a terminal table, JSON, a pull-request comment, GitHub annotations; the
//! [`html`] module draws a self-contained page, with a sweep's
//! [`strategy_totals`] and their cost–retention frontier; [`merge`] joins shards;
//! [`detectors`] scores the doom-loop detectors against a labelled suite.

pub mod cache_causes;
pub mod compare;
pub mod detectors;
pub mod error;
pub mod escape;
pub mod export;
pub mod figures;
pub mod first_named;
mod gate_noise;
mod gate_result;
pub mod gates;
pub mod html;
pub mod merge;
pub mod paired;
pub mod render;
pub mod runs;
pub mod stats;
pub mod strategy_totals;
pub mod table;
pub mod trial_stats;
pub mod trials;

pub use error::ReportError;
pub use runs::Runs;
