//! What a batch keeps of each finished run once its rows are written: about
//! two hundred bytes the printed tables, JUnit, the exit code and the sweep
//! figures need. The run's step and event rows and most of its figures are
//! not kept; the batch holds one summary per run until it ends.

use std::collections::HashSet;
use std::fmt;
use std::hash::Hasher;
use std::sync::{Arc, Mutex};

use reloop_agent::Outcome;

use crate::result::{RunMetrics, RunReport};
use crate::run_figures::RunFigures;

/// One finished run, without its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Scenario name, one copy per batch ([`SharedNames`]).
    pub scenario: Arc<str>,
    /// Scenario file, one copy per batch.
    pub scenario_file: Arc<str>,
    /// Variant label, one copy per batch.
    pub variant: Arc<str>,
    /// Which trial (0-based).
    pub trial: u64,
    /// The scenario's `expect.min_pass_rate`.
    pub min_pass_rate: Option<f64>,
    /// How it ended.
    pub outcome: Outcome,
    /// Every expectation held.
    pub passed: bool,
    /// The figures the batch's readers use.
    pub figures: RunFigures,
    /// A digest of all of the run's figures but its wall time: trials that
    /// repeated exactly have the same ([`RunSummary::repeats`]), whichever
    /// figure differs, kept or not.
    pub metrics_digest: u64,
    /// The texts only some runs have, `None` when a run has none (most do
    /// not): read them with [`RunSummary::texts`].
    pub texts: Option<Box<RunTexts>>,
}

/// A run's texts, boxed together because only failed runs (and the runs of
/// a session whose provider-token fit was refused) have any.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunTexts {
    /// The expectations that did not hold.
    pub failed_expectations: Vec<String>,
    /// What the server could not answer, rendered.
    pub divergences: Vec<String>,
    /// A black-box agent's last output (the ends of its standard error and
    /// output) when it failed, timed out, diverged or never got a final
    /// turn: the cause of the failure.
    pub agent_output: Option<String>,
    /// Why a plug-in strategy ended the run (`strategy_error`): the step,
    /// what it answered, the end of its stderr.
    pub strategy_error: Option<String>,
    /// Why the run's provider-token fit is not credible
    /// (`crate::token_fit::TokenFit::refusal`), when it was refused.
    pub token_fit_refusal: Option<String>,
}

/// What a run without texts reads.
static NO_TEXTS: RunTexts = RunTexts::NONE;

impl RunTexts {
    /// No texts.
    const NONE: Self = Self { failed_expectations: Vec::new(), divergences: Vec::new(), agent_output: None, strategy_error: None, token_fit_refusal: None };

    /// `self` boxed, `None` when it holds nothing.
    fn boxed(self) -> Option<Box<Self>> {
        (self != Self::NONE).then(|| Box::new(self))
    }
}

impl RunSummary {
    /// The summary of `report`, its names shared through `names`.
    pub fn of(report: &RunReport, names: &SharedNames) -> Self {
        let texts = RunTexts {
            failed_expectations: report.failed_expectations.clone(),
            divergences: report.divergences.iter().map(|d| d.render()).collect(),
            agent_output: match report.outcome {
                Outcome::AgentError | Outcome::AgentTimeout => report.error.clone(),
                Outcome::LlmError if report.agent_exit_code.is_some() => report.error.clone(),
                // A black-box divergence's error is the divergence (printed
                // with the others) and then the agent's output.
                Outcome::Divergence if report.agent_exit_code.is_some() => {
                    let divergence = report.metrics.first_divergence.as_deref().unwrap_or_default();
                    report.error.as_deref().and_then(|error| error.strip_prefix(divergence)).map(|rest| rest.trim_start().to_owned())
                }
                _ => None,
            },
            strategy_error: report.error.clone().filter(|_| report.outcome == Outcome::StrategyError),
            token_fit_refusal: report.metrics.provider_token_fit.and_then(|fit| fit.refusal()),
        };
        Self {
            scenario: names.share(&report.scenario),
            scenario_file: names.share(&report.scenario_file),
            variant: names.share(&report.variant),
            trial: report.trial,
            min_pass_rate: report.min_pass_rate,
            outcome: report.outcome,
            passed: report.passed,
            figures: RunFigures::from(&report.metrics),
            metrics_digest: digest_without_wall_time(&report.metrics),
            texts: texts.boxed(),
        }
    }

    /// The run's texts (none for most runs).
    pub fn texts(&self) -> &RunTexts {
        self.texts.as_deref().unwrap_or(&NO_TEXTS)
    }

    /// Whether `other` is this run made again: the same in everything but
    /// the trial number and the wall-clock time.
    pub fn repeats(&self, other: &Self) -> bool {
        let timeless = |run: &Self| Self { trial: 0, figures: RunFigures { wall_ms: 0, ..run.figures }, ..run.clone() };
        timeless(self) == timeless(other)
    }
}

