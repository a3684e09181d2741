//! Evaluation (`docs/architecture.md`): scenarios, fixture tools, the
//! runner, metrics, expectations and Parquet reports.
//!
//! [`Plan::validate`] checks every scenario of a batch up front and keeps
//! only their paths and names; [`run_all`] runs the batch, loading each
//! scenario when its runs start, each run against its own mock server over
//! loopback HTTP; every run ends as a [`RunReport`], which
//! [`report::ReportStream`] appends to the three Parquet tables before it is
//! dropped, keeping only its [`RunSummary`].

pub mod black_box;
pub mod cache_breaks;
pub mod call_shares;
pub mod call_site;
mod collect;
mod compaction_tokens;
pub mod estimator_report;
pub mod expect;
pub mod fixture_tools;
pub mod live_run;
pub mod plan;
pub mod recorded_pricing;
pub mod references;
pub mod report;
pub mod result;
pub mod retention;
pub mod run_figures;
mod run_metrics;
pub mod run_mock;
pub mod run_summary;
pub mod runner;
pub mod scenario;
pub mod script;
mod sent_messages;
pub mod sweep;
pub mod token_fit;

pub use plan::Plan;
pub use reloop_agent::Outcome;
/// The file loaders, checks and writers, from their one home.
pub use reloop_files::{input_error, input_file, recording_file, validate_settings, yaml};
pub use result::{EventRow, RunMetrics, RunReport, StepRow};
pub use run_figures::RunFigures;
pub use run_summary::{RunSummary, RunTexts, SharedNames};
pub use runner::{RunOptions, run_all, run_scenario};
pub use scenario::{Discovered, Scenario, ScenarioFile, discover};
pub use yaml::InputError;

/// The hasher of the crate's maps keyed by content hashes or call ids,
/// looked up per message per request: foldhash's fast mix, where std's
/// SipHash showed in a replay's profile.
pub(crate) type FastHash = foldhash::fast::RandomState;
