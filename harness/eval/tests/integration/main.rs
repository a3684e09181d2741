//! Integration tests of the evaluation library: the loop against the real
//! mock server over loopback, determinism, and the Parquet reports.

mod cache_breaks;
mod compaction;
mod deferred_tools;
mod determinism;
mod faults;
mod http_streaming;
mod loop_behaviour;
mod prompt_cache;
mod recorded_cost;
mod reports;
mod sub_agents;
mod wires;

use std::path::{Path, PathBuf};

/// A bundled scenario by file stem.
pub fn bundled(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(format!("{name}.yaml"))
}