/// A 64-bit digest of `metrics` with their wall time left out: their Debug
/// rendering (every field, in order) through SipHash with fixed keys. It
/// is compared within one process only, so the rendering and the hasher
/// need not be stable across versions.
fn digest_without_wall_time(metrics: &RunMetrics) -> u64 {
    /// Feeds what is written to the hasher, without building the text.
    struct Hashing(std::hash::DefaultHasher);
    impl fmt::Write for Hashing {
        fn write_str(&mut self, text: &str) -> fmt::Result {
            self.0.write(text.as_bytes());
            Ok(())
        }
    }
    let mut hashing = Hashing(std::hash::DefaultHasher::new());
    let timeless = RunMetrics { wall_ms: 0, ..metrics.clone() };
    fmt::write(&mut hashing, format_args!("{timeless:?}")).expect("hashing does not fail");
    hashing.0.finish()
}

/// One copy of each scenario, file and variant name for a whole batch:
/// every strategy and trial of a scenario names the same, so a batch of
/// 12,900 runs would otherwise hold 12,900 copies of a few hundred names.
#[derive(Debug, Default)]
pub struct SharedNames(Mutex<HashSet<Arc<str>>>);

impl SharedNames {
    /// The batch's copy of `name`, made the first time it is asked for.
    pub fn share(&self, name: &str) -> Arc<str> {
        let mut names = self.0.lock().expect("shared names poisoned");
        if let Some(shared) = names.get(name) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(name);
        names.insert(Arc::clone(&shared));
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_fit::TokenFit;

    fn report(metrics: RunMetrics) -> RunReport {
        RunReport {
            scenario: "s".to_owned(),
            scenario_file: "s.yaml".to_owned(),
            variant: "roku".to_owned(),
            trial: 0,
            min_pass_rate: None,
            strategy: "roku".to_owned(),
            wire: "anthropic".to_owned(),
            model: "m".to_owned(),
            system_under_test: "reloop".to_owned(),
            agent_exit_code: None,
            source: None,
            outcome: Outcome::FinalAnswer,
            passed: true,
            failed_expectations: Vec::new(),
            final_answer: Some("done".to_owned()),
            error: None,
            metrics,
            steps: Vec::new(),
            events: Vec::new(),
            divergences: Vec::new(),
        }
    }

    /// Issue 44: the batch keeps one summary per run; a whole `RunMetrics`
    /// in it (1,008 bytes) made it 1,208 bytes, most of what a 12,900-run
    /// sweep grew by. A field added back must be a small one.
    #[test]
    fn a_kept_summary_stays_small() {
        assert!(size_of::<RunFigures>() <= 136, "RunFigures is {} bytes", size_of::<RunFigures>());
        assert!(size_of::<RunSummary>() <= 232, "RunSummary is {} bytes", size_of::<RunSummary>());
    }

    #[test]
    fn names_are_shared_and_a_run_without_texts_holds_none() {
        let names = SharedNames::default();
        let [a, b] = [0, 1].map(|_| RunSummary::of(&report(RunMetrics::default()), &names));
        assert!(Arc::ptr_eq(&a.variant, &b.variant) && Arc::ptr_eq(&a.scenario, &b.scenario));
        assert_eq!(a.texts, None);
        assert_eq!(a.texts().failed_expectations, Vec::<String>::new());
        let refused = TokenFit { slope: 1.0, intercept: 0.0, calls: 2, r_squared: 1.0 };
        let fitted = RunSummary::of(&report(RunMetrics { provider_token_fit: Some(refused), ..RunMetrics::default() }), &names);
        assert_eq!(fitted.texts().token_fit_refusal.as_deref(), Some("2 calls (at least 3 needed)"));
    }

    /// Issue 44: trials were compared on their whole metrics; the summary
    /// keeps a few, and a difference in any other must still tell the
    /// trials apart (here the tool calls, not a kept figure).
    #[test]
    fn trials_differing_in_a_figure_not_kept_do_not_repeat_and_wall_time_does_not_count() {
        let names = SharedNames::default();
        let first = RunSummary::of(&report(RunMetrics { tool_calls: 3, wall_ms: 10, ..RunMetrics::default() }), &names);
        let mut again = report(RunMetrics { tool_calls: 3, wall_ms: 99, ..RunMetrics::default() });
        again.trial = 1;
        assert!(first.repeats(&RunSummary::of(&again, &names)), "only the trial and the wall time differ");
        again.metrics.tool_calls = 4;
        let varied = RunSummary::of(&again, &names);
        assert_eq!(varied.figures, RunSummary::of(&report(RunMetrics { tool_calls: 3, wall_ms: 99, ..RunMetrics::default() }), &names).figures);
        assert!(!first.repeats(&varied), "a figure the summary does not keep differs");
    }
}
