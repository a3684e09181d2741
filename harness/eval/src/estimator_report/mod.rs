//! The loop's token estimator against the reference tokenizer, on files:
//! what `reloop estimate` prints and what its integration test checks.
//!
//! Each file is estimated three ways: Roku's plain bytes/4 (the baseline),
//! the class estimator of `reloop_agent::estimate`, and o200k_base (the
//! reference, as the mock server counts). Files are then grouped by class
//! and the errors summarized as mean absolute percentage errors. A replayed
//! conversation over the same files measures the runtime calibration.

mod files;
mod sequence;

use std::path::{Path, PathBuf};

use reloop_agent::estimate::{TextClass, analyze};
use reloop_mock::tokens::count_text;

use crate::yaml::InputError;
pub use files::expand;
pub use sequence::{CalibrationRun, replay_calibration};

/// Roku's plain heuristic, the baseline: one token per 4 bytes.
pub const BASELINE_BYTES_PER_TOKEN: u64 = 4;
/// The group of a file no single class dominates.
pub const MIXED: &str = "mixed";

/// One file's estimates.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEstimate {
    /// The file.
    pub path: PathBuf,
    /// The class it is judged under: its directory's, when the directory is
    /// named after a class (the corpus layout), else the detected one.
    pub group: String,
    /// The class the estimator detected, `None` when mixed.
    pub detected: Option<TextClass>,
    /// Size in bytes.
    pub bytes: u64,
    /// Bytes/4.
    pub baseline: u64,
    /// The class estimator's count.
    pub estimate: u64,
    /// o200k_base's count.
    pub reference: u64,
}

impl FileEstimate {
    /// Measures `text`, read from `path`.
    pub fn measure(path: &Path, text: &str) -> Self {
        let analysis = analyze(text);
        let detected = analysis.dominant_class();
        let detected_name = detected.map_or(MIXED, TextClass::as_str);
        let group = directory_class(path).unwrap_or(detected_name).to_owned();
        let bytes = text.len() as u64;
        Self {
            path: path.to_owned(),
            group,
            detected,
            bytes,
            baseline: bytes.div_ceil(BASELINE_BYTES_PER_TOKEN),
            estimate: analysis.rounded(),
            reference: count_text(text),
        }
    }

    /// The detected class's name (`mixed` when none dominates).
    pub fn detected_name(&self) -> &'static str {
        self.detected.map_or(MIXED, TextClass::as_str)
    }

    /// Signed relative error of the class estimator (0.1 = 10 % over).
    pub fn error(&self) -> f64 {
        relative_error(self.estimate, self.reference)
    }

    /// Signed relative error of bytes/4.
    pub fn baseline_error(&self) -> f64 {
        relative_error(self.baseline, self.reference)
    }
}

/// The errors over the files of one class.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSummary {
    /// The group name.
    pub class: String,
    /// Files in it.
    pub files: usize,
    /// Mean absolute percentage error of bytes/4, as a fraction.
    pub baseline_mape: f64,
    /// Mean absolute percentage error of the class estimator, as a fraction.
    pub estimator_mape: f64,
}

/// Everything `reloop estimate` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimatorReport {
    /// Per file, in the order given (directories sorted).
    pub files: Vec<FileEstimate>,
    /// Per group, in name order.
    pub classes: Vec<ClassSummary>,
    /// The calibration replayed over the same files.
    pub calibration: CalibrationRun,
}

/// Measures every file under `paths` (directories expand to their files).
pub fn estimator_report(paths: &[PathBuf]) -> Result<EstimatorReport, InputError> {
    let mut texts = Vec::new();
    for path in expand(paths)? {
        let bytes = std::fs::read(&path).map_err(|e| InputError::file(&path, format!("cannot read: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|_| InputError::file(&path, "not UTF-8 text"))?;
        texts.push((path, text));
    }
    let files: Vec<FileEstimate> = texts.iter().map(|(path, text)| FileEstimate::measure(path, text)).collect();
    let classes = summarize(&files);
    let calibration = replay_calibration(&texts);
    Ok(EstimatorReport { files, classes, calibration })
}

/// One summary per group, in name order.
pub fn summarize(files: &[FileEstimate]) -> Vec<ClassSummary> {
    let mut groups: Vec<&str> = files.iter().map(|f| f.group.as_str()).collect();
    groups.sort_unstable();
    groups.dedup();
    groups
        .into_iter()
        .map(|class| {
            let members: Vec<&FileEstimate> = files.iter().filter(|f| f.group == class).collect();
            ClassSummary {
                class: class.to_owned(),
                files: members.len(),
                baseline_mape: mean(members.iter().map(|f| f.baseline_error().abs())),
                estimator_mape: mean(members.iter().map(|f| f.error().abs())),
            }
        })
        .collect()
}

/// The class a directory is named after (`corpus/code/x.rs` → `code`).
fn directory_class(path: &Path) -> Option<&'static str> {
    let parent = path.parent()?.file_name()?.to_str()?;
    TextClass::ALL.iter().map(|c| c.as_str()).chain([MIXED]).find(|name| *name == parent)
}

/// `(estimate − reference) / reference`; 0 when both are 0.
pub fn relative_error(estimate: u64, reference: u64) -> f64 {
    if reference == 0 {
        return if estimate == 0 { 0.0 } else { 1.0 };
    }
    (estimate as f64 - reference as f64) / reference as f64
}

/// The mean, 0 for no values.
pub fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_class_directory_else_by_detection() {
        let prose = "The scheduler takes a lease on the job before starting it, so that two instances never run it twice.";
        let in_dir = FileEstimate::measure(Path::new("corpus/mixed/a.txt"), prose);
        assert_eq!((in_dir.group.as_str(), in_dir.detected_name()), ("mixed", "prose"));
        let elsewhere = FileEstimate::measure(Path::new("notes/a.txt"), prose);
        assert_eq!(elsewhere.group, "prose");
        assert_eq!(elsewhere.baseline, (prose.len() as u64).div_ceil(4));
        assert!(elsewhere.reference > 0 && elsewhere.estimate > 0);
    }

    #[test]
    fn summaries_average_absolute_errors() {
        let file = |group: &str, estimate, reference| FileEstimate {
            path: PathBuf::from("f"),
            group: group.to_owned(),
            detected: None,
            bytes: 400,
            baseline: 100,
            estimate,
            reference,
        };
        let summaries = summarize(&[file("b", 90, 100), file("a", 110, 100), file("a", 100, 125)]);
        assert_eq!(summaries.iter().map(|s| s.class.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(summaries[0].files, 2);
        assert!((summaries[0].estimator_mape - 0.15).abs() < 1e-12);
        assert!((summaries[0].baseline_mape - 0.1).abs() < 1e-12);
        assert!((summaries[1].estimator_mape - 0.1).abs() < 1e-12);
    }

    #[test]
    fn relative_errors() {
        assert_eq!(relative_error(0, 0), 0.0);
        assert_eq!(relative_error(3, 0), 1.0);
        assert_eq!(relative_error(80, 100), -0.2);
        assert_eq!(mean(std::iter::empty()), 0.0);
    }
}
