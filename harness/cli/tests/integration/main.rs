//! Integration tests of the `reloop` binary: the real executable, real
//! files in a temporary directory, real loopback HTTP. One test binary for
//! the crate (ripgrep's habit), which links once.

mod tables;
mod util;

mod bad_input;
pub mod black_box;
mod black_box_truth;
mod compare;
mod detectors;
mod estimate;
mod export;
mod file_kinds;
mod golden_reports;
mod hostile_input;
mod prices;
mod provider_context;
mod record;
mod html_report;
mod import;
mod nothing_lost;
mod paired;
mod recorded_usage;
mod repeat;
mod rerecord;
mod run_suite;
mod schema;
mod sdk_async_openai;
mod serve;
pub mod serve_limits;
mod sent_messages;
mod serve_raw;
mod shards;
mod validate;
mod sweep;
mod verdicts;
