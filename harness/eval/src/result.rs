//! What one run produced: the row types behind the three report tables.
//! Field names are the report's column names (`docs/metrics.md`).

use reloop_agent::Outcome;
use reloop_mock::Divergence;

use crate::scenario::Scenario;

/// One scenario × variant run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// Scenario name.
    pub scenario: String,
    /// Scenario file.
    pub scenario_file: String,
    /// Variant label (`default` unless sweeping).
    pub variant: String,
    /// Which trial of the scenario × variant this was (0-based; `run
    /// --repeat N` runs each N times).
    pub trial: u64,
    /// The scenario's `expect.min_pass_rate`: how many of its trials must
    /// pass (not a column: the verdict over trials reads it).
    pub min_pass_rate: Option<f64>,
    /// The compaction strategy.
    pub strategy: String,
    /// The wire format spoken.
    pub wire: String,
    /// The model requested.
    pub model: String,
    /// What ran against the mock: `reloop` (the built-in loop) or the
    /// program name of a black-box `agent:` command.
    pub system_under_test: String,
    /// A black-box agent's exit code (`None` for the built-in loop, or
    /// when the agent was killed).
    pub agent_exit_code: Option<i32>,
    /// Where the scenario came from (`format:file` of an imported session).
    pub source: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// Every expectation held.
    pub passed: bool,
    /// The expectations that did not hold, as readable sentences.
    pub failed_expectations: Vec<String>,
    /// The final answer, if any.
    pub final_answer: Option<String>,
    /// Error or reason text, if any.
    pub error: Option<String>,
    /// The run's figures.
    pub metrics: RunMetrics,
    /// One row per model call.
    pub steps: Vec<StepRow>,
    /// One row per loop event.
    pub events: Vec<EventRow>,
    /// What the server could not answer.
    pub divergences: Vec<Divergence>,
}

impl RunReport {
    /// An empty report of `scenario` ending as `outcome`, to fill in.
    pub fn of(scenario: &Scenario, outcome: Outcome) -> Self {
        Self {
            scenario: scenario.name.clone(),
            scenario_file: scenario.file.display().to_string(),
            variant: scenario.variant.clone(),
            trial: 0,
            min_pass_rate: scenario.spec.expect.min_pass_rate,
            strategy: scenario.loop_settings.strategy.label().into_owned(),
            wire: scenario.wire.as_str().to_owned(),
            model: scenario.spec.model.clone(),
            system_under_test: system_under_test(scenario),
            agent_exit_code: None,
            source: scenario.spec.source.clone(),
            outcome,
            passed: false,
            failed_expectations: Vec::new(),
            final_answer: None,
            error: None,
            metrics: RunMetrics { step_budget: u64::from(scenario.loop_settings.step_budget), ..RunMetrics::default() },
            steps: Vec::new(),
            events: Vec::new(),
            divergences: Vec::new(),
        }
    }
}

/// `reloop` for the built-in loop, else the file name of the agent's program.
fn system_under_test(scenario: &Scenario) -> String {
    match scenario.spec.agent.as_ref().and_then(|agent| agent.command.first()) {
        Some(program) => std::path::Path::new(program).file_name().map_or(program.clone(), |name| name.to_string_lossy().into_owned()),
        None => "reloop".to_owned(),
    }
}

