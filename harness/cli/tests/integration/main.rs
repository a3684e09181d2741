//! Integration tests of the `reloop` binary: the real executable, real
//! files in a temporary directory, real loopback HTTP. One test binary for
//! the crate (ripgrep's habit), which links once.

mod tables;
mod util;

mod architecture_doc;
mod bad_input;
mod compare;
mod detectors;
mod estimate;
mod export;
mod file_kinds;
mod golden_reports;
mod help;
mod hostile_input;
mod html_report;
mod import;
mod import_agent;
mod import_agent_claude;
mod import_otlp;
mod live_hostile;
mod mcp;
mod nothing_lost;
mod paired;
mod plugin_strategies;
mod prices;
mod provider_context;
mod record;
mod recorded_usage;
mod repeat;
mod rerecord;
mod resume;
mod retention;
mod run_suite;
mod scenario_limits;
mod schema;
mod sdk_async_openai;
mod sent_messages;
mod serve;
pub mod serve_limits;
mod serve_live;
mod serve_raw;
mod shards;
pub mod shell_agent;
mod sweep;
mod tool_side;
mod validate;
mod verdicts;
