//! `reloop estimate` on the corpus: the class estimator stays within 4 %
//! of o200k in every class of the texts it was tuned on and within 7 % on
//! the held-out texts it never saw, calibration within 5 % on a replayed
//! run, and the command prints what the library measured.

use std::path::PathBuf;

use reloop_eval::estimator_report::{EstimatorReport, estimator_report};

use crate::util::{reloop, repo, stderr, stdout};

/// The corpus's class directories.
const CLASSES: [&str; 5] = ["cjk", "code", "json", "mixed", "prose"];

fn corpus_report() -> EstimatorReport {
    report_of(&repo().join("corpus"))
}

/// The report over the class directories under `root`.
fn report_of(root: &std::path::Path) -> EstimatorReport {
    let dirs: Vec<PathBuf> = CLASSES.iter().map(|class| root.join(class)).collect();
    estimator_report(&dirs).expect("the corpus reads")
}

/// Every class has `min_files` files and a mean error of at most `max_mape`.
fn assert_classes_within(report: &EstimatorReport, min_files: usize, max_mape: f64) {
    let classes: Vec<&str> = report.classes.iter().map(|c| c.class.as_str()).collect();
    assert_eq!(classes, CLASSES);
    for class in &report.classes {
        assert!(class.files >= min_files, "{class:?}");
        assert!(class.estimator_mape <= max_mape, "{}: MAPE {:.1} %", class.class, class.estimator_mape * 100.0);
    }
}

#[test]
fn every_class_is_estimated_within_4_percent_and_calibration_within_5() {
    let report = corpus_report();
    assert_classes_within(&report, 5, 0.04);
    let calibration = &report.calibration;
    assert_eq!(calibration.requests, report.files.len());
    assert!(calibration.calibrated_mape <= 0.05, "{calibration:?}");
}

#[test]
fn held_out_texts_are_estimated_within_7_percent() {
    assert_classes_within(&report_of(&repo().join("corpus/heldout")), 4, 0.07);
}

#[test]
fn the_classifier_agrees_with_the_corpus_layout() {
    let report = corpus_report();
    let pure: Vec<_> = report.files.iter().filter(|f| f.group != "mixed").collect();
    let agree = pure.iter().filter(|f| f.detected_name() == f.group).count();
    assert!(agree * 10 >= pure.len() * 9, "{agree} of {} files detected as their directory's class", pure.len());
}

#[test]
fn the_command_prints_files_classes_and_calibration() {
    let output = reloop(&repo(), &["estimate", "corpus/prose", "corpus/json/k8s_deployment.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("corpus/prose/commit_log.txt") && text.contains("k8s_deployment.yaml"), "{text}");
    assert!(text.contains("MAPE bytes/4") && text.contains("MAPE estimator"), "{text}");
    assert!(text.contains("calibration over 9 requests"), "{text}");
}

#[test]
fn a_missing_path_is_bad_input() {
    let output = reloop(&repo(), &["estimate", "corpus/nope"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("corpus/nope: no such file or directory"), "{}", stderr(&output));
}
