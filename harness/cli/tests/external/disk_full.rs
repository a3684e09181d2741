//! A report that cannot be written (a file-size limit, a full disk): the
//! error names the file and what was being written, the table of what
//! finished still prints, nothing is left beside `OUT`, and the earlier
//! report stays as it was (issue 46).

use std::path::Path;
use std::process::{Command, Output};

use crate::prerequisite::{Needs, Test};
use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, reloop, stderr, stdout, write};

/// This module's tests.
pub fn tests() -> Vec<Test> {
    vec![
        crate::test!(a_file_size_limit_is_an_error_naming_the_file_with_the_table_printed_and_the_earlier_report_intact),
        crate::test!(Needs::Tmpfs, a_full_disk_is_an_error_naming_the_file_with_the_table_printed_and_nothing_left),
    ]
}

/// A directory holding the one-run scenario.
fn scenario_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "scenario.yaml", MINIMAL_SCENARIO);
    dir
}

/// The checks every unwritable report passes: exit 3, `error` naming a
/// file of `out` and the table's write, the results table printed, no
/// `OUT.partial` nor `OUT.publishing` left.
fn assert_reported_without_leftovers(run: &Output, out: &Path, cause: &str) {
    assert_eq!(run.status.code(), Some(3), "{}{}", stdout(run), stderr(run));
    let error = stderr(run);
    assert!(error.contains(&format!("{}.partial/", out.display())) && error.contains("runs.parquet: writing "), "{error}");
    assert!(error.contains(cause), "{error}");
    assert!(stdout(run).contains("final_answer") && !stdout(run).contains("reports:"), "{}", stdout(run));
    for leftover in ["partial", "publishing"] {
        let path = out.with_file_name(format!("out.{leftover}"));
        assert!(!path.exists(), "{} left behind", path.display());
    }
}

/// Regression: under `ulimit -f` the process died of SIGXFSZ with no
/// message at all.
fn a_file_size_limit_is_an_error_naming_the_file_with_the_table_printed_and_the_earlier_report_intact() {
    let dir = scenario_dir();
    let out = dir.path().join("out");
    assert_eq!(reloop(dir.path(), &["run", "scenario.yaml", "--out", "out"]).status.code(), Some(0));
    let earlier = std::fs::read(out.join("runs.parquet")).unwrap();
    // 16 KiB: the run's runs.parquet is about 34 KiB.
    let run = Command::new("bash")
        .args(["-c", "ulimit -f 16; exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_reloop"), "run", "scenario.yaml", "--out", "out"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_reported_without_leftovers(&run, &out, "File too large");
    assert_eq!(std::fs::read(out.join("runs.parquet")).unwrap(), earlier, "the earlier report is as it was");
}

/// A tmpfs of `size` mounted at a new folder of `dir`, unmounted when
/// dropped.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn mount(dir: &Path, size: &str) -> Self {
        let point = dir.join("small");
        std::fs::create_dir(&point).unwrap();
        let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&point).output().unwrap();
        assert!(mounted.status.success(), "mount: {}", stderr(&mounted));
        Self(point)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Regression: a full disk gave `error: External: No space left on
/// device (os error 28)`, twice: no path, no results table, a `.partial`
/// folder left behind. Needs to mount a tmpfs (root, as CI runs).
fn a_full_disk_is_an_error_naming_the_file_with_the_table_printed_and_nothing_left(_mount: &Path) {
    let dir = scenario_dir();
    let disk = SmallDisk::mount(dir.path(), "32k");
    let out = disk.0.join("out");
    let run = reloop(dir.path(), &["run", "scenario.yaml", "--out", out.to_str().unwrap()]);
    assert_reported_without_leftovers(&run, &out, "No space left on device");
}
