//! What a batch keeps of each finished run once its rows are written: the
//! few hundred bytes the printed tables, JUnit, the exit code and the sweep
//! figures need. The run's step and event rows are not kept.

use reloop_agent::Outcome;

use crate::result::{RunMetrics, RunReport};

/// One finished run, without its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Scenario name.
    pub scenario: String,
    /// Scenario file.
    pub scenario_file: String,
    /// Variant label.
    pub variant: String,
    /// Which trial (0-based).
    pub trial: u64,
    /// The scenario's `expect.min_pass_rate`.
    pub min_pass_rate: Option<f64>,
    /// How it ended.
    pub outcome: Outcome,
    /// Every expectation held.
    pub passed: bool,
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
    /// The run's figures.
    pub metrics: RunMetrics,
}

impl From<&RunReport> for RunSummary {
    fn from(report: &RunReport) -> Self {
        Self {
            scenario: report.scenario.clone(),
            scenario_file: report.scenario_file.clone(),
            variant: report.variant.clone(),
            trial: report.trial,
            min_pass_rate: report.min_pass_rate,
            outcome: report.outcome,
            passed: report.passed,
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
            metrics: report.metrics.clone(),
        }
    }
}
