//! Integration tests of the `reloop` binary that reach outside the
//! workspace: agent processes (their groups, signals, environment), the
//! official Python SDKs, real agents from npm, a full disk. A harness of
//! its own (libtest-mimic), because what they need is only known when
//! they run: a test whose prerequisite is missing is listed as ignored,
//! which nextest reports as skipped, and fails under `CI=true`, naming the
//! prerequisite and how to install it (`prerequisite.rs`).

mod prerequisite;
#[path = "../integration/shell_agent.rs"]
mod shell_agent;
#[allow(dead_code, reason = "shared with tests/integration, which uses what this binary does not")]
#[path = "../integration/tables.rs"]
mod tables;
#[allow(dead_code, reason = "shared with tests/integration, which uses what this binary does not")]
#[path = "../integration/util.rs"]
mod util;

mod black_box;
mod black_box_truth;
mod disk_full;
mod mcp;
mod rerecord;
mod serve;
mod tool_side_mount;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let tests = [black_box::tests(), black_box_truth::tests(), disk_full::tests(), mcp::tests(), rerecord::tests(), serve::tests(), tool_side_mount::tests()]
        .into_iter()
        .flatten()
        .collect();
    libtest_mimic::run(&args, prerequisite::trials(&args, tests)).exit();
}
