//! `reloop detectors`: each doom-loop detector scored against the labels of
//! a labelled suite (`docs/metrics.md`, "`reloop detectors`"): precision, recall and the mean
//! detection delay in steps from the labelled onset.
//!
//! A run is labelled when its scenario says `expect.doom_loop` (column
//! `doom_loop_expected_kind`: a detector's name, or `none`). For detector K,
//! a run labelled K is a positive, any other labelled run a negative, and K
//! "fired" when `doom_loop_first_step_K` is set. The detectors are the
//! report's `doom_loop_first_step_*` columns, so a new one needs no change
//! here.

use crate::error::ReportError;
use crate::figures;
use crate::table::Table;

/// The column prefix naming each detector's first firing step.
const FIRST_STEP_PREFIX: &str = "doom_loop_first_step_";

/// One detector's score over the labelled runs.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectorScore {
    /// The detector (`identical_calls`, `cycle`, `no_progress`).
    pub kind: String,
    /// Runs labelled with this detector.
    pub positives: usize,
    /// Labelled runs where it fired and should have.
    pub true_positives: usize,
    /// Labelled runs where it fired and should not have.
    pub false_positives: usize,
    /// TP / (TP + FP); `None` when it never fired.
    pub precision: Option<f64>,
    /// TP / positives; `None` without positives.
    pub recall: Option<f64>,
    /// Mean of (first firing step − labelled onset) over true positives
    /// with an onset.
    pub mean_delay_steps: Option<f64>,
}

/// The scores and how many runs carried a label.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectorTable {
    /// Labelled runs considered.
    pub labelled_runs: usize,
    /// One row per detector, in column order.
    pub scores: Vec<DetectorScore>,
}

impl DetectorTable {
    /// Scores every detector of the runs table `runs`.
    pub fn score(runs: &Table) -> Result<Self, ReportError> {
        let labels = runs.text_opt("doom_loop_expected_kind")?.unwrap_or_else(|| vec![None; runs.len()]);
        let onsets = runs.number("doom_loop_onset_step").unwrap_or_else(|| vec![None; runs.len()]);
        let labelled: Vec<usize> = (0..runs.len()).filter(|&row| labels[row].as_deref().is_some_and(|l| l != "any")).collect();
        let scores = runs
            .number_columns()
            .into_iter()
            .filter_map(|column| column.strip_prefix(FIRST_STEP_PREFIX).map(str::to_owned))
            .map(|kind| {
                let fired = runs.number(&format!("{FIRST_STEP_PREFIX}{kind}")).unwrap_or_default();
                score_one(&kind, &labelled, |row| labels[row].as_deref() == Some(kind.as_str()), |row| fired[row], |row| onsets[row])
            })
            .collect();
        Ok(Self { labelled_runs: labelled.len(), scores })
    }

    /// The lowest precision or recall of any detector with positives.
    pub fn weakest(&self) -> Option<f64> {
        self.scores.iter().filter(|s| s.positives > 0).flat_map(|s| [s.precision.unwrap_or(0.0), s.recall.unwrap_or(0.0)]).reduce(f64::min)
    }

    /// The table as people read it.
    pub fn render(&self) -> String {
        let mut out = format!("{} labelled runs\n", self.labelled_runs);
        out.push_str(&format!("{:<16} {:>9} {:>4} {:>4} {:>10} {:>7} {:>12}\n", "detector", "positives", "TP", "FP", "precision", "recall", "mean delay"));
        for s in &self.scores {
            out.push_str(&format!(
                "{:<16} {:>9} {:>4} {:>4} {:>10} {:>7} {:>12}\n",
                s.kind,
                s.positives,
                s.true_positives,
                s.false_positives,
                figures::maybe(s.precision),
                figures::maybe(s.recall),
                s.mean_delay_steps.map_or_else(|| "-".to_owned(), |d| format!("{} steps", figures::number(d))),
            ));
        }
        out
    }
}

fn score_one(
    kind: &str,
    labelled: &[usize],
    is_positive: impl Fn(usize) -> bool,
    fired_at: impl Fn(usize) -> Option<f64>,
    onset: impl Fn(usize) -> Option<f64>,
) -> DetectorScore {
    let positives = labelled.iter().filter(|&&row| is_positive(row)).count();
    let true_rows: Vec<usize> = labelled.iter().copied().filter(|&row| is_positive(row) && fired_at(row).is_some()).collect();
    let false_positives = labelled.iter().filter(|&&row| !is_positive(row) && fired_at(row).is_some()).count();
    let delays: Vec<f64> = true_rows.iter().filter_map(|&row| Some(fired_at(row)? - onset(row)?)).collect();
    let ratio = |num: usize, den: usize| (den > 0).then(|| num as f64 / den as f64);
    DetectorScore {
        kind: kind.to_owned(),
        positives,
        true_positives: true_rows.len(),
        false_positives,
        precision: ratio(true_rows.len(), true_rows.len() + false_positives),
        recall: ratio(true_rows.len(), positives),
        mean_delay_steps: (!delays.is_empty()).then(|| delays.iter().sum::<f64>() / delays.len() as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_recall_and_delay_follow_the_labels() {
        // Rows: labelled cycle (fired at 5, onset 0), cycle (missed),
        // none (fired: a false positive), unlabelled (fired: ignored).
        let labelled = [0, 1, 2];
        let positive = |row: usize| row < 2;
        let fired = |row: usize| [Some(5.0), None, Some(3.0), Some(1.0)][row];
        let onset = |row: usize| [Some(0.0), Some(2.0), None, None][row];
        let s = score_one("cycle", &labelled, positive, fired, onset);
        assert_eq!((s.positives, s.true_positives, s.false_positives), (2, 1, 1));
        assert_eq!((s.precision, s.recall, s.mean_delay_steps), (Some(0.5), Some(0.5), Some(5.0)));
    }

    #[test]
    fn a_detector_that_never_fires_has_no_precision() {
        let s = score_one("x", &[0], |_| true, |_| None, |_| None);
        assert_eq!((s.precision, s.recall, s.mean_delay_steps), (None, Some(0.0), None));
    }
}
