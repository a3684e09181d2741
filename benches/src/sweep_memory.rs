//! Peak memory against the number of runs (issue 44): a sweep of N copies
//! of a suite and one of 5N, each a process of its own, and the ratio of
//! their peak resident sets against the goal (at most 1.10 for 5× the runs).
//!
//! The copies are made as `benches/scale/run.sh` makes them, so the two
//! measure the same sweeps: every scenario of the suite's folder (not its
//! subfolders, and not its recordings) written N times with `-cK` appended to
//! its name and its recording named by absolute path (shared, not copied).

use std::path::{Path, PathBuf};

use crate::figures::{Sample, listed, measure, median, mib, path_str};

/// The goal: peak RSS of the 5N sweep ÷ that of the N sweep.
pub const GOAL: f64 = 1.10;

/// The strategies every sweep runs, as the scale bench's.
const STRATEGIES: &str = "roku,opencode,codex,masking,none";

/// A suite swept: its label, its folder (relative to the repository) and N.
#[derive(Debug, Clone)]
pub struct Suite {
    /// `short` or `long`.
    pub label: &'static str,
    /// The folder whose scenarios are copied.
    pub folder: PathBuf,
    /// Copies of the smaller sweep; the larger has 5×.
    pub copies: usize,
}

/// Writes `copies` renamed copies of every scenario of `source` into `dest`;
/// returns how many files it wrote.
pub fn copy_suite(source: &Path, dest: &Path, copies: usize) -> Result<usize, String> {
    let io = |path: &Path, e: std::io::Error| format!("{}: {e}", path.display());
    let source = source.canonicalize().map_err(|e| io(source, e))?;
    std::fs::create_dir_all(dest).map_err(|e| io(dest, e))?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&source)
        .map_err(|e| io(&source, e))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    let mut written = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| io(&file, e))?;
        if text.lines().any(|line| line.starts_with("format: reloop.recording")) {
            continue;
        }
        let stem = file.file_stem().and_then(|stem| stem.to_str()).ok_or_else(|| format!("{}: not UTF-8", file.display()))?;
        for k in 1..=copies {
            let target = dest.join(format!("{stem}-c{k}.yaml"));
            std::fs::write(&target, renamed(&text, k, &source)).map_err(|e| io(&target, e))?;
            written += 1;
        }
    }
    Ok(written)
}

