//! How a run ended (the `outcome` column, `docs/metrics.md`; each outcome
//! in `docs/scenario-format.md#outcomes`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The end state of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model finished with an answer.
    FinalAnswer,
    /// The model asked the user and no scripted reply remained.
    AskUser,
    /// The model gave up through the `fail` pseudo-tool.
    Fail,
    /// The step budget ran out, last turn included.
    StepBudgetExhausted,
    /// The user stopped the run after a step, as the recorded session of a
    /// replay was stopped after a tool round.
    Stopped,
    /// The harness around the agent took its submission and ended the run
    /// after a step (SWE-agent's `submit`, OpenHands' `finish`), as the
    /// recorded session of a replay ended.
    Submitted,
    /// A doom loop was detected with reaction `stop`.
    DoomLoopStopped,
    /// The provider rejected the context as too long.
    ContextExceeded,
    /// The provider failed in another way.
    LlmError,
    /// The provider (the mock) could not answer from its recording.
    Divergence,
    /// The run was interrupted.
    Cancelled,
    /// reloop itself failed; a bug, not a finding.
    HarnessError,
    /// A black-box agent process exited with a non-zero code.
    AgentError,
    /// A black-box agent process ran past its timeout and was killed.
    AgentTimeout,
    /// A plug-in strategy crashed, answered garbage, timed out or asked for
    /// an impossible edit (`docs/strategies.md`); the error names the step
    /// and what came back.
    StrategyError,
    /// A black-box agent's program is not installed here: nothing ran, and
    /// no expectation was checked, so the run does not fail (a suite of
    /// real agents does not fail a machine without them); `reloop run`
    /// names every skipped run.
    Skipped,
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Outcome; 16] = [
        Self::FinalAnswer,
        Self::AskUser,
        Self::Fail,
        Self::StepBudgetExhausted,
        Self::Stopped,
        Self::Submitted,
        Self::DoomLoopStopped,
        Self::ContextExceeded,
        Self::LlmError,
        Self::Divergence,
        Self::Cancelled,
        Self::HarnessError,
        Self::AgentError,
        Self::AgentTimeout,
        Self::StrategyError,
        Self::Skipped,
    ];

    /// Whether the run ended where its scenario ends: a final answer, or
    /// the stop or submit an imported session's `ending` states. Only such
    /// runs enter like-for-like figures (the sweep's totals, compare's
    /// means: `reloop_report::compare::COMPLETED_OUTCOMES`).
    pub fn completed(self) -> bool {
        matches!(self, Self::FinalAnswer | Self::Stopped | Self::Submitted)
    }

    /// The snake-case name used in scenarios and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FinalAnswer => "final_answer",
            Self::AskUser => "ask_user",
            Self::Fail => "fail",
            Self::StepBudgetExhausted => "step_budget_exhausted",
            Self::Stopped => "stopped",
            Self::Submitted => "submitted",
            Self::DoomLoopStopped => "doom_loop_stopped",
            Self::ContextExceeded => "context_exceeded",
            Self::LlmError => "llm_error",
            Self::Divergence => "divergence",
            Self::Cancelled => "cancelled",
            Self::HarnessError => "harness_error",
            Self::AgentError => "agent_error",
            Self::AgentTimeout => "agent_timeout",
            Self::StrategyError => "strategy_error",
            Self::Skipped => "skipped",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
