//! Helpers: where the repository is, and how to run the binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// `reloop` with `args`, run from `cwd`.
pub fn reloop(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reloop"))
        .current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the reloop binary runs")
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Writes a file under `dir`, creating parents.
pub fn write(dir: &Path, relative: &str, text: &str) -> PathBuf {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");
    path
}

/// A minimal valid recording answering with one text turn.
pub const ONE_TEXT_RECORDING: &str = "format: reloop.recording/v1\nexchanges:\n  - text: The answer is 42.\n";

/// A minimal valid scenario using `recording.yaml` beside it.
pub const MINIMAL_SCENARIO: &str = "\
model: gpt-4o
system: You are terse.
task: What is the answer?
recording: recording.yaml
expect:
  outcome: final_answer
  final_answer_contains: [\"42\"]
";
