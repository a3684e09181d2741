//! Paired comparisons of a sweep's variants (`docs/metrics.md`, "Paired
//! comparisons"). The variants ran the same scenarios, so the fair question
//! is how each scenario moved, not how two sums compare: per scenario the
//! difference of the headline figures (its mean over trials on each side),
//! then a bootstrap interval over scenarios (resampled with replacement,
//! seeded, so the same report gives the same interval) and the count of
//! scenarios each side won. Each variant is compared with a reference:
//! `none` when the sweep ran it (the uncompacted baseline, as the table's
//! `cost vs none`), else the first by name. The report's rows come in the
//! order runs finished, so neither can be the order given on the command
//! line: both are what every reader of the report agrees on.
//!
//! Like for like: a scenario is compared when it ended the same way on both
//! sides (every trial one outcome: a `doom_loop_stopped` scenario that
//! stops under both is compared) or completed on both; the others (one side
//! overflowed, errored or did not run) are left out and counted, as
//! tau2-bench's paired comparison does.

use std::collections::HashMap;
use std::path::Path;

use crate::compare::{COMPLETED_OUTCOMES, mean_of};
use crate::error::ReportError;
use crate::runs::Runs;

/// Bootstrap resamples per figure.
pub const RESAMPLES: usize = 2000;
/// The bootstrap's seed: a report always gives the same interval.
const SEED: u64 = 0x5eed_0045;
/// The interval's level.
pub const CONFIDENCE: f64 = 0.95;

/// A headline figure: its column, what it is called, how it is compared.
struct Figure {
    column: &'static str,
    label: &'static str,
    /// Compared as the ratio of sums − 1 (tokens, cost) rather than the
    /// mean difference (rates).
    relative: bool,
    higher_is_better: bool,
}

/// The figures compared when their column exists (`retention` is read by
/// name: reports before it have none).
const FIGURES: [Figure; 4] = [
    Figure { column: "input_tokens_total", label: "input tokens", relative: true, higher_is_better: false },
    Figure { column: "estimated_cost_usd", label: "cost", relative: true, higher_is_better: false },
    Figure { column: "retention", label: "retention", relative: false, higher_is_better: true },
    Figure { column: "passed", label: "pass rate", relative: false, higher_is_better: true },
];

/// One figure of one pairing.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedFigure {
    /// What it is (`input tokens`).
    pub label: &'static str,
    /// Relative (ratio of sums − 1) or a mean difference.
    pub relative: bool,
    /// The estimate: other against the reference.
    pub estimate: f64,
    /// Its bootstrap interval at [`CONFIDENCE`].
    pub interval: (f64, f64),
    /// Scenarios where the other variant did better, worse, the same.
    pub wins: usize,
    /// Scenarios where it did worse.
    pub losses: usize,
    /// Scenarios with no difference.
    pub ties: usize,
    /// The share of resamples in which the other variant did better.
    pub better_share: f64,
    /// Which variant is better, when the interval leaves out no difference.
    pub better: Option<String>,
}

/// One variant against the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairing {
    /// The first variant of the sweep.
    pub reference: String,
    /// The variant compared with it.
    pub other: String,
    /// Scenarios compared like for like.
    pub compared: usize,
    /// Scenarios left out: name, and how each side ended.
    pub left_out: Vec<(String, String, String)>,
    /// The figures, in [`FIGURES`] order, those with a column only.
    pub figures: Vec<PairedFigure>,
}

/// The pairings of the report in `path` (a report directory or its
/// `runs.parquet`), reading only the columns they compare: after a sweep of
/// 15,000 runs, every column of the runs table was the largest thing held.
pub fn read(path: &Path) -> Result<Vec<Pairing>, ReportError> {
    let columns: Vec<&str> = ["scenario", "variant", "scenario_file", "outcome"].into_iter().chain(FIGURES.iter().map(|figure| figure.column)).collect();
    Ok(pairings(&Runs::load_columns(path, &columns)?))
}

/// The pairings of `runs`: each variant against the reference (`none`, else
/// the first by name); empty with one variant.
pub fn pairings(runs: &Runs) -> Vec<Pairing> {
    // Each (scenario, variant)'s rows, keyed by the runs' own names: a key of
    // copied names for every row was most of what the pairings held after a
    // large sweep.
    let mut by_key: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (row, (scenario, variant)) in runs.scenario.iter().zip(&runs.variant).enumerate() {
        by_key.entry((scenario.as_str(), variant.as_str())).or_default().push(row);
    }
    // By name: a parallel batch writes its rows in the order runs finish,
    // and the table, the comment and the page must pick the same reference.
    let mut variants: Vec<&str> = by_key.keys().map(|key| key.1).collect();
    variants.sort_unstable();
    variants.dedup();
    if let Some(none) = variants.iter().position(|variant| *variant == "none") {
        let none = variants.remove(none);
        variants.insert(0, none);
    }
    let mut scenarios: Vec<&str> = by_key.keys().map(|key| key.0).collect();
    scenarios.sort_unstable();
    scenarios.dedup();
    let Some((reference, others)) = variants.split_first() else { return Vec::new() };
    others.iter().map(|other| pairing(runs, &by_key, &scenarios, reference, other)).collect()
}

