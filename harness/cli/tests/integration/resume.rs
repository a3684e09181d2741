//! `--resume OUT`: a sweep killed with SIGKILL once its first checkpoint is
//! on disk goes on where it stopped, and its report holds the rows one
//! uninterrupted sweep writes; a finished report resumed runs nothing.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::golden_reports::report_differences;
use crate::tables::read_rows;
use crate::util::{repo, stderr};

const SWEEP: [&str; 6] = ["sweep", "scenarios/long/", "--strategies", "none,roku", "--jobs", "1"];

fn sweep(extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_reloop")).current_dir(repo()).args(SWEEP).args(extra).env("NO_COLOR", "1").output().expect("the reloop binary runs")
}

/// Starts the sweep into `out`, checkpointing after every run, and kills
/// it (SIGKILL: nothing gets to publish) once its first checkpoint is
/// written, with most of its runs to go.
fn sweep_killed_after_a_checkpoint(out: &Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .current_dir(repo())
        .args(SWEEP)
        .args(["--checkpoint-secs", "0", "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the reloop binary starts");
    let part = out.with_file_name(format!("{}.partial/part-00001", out.file_name().unwrap().to_string_lossy()));
    let started = Instant::now();
    while !part.exists() {
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before its first checkpoint");
        assert!(started.elapsed() < Duration::from_secs(120), "no checkpoint within 120 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out.join("runs.parquet").exists(), "a killed sweep publishes nothing");
}

#[test]
fn a_sweep_killed_mid_way_and_resumed_writes_the_rows_of_one_uninterrupted_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, cut) = (dir.path().join("whole"), dir.path().join("cut"));
    let uninterrupted = sweep(&["--out", whole.to_str().unwrap()]);
    sweep_killed_after_a_checkpoint(&cut);

    let resumed = sweep(&["--resume", cut.to_str().unwrap()]);
    assert_eq!(resumed.status.code(), uninterrupted.status.code(), "{}", stderr(&resumed));
    let said = stderr(&resumed);
    let line = said.lines().find(|line| line.starts_with("resuming: ")).unwrap_or_else(|| panic!("{said}"));
    let finished: usize = line["resuming: ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!((1..10).contains(&finished), "some of the 10 runs finished before the kill, not all: {line}");
    let differences = report_differences(&whole, &cut);
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
    assert!(!cut.with_file_name("cut.partial").exists() && !cut.with_file_name("cut.resuming").exists(), "nothing is left beside the report");

    // Resumed again, the finished report runs nothing and keeps every row.
    let again = sweep(&["--resume", cut.to_str().unwrap()]);
    assert!(stderr(&again).contains("resuming: 10 runs finished"), "{}", stderr(&again));
    assert_eq!(read_rows(&cut.join("runs.parquet")).len(), 10);
    assert!(report_differences(&whole, &cut).is_empty());
}

#[test]
fn resume_and_out_together_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let both = sweep(&["--out", dir.path().to_str().unwrap(), "--resume", dir.path().to_str().unwrap()]);
    assert_eq!(both.status.code(), Some(2));
    assert!(stderr(&both).contains("cannot be used with"), "{}", stderr(&both));
}