/// Per-run figures.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(missing_docs)] // each field is the `docs/metrics.md` column of the same name
pub struct RunMetrics {
    pub steps_used: u64,
    pub step_budget: u64,
    pub step_budget_used_ratio: f64,
    pub doom_loop_detected: bool,
    pub doom_loop_first_step: Option<u64>,
    pub doom_loop_kind: Option<String>,
    /// The step each detector first fired at, in [`reloop_agent::DoomLoopKind::ALL`] order.
    pub doom_loop_first_steps: [Option<u64>; 3],
    /// The scenario's label: the expected detector, or `none` for a run that
    /// must not loop; absent for unlabelled scenarios.
    pub doom_loop_expected_kind: Option<String>,
    /// The labelled step the loop begins at.
    pub doom_loop_onset_step: Option<u64>,
    /// Completed compactions per layer (0 mask, 1 collapse, 2 memory, 3 summary, 4 reactive).
    pub compactions: [u64; 5],
    /// Summaries (layers 3 and 4) that fell back to the mechanical summary;
    /// not in `compactions`.
    pub compaction_fallbacks: u64,
    /// Model calls made for summaries.
    pub compaction_calls: u64,
    /// Whether the compaction circuit breaker tripped.
    pub breaker_tripped: bool,
    /// Negative when compaction grew the prompt.
    pub tokens_saved_total: i64,
    /// What the recorded agent's own compactions saved over the session
    /// (imported sessions that compacted), counted as `tokens_saved_total`.
    pub tokens_saved_recorded: Option<i64>,
    pub input_tokens_total: u64,
    pub input_tokens_uncompacted_total: u64,
    /// References the run's actions used (`crate::retention`).
    pub references_needed: u64,
    /// Of those, the ones the context sent at their step no longer held.
    pub references_lost: u64,
    /// `1 − references_lost / references_needed`; `None` when none were needed.
    pub retention: Option<f64>,
    /// The first step that lost a reference.
    pub references_first_lost_step: Option<u64>,
    /// What the recorded agent's own compactions dropped that it used later
    /// (imported sessions that compacted; `crate::retention::recorded`).
    pub references_lost_recorded: Option<u64>,
    /// The recorded calls after a compaction that repeat one made before it.
    pub refetches_recorded: Option<u64>,
    pub compaction_savings_ratio: f64,
    pub cache_breaks: u64,
    pub cache_breaks_simulated: u64,
    /// The simulated breaks and the cached tokens they lost, per cause.
    pub cache_breaks_by_cause: crate::cache_breaks::ByCause,
    /// What the lost tokens cost at the model's prices.
    pub cache_lost_cost_usd: Option<f64>,
    /// Calls where the loop detected a break and the server simulated one.
    pub cache_breaks_matched: u64,
    /// Of the loop's detected breaks, the share the server also counted.
    pub cache_break_precision: Option<f64>,
    /// Of the server's simulated breaks, the share the loop detected.
    pub cache_break_recall: Option<f64>,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub cache_hit_ratio: f64,
    pub output_tokens_total: u64,
    pub estimated_cost_usd: Option<f64>,
    /// Input, output and cost of the answered calls per share (main, final
    /// turn, escalation, compaction, sub-agent), in
    /// `call_shares::Share::ALL` order; priced from the server's counts.
    pub by_share: [ShareFigures; 5],
    /// What the run cost as recorded: its recorded usage priced, when the
    /// run sent what the recorded session sent (`recorded_pricing`).
    pub estimated_cost_usd_recorded: Option<f64>,
    /// `recorded` when the recorded usage describes this run (and
    /// `estimated_cost_usd_recorded` prices it), else `simulated`.
    pub cost_source: CostSource,
    /// The recorded usage summed over the answered calls, when the run sent
    /// what the recorded session sent.
    pub usage_recorded: Option<reloop_wire::Usage>,
    /// Of `usage_recorded`'s cache writes, those with a 1-hour lifetime.
    pub cache_write_1h_tokens_recorded: Option<u64>,
    /// Recorded input tokens against the server's o200k count of what the
    /// session sent, per call (`token_fit`), refused or not; `None` without
    /// recorded usage.
    pub provider_token_fit: Option<crate::token_fit::TokenFit>,
    pub estimator_mape: Option<f64>,
    pub llm_calls: u64,
    pub llm_retries: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    pub max_parallel_tools: u64,
    pub virtual_ms: u64,
    pub wall_ms: u64,
    pub divergences: u64,
    pub first_divergence: Option<String>,
    /// Calls an upstream answered live (`run --upstream`): a run with any
    /// is not deterministic.
    pub live_steps: u64,
    /// A black-box agent's shell commands answered from the recording's
    /// `tool_side:`; `None` when no shims watched its shell (the built-in
    /// loop, `agent.tools: live`).
    pub tool_side_replayed: Option<u64>,
    /// Its commands the recording lacked that did not run (`tool_side` divergences).
    pub tool_side_divergences: Option<u64>,
    /// Its commands that ran for real while the shims watched
    /// (`replay-or-live` misses, every command under `record`).
    pub commands_run_live: Option<u64>,
    /// The first file at which a replay's workspace differed from the
    /// recording's, at the first turn that differed; `None` when none did
    /// or the recording has no `workspace:`.
    pub workspace_diverged_at: Option<String>,
}