fn pairing(runs: &Runs, by_key: &HashMap<(&str, &str), Vec<usize>>, scenarios: &[&str], reference: &str, other: &str) -> Pairing {
    let outcomes =
        |rows: Option<&Vec<usize>>| -> Vec<&str> { rows.map(|rows| rows.iter().map(|&row| runs.outcome[row].as_str()).collect()).unwrap_or_default() };
    let mut compared: Vec<(&[usize], &[usize])> = Vec::new();
    let mut left_out = Vec::new();
    for scenario in scenarios {
        let (a, b) = (by_key.get(&(*scenario, reference)), by_key.get(&(*scenario, other)));
        let (oa, ob) = (outcomes(a), outcomes(b));
        let completed = |o: &[&str]| !o.is_empty() && o.iter().all(|o| o.is_empty() || COMPLETED_OUTCOMES.contains(o));
        let same = !oa.is_empty() && oa.iter().chain(&ob).all(|o| *o == oa[0]) && !ob.is_empty();
        match (a, b) {
            (Some(a), Some(b)) if same || (completed(&oa) && completed(&ob)) => compared.push((a, b)),
            _ => left_out.push(((*scenario).to_owned(), ended(&oa), ended(&ob))),
        }
    }
    let figures = FIGURES
        .iter()
        .filter_map(|figure| {
            let metric = runs.metric(figure.column)?;
            let pairs: Vec<(f64, f64)> = compared.iter().filter_map(|(a, b)| Some((mean_of(Some(metric), a)?, mean_of(Some(metric), b)?))).collect();
            (!pairs.is_empty()).then(|| paired_figure(figure, &pairs, reference, other))
        })
        .collect();
    Pairing { reference: reference.to_owned(), other: other.to_owned(), compared: compared.len(), left_out, figures }
}

/// How a side's trials ended: `final_answer`, `no run`, or the outcomes
/// joined when they differ.
fn ended(outcomes: &[&str]) -> String {
    let mut distinct: Vec<&str> = outcomes.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.is_empty() { "no run".to_owned() } else { distinct.join("/") }
}

/// The statistic of (reference, other) pairs: ratio of sums − 1, or the
/// mean difference.
fn statistic(figure: &Figure, pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut a, mut b, mut n) = (0.0, 0.0, 0.0_f64);
    for (x, y) in pairs {
        (a, b, n) = (a + x, b + y, n + 1.0);
    }
    if figure.relative { if a == 0.0 { 0.0 } else { b / a - 1.0 } } else { (b - a) / n.max(1.0) }
}

fn paired_figure(figure: &Figure, pairs: &[(f64, f64)], reference: &str, other: &str) -> PairedFigure {
    let estimate = statistic(figure, pairs.iter().copied());
    let mut rng = SplitMix64(SEED);
    let mut resampled: Vec<f64> =
        (0..RESAMPLES).map(|_| statistic(figure, (0..pairs.len()).map(|_| pairs[(rng.next() % pairs.len() as u64) as usize]))).collect();
    resampled.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let at = |q: f64| resampled[((q * RESAMPLES as f64) as usize).min(RESAMPLES - 1)];
    let interval = (at(tail), at(1.0 - tail));
    let better_sign = if figure.higher_is_better { 1.0 } else { -1.0 };
    let better_share = resampled.iter().filter(|v| **v * better_sign > 0.0).count() as f64 / RESAMPLES as f64;
    let wins = pairs.iter().filter(|(a, b)| (b - a) * better_sign > 0.0).count();
    let losses = pairs.iter().filter(|(a, b)| (b - a) * better_sign < 0.0).count();
    let better = if interval.0 * better_sign > 0.0 && interval.1 * better_sign > 0.0 {
        Some(other.to_owned())
    } else if interval.0 * better_sign < 0.0 && interval.1 * better_sign < 0.0 {
        Some(reference.to_owned())
    } else {
        None
    };
    PairedFigure { label: figure.label, relative: figure.relative, estimate, interval, wins, losses, ties: pairs.len() - wins - losses, better_share, better }
}

