//! Evaluation (ARCHITECTURE §1, §5, §6): scenarios, fixture tools, the
//! runner, metrics, expectations and Parquet reports.
//!
//! [`Scenario::load`] reads a scenario and its recording; [`run_all`] runs a
//! batch, each run against its own mock server over loopback HTTP; every run
//! ends as a [`RunReport`], which [`report::write_reports`] turns into the
//! three Parquet tables.

mod collect;
pub mod estimator_report;
pub mod expect;
pub mod fixture_tools;
pub mod input_file;
pub mod report;
pub mod result;
pub mod runner;
pub mod scenario;
pub mod script;
pub mod sweep;
pub mod validate_settings;
pub mod yaml;
mod yaml_locate;

pub use reloop_agent::Outcome;
pub use result::{EventRow, RunMetrics, RunReport, StepRow};
pub use runner::{RunOptions, run_all, run_scenario};
pub use scenario::{Scenario, discover};
pub use yaml::InputError;
