//! Small helpers for the figures the bench commands print, and the
//! measure of one process (its wall time and peak resident memory).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The median of `values` (sorted in place).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 { values[middle] } else { (values[middle - 1] + values[middle]) / 2.0 }
}

/// `values` as `a / b / c`, with `decimals` decimals.
pub fn listed(values: &[f64], decimals: usize) -> String {
    values.iter().map(|value| format!("{value:.decimals$}")).collect::<Vec<_>>().join(" / ")
}

/// `path` as a command-line argument, which must be UTF-8.
pub fn path_str(path: &Path) -> Result<&str, String> {
    path.to_str().ok_or_else(|| format!("{}: not UTF-8", path.display()))
}

/// One finished process: its wall time and peak resident memory.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Start to exit, as the caller saw it.
    pub wall: Duration,
    /// The kernel's peak resident set (`ru_maxrss` of `wait4`, which
    /// `/usr/bin/time` reports), in KiB.
    pub peak_rss_kib: u64,
}

/// Runs `program args` under `/usr/bin/time`; fails on an exit code not in
/// `exits` (a sweep exits 1 when a strategy fails a scenario's expectations,
/// as the long suite's `none` does).
pub fn measure(program: &Path, args: &[&str], env: &[(&str, &Path)], scratch: &Path, exits: &[i32]) -> Result<Sample, String> {
    let rss_file = scratch.join("peak-rss.txt");
    let mut command = Command::new("/usr/bin/time");
    command.arg("-f").arg("%M").arg("-o").arg(&rss_file).arg(program).args(args).envs(env.iter().copied());
    let start = Instant::now();
    let output = command.stdout(Stdio::null()).stderr(Stdio::piped()).output().map_err(|e| format!("/usr/bin/time: {e}"))?;
    let wall = start.elapsed();
    if !output.status.code().is_some_and(|code| exits.contains(&code)) {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("{} {} failed ({}):\n{stderr}", program.display(), args.join(" "), output.status));
    }
    let text = std::fs::read_to_string(&rss_file).map_err(|e| format!("{}: {e}", rss_file.display()))?;
    // The last line: time writes a note about a signal or exit status before it.
    let peak_rss_kib =
        text.lines().last().and_then(|line| line.trim().parse().ok()).ok_or_else(|| format!("{}: no peak RSS in {text:?}", rss_file.display()))?;
    Ok(Sample { wall, peak_rss_kib })
}

/// KiB as MiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1_024.0
}