/// SplitMix64 (Steele, Lea and Flood 2014): the bootstrap's resampling
/// needs a seeded stream, not a cryptographic one, and this is ten lines
/// rather than a dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl PairedFigure {
    /// `−23.4 % [−30.1 %, −15.2 %]` or `+0.10 [0.00, 0.20]`.
    pub fn estimate_shown(&self) -> String {
        if self.relative {
            format!("{:+.1}% [{:+.1}%, {:+.1}%]", self.estimate * 100.0, self.interval.0 * 100.0, self.interval.1 * 100.0)
        } else {
            format!("{:+.3} [{:+.3}, {:+.3}]", self.estimate, self.interval.0, self.interval.1)
        }
    }

    /// `roku better (95 % bootstrap; better in 100 % of resamples, 5 of 5 scenarios)` or `no clear difference`.
    pub fn verdict(&self, other: &str) -> String {
        let counts = format!("{other} better in {} of {} scenarios, worse in {}", self.wins, self.wins + self.losses + self.ties, self.losses);
        match &self.better {
            Some(better) => format!("{better} better at 95 % ({:.1} % of resamples favour {other}; {counts})", self.better_share * 100.0),
            None => format!("no clear difference at 95 % ({:.1} % of resamples favour {other}; {counts})", self.better_share * 100.0),
        }
    }
}

impl Pairing {
    /// `like for like: 4 of 5 scenarios ended alike under both; left out: a (none: context_exceeded, roku: final_answer)`,
    /// naming the first ten.
    pub fn like_for_like(&self) -> String {
        let total = self.compared + self.left_out.len();
        let mut text = format!("like for like: {} of {total} scenarios ended alike under {} and {}", self.compared, self.reference, self.other);
        if !self.left_out.is_empty() {
            let names =
                crate::first_named::first_named(&self.left_out, |(scenario, a, b)| format!("{scenario} ({}: {a}, {}: {b})", self.reference, self.other));
            text.push_str(&format!("; left out: {names}"));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{Row, runs};

    fn table(rows: &[(&'static str, &'static str, f64, &'static str)]) -> Runs {
        let leaked: Vec<Row<'static>> =
            rows.iter().map(|(s, v, tokens, _)| (*s, *v, &*Box::leak(vec![("input_tokens_total", *tokens), ("passed", 1.0)].into_boxed_slice()))).collect();
        let mut table = runs(&leaked);
        table.outcome = rows.iter().map(|r| r.3.to_owned()).collect();
        table
    }

    #[test]
    fn a_variant_that_sends_less_on_every_scenario_is_better_with_a_seeded_interval_and_unlike_scenarios_are_left_out() {
        let mut rows = Vec::new();
        for (i, name) in ["a", "b", "c", "d", "e", "f"].into_iter().enumerate() {
            let base = 1000.0 + 100.0 * i as f64;
            rows.push((name, "none", base, "final_answer"));
            rows.push((name, "roku", base * 0.7, "final_answer"));
        }
        rows.push(("loop", "none", 10.0, "doom_loop_stopped"));
        rows.push(("loop", "roku", 9.0, "doom_loop_stopped"));
        rows.push(("overflow", "none", 10.0, "context_exceeded"));
        rows.push(("overflow", "roku", 90.0, "final_answer"));
        let found = pairings(&table(&rows));
        assert_eq!(found.len(), 1);
        let p = &found[0];
        assert_eq!(
            (p.compared, p.like_for_like().as_str()),
            (7, "like for like: 7 of 8 scenarios ended alike under none and roku; left out: overflow (none: context_exceeded, roku: final_answer)")
        );
        let tokens = &p.figures[0];
        assert_eq!((tokens.label, tokens.better.as_deref(), tokens.wins, tokens.losses), ("input tokens", Some("roku"), 7, 0));
        assert!(tokens.interval.0 < tokens.estimate && tokens.estimate < tokens.interval.1 && tokens.interval.1 < 0.0, "{tokens:?}");
        assert_eq!(tokens.better_share, 1.0);
        assert_eq!(pairings(&table(&rows)), found, "seeded: the same report, the same interval");
        let pass = &p.figures[1];
        assert_eq!((pass.label, pass.better.as_deref(), pass.ties), ("pass rate", None, 7));
    }

    /// Issue 44: after a sweep the whole runs table was read back for the
    /// paired lines, every column of every run at once (the largest thing a
    /// 15,000-run sweep held). The columns read are the ones compared, and
    /// the pairings are those of the whole table.
    #[test]
    fn the_pairings_read_only_the_columns_they_compare_and_equal_those_of_the_whole_table() {
        let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/golden/long-sweep");
        let whole = Runs::load(&report).unwrap();
        assert!(whole.metrics.len() > 50, "the stored sweep has the full runs table");
        assert_eq!(read(&report).unwrap(), pairings(&whole));
        let columns = ["scenario", "variant", "outcome", "passed", "input_tokens_total"];
        let read = Runs::load_columns(&report, &columns).unwrap();
        assert_eq!(
            read.schema.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(),
            ["scenario", "variant", "outcome", "passed", "input_tokens_total"]
        );
        assert_eq!((read.len(), read.scenario_file.iter().all(String::is_empty)), (whole.len(), true));
    }
}
