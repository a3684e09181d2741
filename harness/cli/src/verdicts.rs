//! A batch's verdicts over trials: its finished runs grouped by scenario ×
//! variant ([`TrialVerdict`]), each judged on every trial (pass^N) or on
//! the pass rate `--min-pass-rate` (else the scenario's
//! `expect.min_pass_rate`) asks for. The exit code, the table, JUnit, the
//! PR comment and the annotations of `run` and `sweep` all read these.

use std::collections::{BTreeMap, HashMap};

use reloop_eval::RunSummary;
use reloop_eval::report::{FinishedRun, RunKey};
use reloop_report::trials::{Trial, TrialVerdict};

/// The verdicts of `runs` (in plan order) and of the runs `resumed` from a
/// batch cut short, the command line's minimum pass rate over each
/// scenario's own (a resumed run's is its scenario's other trials').
pub fn of(runs: &[RunSummary], resumed: &BTreeMap<RunKey, FinishedRun>, min_pass_rate: Option<f64>) -> Vec<TrialVerdict> {
    let made = runs.iter().map(|run| Trial {
        scenario: &run.scenario,
        variant: &run.variant,
        file: &run.scenario_file,
        outcome: run.outcome.as_str(),
        passed: run.passed,
        failures: &run.texts().failed_expectations,
        min_pass_rate: min_pass_rate.or(run.min_pass_rate),
    });
    let resumed = resumed.iter().map(|((scenario, variant, _), run)| Trial {
        scenario,
        variant,
        file: &run.scenario_file,
        outcome: run.outcome.as_str(),
        passed: run.passed,
        failures: &[],
        min_pass_rate,
    });
    TrialVerdict::of(made.chain(resumed))
}

/// Each scenario × variant's runs, in their order, keyed as a verdict is:
/// one pass over the runs, so a table or JUnit of 10,000 verdicts does not
/// search every run for each.
pub fn trials_by_key(runs: &[RunSummary]) -> HashMap<(&str, &str), Vec<&RunSummary>> {
    let mut trials: HashMap<(&str, &str), Vec<&RunSummary>> = HashMap::new();
    for run in runs {
        trials.entry((&*run.scenario, &*run.variant)).or_default().push(run);
    }
    trials
}