impl RunMetrics {
    /// The provider-token fit, unless it was refused
    /// ([`crate::token_fit::TokenFit::refusal`]).
    pub fn credible_token_fit(&self) -> Option<crate::token_fit::TokenFit> {
        self.provider_token_fit.filter(|fit| fit.refusal().is_none())
    }
}

/// Which usage a run's cost was priced from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CostSource {
    /// reloop's own counts (the server's tokenizer and cache simulation).
    #[default]
    Simulated,
    /// The usage the provider reported when the recording was made.
    Recorded,
}

impl CostSource {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Simulated => "simulated",
            Self::Recorded => "recorded",
        }
    }
}

/// One model call: the loop's view joined with the server's.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(missing_docs)] // names say what they hold; token counts are the server's unless `estimated_`
pub struct StepRow {
    pub step: u64,
    pub call_index: u64,
    pub purpose: String,
    pub attempt: u64,
    pub error: Option<String>,
    pub server_result: Option<String>,
    pub request_messages: Option<u64>,
    pub input_tokens: Option<u64>,
    pub input_tokens_uncompacted: Option<u64>,
    pub estimated_input_tokens: u64,
    pub output_tokens: Option<u64>,
    pub cache_read_tokens: Option<u64>,
    /// The call's cost at the model's prices, from the server's usage.
    pub estimated_cost_usd: Option<f64>,
    /// The usage the provider reported when the answer was recorded.
    pub usage_recorded: Option<reloop_wire::Usage>,
    /// Of its cache writes, those with a 1-hour lifetime, as recorded.
    pub cache_write_1h_tokens_recorded: Option<u64>,
    /// The recording's exchange (0-based) that answered the call.
    pub exchange: Option<u64>,
    /// Whether an upstream answered the call live rather than the recording.
    pub live: bool,
    pub cache_break_simulated: bool,
    pub cache_write_tokens: Option<u64>,
    pub cache_write_1h_tokens: Option<u64>,
    pub cache_break_detected: bool,
    /// The detector's causes, comma-separated (`tools,system,model,history`).
    pub cache_break_causes: Option<String>,
    /// The simulated break explained (the `cache_break_*` columns).
    pub cache_break_explained: Option<crate::cache_breaks::ExplainedBreak>,
    pub finish_reason: Option<String>,
    pub tool_calls: Vec<String>,
    pub started_ms: u64,
    pub finished_ms: u64,
    /// 0 for the main loop's calls, 1 for a sub-agent's.
    pub agent_depth: u64,
    /// For a sub-agent's call: the parent's step and `Agent` call id.
    pub parent_step: Option<u64>,
    pub parent_call_id: Option<String>,
    /// The run's message numbers the call sent, in order, as ranges
    /// (`0-41,57`; `crate::sent_messages`).
    pub sent_messages: Option<String>,
    /// The number of the reply the call got.
    pub reply_message: Option<u64>,
    /// The messages this call was the first to send or receive, as a JSON
    /// array: number, content hash, class and body.
    pub messages_first_seen: Option<String>,
    /// References the call's action used (`crate::retention`).
    pub references_used: u64,
    /// Of those, the ones its request no longer held.
    pub references_lost: u64,
    /// The lost spans, as a JSON array.
    pub references_lost_spans: Option<String>,
}

/// One loop event.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(missing_docs)] // names say what they hold; `payload` is the event as JSON
pub struct EventRow {
    pub seq: u64,
    pub step: u64,
    pub at_ms: u64,
    pub kind: String,
    pub layer: Option<u64>,
    pub strategy: Option<String>,
    pub tokens_before: Option<u64>,
    pub tokens_after: Option<u64>,
    pub payload: String,
}

/// One share's figures (a share: what answered calls were for, see
/// `call_shares`), as the runs table reports them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ShareFigures {
    /// Input tokens (server count) of the share's answered calls.
    pub input_tokens: u64,
    /// Output tokens of the same calls.
    pub output_tokens: u64,
    /// Their cost from the server's counts; `None` for an unpriced model.
    pub estimated_cost_usd: Option<f64>,
}
