//! Integration tests of the `reloop` binary: the real executable, real
//! files in a temporary directory, real loopback HTTP. One test binary for
//! the crate (ripgrep's habit), which links once.

mod util;

mod bad_input;
mod compare;
mod estimate;
mod html_report;
mod run_suite;
mod sdk_async_openai;
mod serve;
mod shards;
mod validate;
mod sweep;