/// `text` with `-cK` after its top-level `name:` and its top-level
/// `recording:` made absolute under `folder`.
fn renamed(text: &str, k: usize, folder: &Path) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let (body, end) = line.strip_suffix('\n').map_or((line, ""), |body| (body, "\n"));
        if let Some(name) = body.strip_prefix("name: ") {
            out.push_str(&format!("name: {name}-c{k}{end}"));
        } else if let Some(recording) = body.strip_prefix("recording: ") {
            out.push_str(&format!("recording: {}{end}", folder.join(recording).display()));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A suite's copies, written once and swept on every repeat.
struct Copies {
    /// Copies of the suite.
    copies: usize,
    /// Scenario files written (runs: × 5 strategies, less the runs left out).
    scenarios: usize,
    /// Where they are, with the sweeps' report beside them.
    dir: PathBuf,
}

impl Copies {
    fn write(suite: &Suite, copies: usize, work: &Path) -> Result<Self, String> {
        let dir = work.join(format!("{}-{copies}", suite.label));
        let scenarios = copy_suite(&suite.folder, &dir.join("scenarios"), copies)?;
        Ok(Self { copies, scenarios, dir })
    }

    /// Sweeps the copies with `reloop` on 2 jobs, as a process of its own.
    fn sweep(&self, reloop: &Path) -> Result<Sample, String> {
        let (scenarios, out) = (self.dir.join("scenarios"), self.dir.join("out"));
        let args = ["sweep", path_str(&scenarios)?, "--strategies", STRATEGIES, "--jobs", "2", "--out", path_str(&out)?];
        // Exit 1: a strategy failed a scenario's expectations (`none` overflows the long suite).
        let sample = measure(reloop, &args, &[], &self.dir, &[0, 1]);
        let _ = std::fs::remove_dir_all(&out);
        sample
    }
}

/// Measures every suite at N and 5N copies, `repeats` times in turn (N,
/// then 5N, then N again: both sizes under the same load), prints every
/// sweep's peak RSS, the medians and their ratio against [`GOAL`]; returns
/// the ratios, in order. One sample each was not a measure: the same sweep's
/// peak moved by 4 MiB from one process to the next (when the allocator's
/// threads happened to hold their freed pages), as much as 5× the runs added.
pub fn bench(reloop: &Path, suites: &[Suite], work: &Path, repeats: usize) -> Result<Vec<f64>, String> {
    println!("peak memory against runs: reloop sweep of N and 5N copies, {STRATEGIES}, 2 jobs, {repeats} repeats in turn; reloop: {}", reloop.display());
    println!("{:<6} {:>6} {:>10} {:>12} {:>30} {:>9}", "suite", "copies", "scenarios", "median MiB", "every run, MiB", "wall s");
    let mut ratios = Vec::new();
    for suite in suites {
        let sizes = [Copies::write(suite, suite.copies, work)?, Copies::write(suite, suite.copies * 5, work)?];
        let mut peaks = [Vec::new(), Vec::new()];
        let mut walls = [Vec::new(), Vec::new()];
        for _ in 0..repeats {
            for (size, (peaks, walls)) in sizes.iter().zip(peaks.iter_mut().zip(&mut walls)) {
                let sample = size.sweep(reloop)?;
                peaks.push(mib(sample.peak_rss_kib));
                walls.push(sample.wall.as_secs_f64());
            }
        }
        let mut medians = [0.0; 2];
        for ((size, median_peak), (peaks, walls)) in sizes.iter().zip(&mut medians).zip(peaks.iter_mut().zip(&mut walls)) {
            let every = listed(peaks, 1);
            *median_peak = median(peaks);
            println!("{:<6} {:>6} {:>10} {:>12.1} {every:>30} {:>9.1}", suite.label, size.copies, size.scenarios, *median_peak, median(walls));
        }
        for size in &sizes {
            let _ = std::fs::remove_dir_all(&size.dir);
        }
        let ratio = medians[1] / medians[0];
        let held = if ratio <= GOAL { "held" } else { "not held" };
        println!("{:<6} median peak RSS, 5N ÷ N: {ratio:.2}  goal ≤ {GOAL:.2}: {held}", suite.label);
        ratios.push(ratio);
    }
    Ok(ratios)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_gets_its_own_name_and_the_recording_by_absolute_path() {
        let text = "name: fix-bug\ndescription: |\n  name: not this one\nrecording: fix-bug.recording.yaml\nmax_steps: 4";
        let copied = renamed(text, 3, Path::new("/suite"));
        assert_eq!(copied, "name: fix-bug-c3\ndescription: |\n  name: not this one\nrecording: /suite/fix-bug.recording.yaml\nmax_steps: 4");
    }

    #[test]
    fn recordings_and_subfolders_are_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("suite");
        std::fs::create_dir_all(source.join("nested")).unwrap();
        std::fs::write(source.join("a.yaml"), "name: a\nrecording: a.recording.yaml\n").unwrap();
        std::fs::write(source.join("a.recording.yaml"), "format: reloop.recording/v2\n").unwrap();
        std::fs::write(source.join("nested/b.yaml"), "name: b\n").unwrap();
        let dest = dir.path().join("copies");
        assert_eq!(copy_suite(&source, &dest, 2).unwrap(), 2);
        let mut names: Vec<String> = std::fs::read_dir(&dest).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, ["a-c1.yaml", "a-c2.yaml"]);
        let recording = source.canonicalize().unwrap().join("a.recording.yaml");
        assert_eq!(std::fs::read_to_string(dest.join("a-c2.yaml")).unwrap(), format!("name: a-c2\nrecording: {}\n", recording.display()));
    }
}
