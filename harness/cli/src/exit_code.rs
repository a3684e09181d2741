//! The documented exit codes of `reloop`.

/// Every scenario passed.
pub const SUCCESS: i32 = 0;
/// At least one expectation failed.
pub const EXPECTATIONS_FAILED: i32 = 1;
/// Bad input: a scenario, a recording or the command line.
pub const BAD_INPUT: i32 = 2;
/// reloop itself failed (I/O, a harness error).
pub const INTERNAL: i32 = 3;
/// Interrupted by Ctrl-C, SIGTERM or SIGHUP; the report holds the runs
/// that finished.
pub const INTERRUPTED: i32 = 130;

/// What a code means, in a few words, for messages.
pub fn meaning(code: i32) -> &'static str {
    match code {
        SUCCESS => "success",
        EXPECTATIONS_FAILED => "expectations failed",
        BAD_INPUT => "bad input",
        INTERNAL => "reloop itself failed",
        INTERRUPTED => "interrupted",
        _ => "unknown",
    }
}
