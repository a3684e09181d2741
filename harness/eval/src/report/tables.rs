//! The three report tables (`docs/metrics.md`): `runs`, `steps`, `events`.
//! Every row carries `scenario`, `variant` and `trial` (the key steps and
//! events join runs on), so files from many runs, shards, sweeps and
//! repeats concatenate into one dataset.

use std::collections::HashMap;

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;

use super::table::TableBuilder;
use reloop_mock::cache_explain::CAUSES;

use crate::cache_breaks::ExplainedBreak;
use crate::call_shares::Share;
use crate::result::{EventRow, RunReport, StepRow};

fn metadata(table: &str) -> HashMap<String, String> {
    HashMap::from([
        ("reloop.table".to_owned(), table.to_owned()),
        ("reloop.schema_version".to_owned(), super::write::SCHEMA_VERSION.to_owned()),
        ("reloop.version".to_owned(), env!("CARGO_PKG_VERSION").to_owned()),
    ])
}

/// One row per run.
pub fn runs_batch(runs: &[RunReport]) -> Result<RecordBatch, ArrowError> {
    let m = |f: fn(&RunReport) -> u64| runs.iter().map(f);
    let mut t = TableBuilder::default();
    t.text("scenario", runs.iter().map(|r| r.scenario.as_str()))
        .text("scenario_file", runs.iter().map(|r| r.scenario_file.as_str()))
        .text("variant", runs.iter().map(|r| r.variant.as_str()))
        .int("trial", runs.iter().map(|r| r.trial))
        .text("strategy", runs.iter().map(|r| r.strategy.as_str()))
        .text("wire", runs.iter().map(|r| r.wire.as_str()))
        .text("model", runs.iter().map(|r| r.model.as_str()))
        .text_opt("source", runs.iter().map(|r| r.source.as_deref()))
        .text("outcome", runs.iter().map(|r| r.outcome.as_str()))
        .boolean("passed", runs.iter().map(|r| r.passed))
        .text_list("failed_expectations", runs.iter().map(|r| r.failed_expectations.iter().map(String::as_str)))
        .int("steps_used", m(|r| r.metrics.steps_used))
        .int("step_budget", m(|r| r.metrics.step_budget))
        .float("step_budget_used_ratio", runs.iter().map(|r| r.metrics.step_budget_used_ratio))
        .boolean("doom_loop_detected", runs.iter().map(|r| r.metrics.doom_loop_detected))
        .int_opt("doom_loop_first_step", runs.iter().map(|r| r.metrics.doom_loop_first_step))
        .text_opt("doom_loop_kind", runs.iter().map(|r| r.metrics.doom_loop_kind.as_deref()))
        .int_opt("doom_loop_first_step_identical_calls", runs.iter().map(|r| r.metrics.doom_loop_first_steps[0]))
        .int_opt("doom_loop_first_step_cycle", runs.iter().map(|r| r.metrics.doom_loop_first_steps[1]))
        .int_opt("doom_loop_first_step_no_progress", runs.iter().map(|r| r.metrics.doom_loop_first_steps[2]))
        .text_opt("doom_loop_expected_kind", runs.iter().map(|r| r.metrics.doom_loop_expected_kind.as_deref()))
        .int_opt("doom_loop_onset_step", runs.iter().map(|r| r.metrics.doom_loop_onset_step))
        .int("compactions_layer0", m(|r| r.metrics.compactions[0]))
        .int("compactions_layer1", m(|r| r.metrics.compactions[1]))
        .int("compactions_layer2", m(|r| r.metrics.compactions[2]))
        .int("compactions_layer3", m(|r| r.metrics.compactions[3]))
        .int("compactions_layer4", m(|r| r.metrics.compactions[4]))
        .int("compaction_fallbacks", m(|r| r.metrics.compaction_fallbacks))
        .int("compaction_calls", m(|r| r.metrics.compaction_calls))
        .boolean("breaker_tripped", runs.iter().map(|r| r.metrics.breaker_tripped))
        .signed("tokens_saved_total", runs.iter().map(|r| r.metrics.tokens_saved_total))
        .signed_opt("tokens_saved_recorded", runs.iter().map(|r| r.metrics.tokens_saved_recorded))
        .int("input_tokens_total", m(|r| r.metrics.input_tokens_total))
        .int("input_tokens_uncompacted_total", m(|r| r.metrics.input_tokens_uncompacted_total))
        .float("compaction_savings_ratio", runs.iter().map(|r| r.metrics.compaction_savings_ratio))
        .int("references_needed", m(|r| r.metrics.references_needed))
        .int("references_lost", m(|r| r.metrics.references_lost))
        .float_opt("retention", runs.iter().map(|r| r.metrics.retention))
        .int_opt("references_first_lost_step", runs.iter().map(|r| r.metrics.references_first_lost_step))
        .int_opt("references_lost_recorded", runs.iter().map(|r| r.metrics.references_lost_recorded))
        .int_opt("refetches_recorded", runs.iter().map(|r| r.metrics.refetches_recorded))
        .int("cache_breaks", m(|r| r.metrics.cache_breaks))
        .int("cache_breaks_simulated", m(|r| r.metrics.cache_breaks_simulated))
        .int("cache_breaks_matched", m(|r| r.metrics.cache_breaks_matched))
        .int("cache_tokens_lost", runs.iter().map(|r| r.metrics.cache_breaks_by_cause.lost_tokens.iter().sum()))
        .float_opt("cache_lost_cost_usd", runs.iter().map(|r| r.metrics.cache_lost_cost_usd))
        .float_opt("cache_break_precision", runs.iter().map(|r| r.metrics.cache_break_precision))
        .float_opt("cache_break_recall", runs.iter().map(|r| r.metrics.cache_break_recall))
        .int("cache_read_tokens", m(|r| r.metrics.cache_read_tokens))
        .int("cache_write_tokens", m(|r| r.metrics.cache_write_tokens))
        .float("cache_hit_ratio", runs.iter().map(|r| r.metrics.cache_hit_ratio))
        .int("output_tokens_total", m(|r| r.metrics.output_tokens_total))
        .float_opt("estimated_cost_usd", runs.iter().map(|r| r.metrics.estimated_cost_usd))
        .float_opt("estimated_cost_usd_recorded", runs.iter().map(|r| r.metrics.estimated_cost_usd_recorded))
        .text("cost_source", runs.iter().map(|r| r.metrics.cost_source.as_str()));
    for (index, cause) in CAUSES.iter().enumerate() {
        t.int(&format!("cache_breaks_by_cause.{cause}"), runs.iter().map(|r| r.metrics.cache_breaks_by_cause.breaks[index]));
    }
    for (index, cause) in CAUSES.iter().enumerate() {
        t.int(&format!("cache_tokens_lost_by_cause.{cause}"), runs.iter().map(|r| r.metrics.cache_breaks_by_cause.lost_tokens[index]));
    }
    for (index, share) in Share::ALL.iter().enumerate() {
        let name = share.as_str();
        t.int(&format!("input_tokens_{name}"), runs.iter().map(|r| r.metrics.by_share[index].input_tokens))
            .int(&format!("output_tokens_{name}"), runs.iter().map(|r| r.metrics.by_share[index].output_tokens))
            .float_opt(&format!("estimated_cost_usd_{name}"), runs.iter().map(|r| r.metrics.by_share[index].estimated_cost_usd));
    }
    t.int_opt("input_tokens_recorded_total", runs.iter().map(|r| r.metrics.usage_recorded.map(|u| u.input_tokens)))
        .int_opt("output_tokens_recorded_total", runs.iter().map(|r| r.metrics.usage_recorded.map(|u| u.output_tokens)))
        .int_opt("cache_read_tokens_recorded", runs.iter().map(|r| r.metrics.usage_recorded.map(|u| u.cache_read_tokens)))
        .int_opt("cache_write_tokens_recorded", runs.iter().map(|r| r.metrics.usage_recorded.map(|u| u.cache_write_tokens)))
        .int_opt("cache_write_1h_tokens_recorded", runs.iter().map(|r| r.metrics.cache_write_1h_tokens_recorded))
        .float_opt("provider_tokens_per_o200k", runs.iter().map(|r| r.metrics.credible_token_fit().map(|f| f.slope)))
        .float_opt("provider_hidden_tokens_per_call", runs.iter().map(|r| r.metrics.credible_token_fit().map(|f| f.intercept)))
        .int_opt("provider_fit_calls", runs.iter().map(|r| r.metrics.provider_token_fit.map(|f| f.calls as u64)))
        .float_opt("provider_fit_r_squared", runs.iter().map(|r| r.metrics.provider_token_fit.map(|f| f.r_squared)))
        .float_opt("provider_fit_intercept", runs.iter().map(|r| r.metrics.provider_token_fit.map(|f| f.intercept)))
        .float_opt("estimator_mape", runs.iter().map(|r| r.metrics.estimator_mape))
        .int("llm_calls", m(|r| r.metrics.llm_calls))
        .int("llm_retries", m(|r| r.metrics.llm_retries))
        .int("tool_calls", m(|r| r.metrics.tool_calls))
        .int("tool_errors", m(|r| r.metrics.tool_errors))
        .int("max_parallel_tools", m(|r| r.metrics.max_parallel_tools))
        .int("virtual_ms", m(|r| r.metrics.virtual_ms))
        .int("wall_ms", m(|r| r.metrics.wall_ms))
        .int("divergences", m(|r| r.metrics.divergences))
        .text_opt("first_divergence", runs.iter().map(|r| r.metrics.first_divergence.as_deref()))
        .int("live_steps", m(|r| r.metrics.live_steps))
        .int_opt("tool_side_replayed", runs.iter().map(|r| r.metrics.tool_side_replayed))
        .int_opt("tool_side_divergences", runs.iter().map(|r| r.metrics.tool_side_divergences))
        .int_opt("commands_run_live", runs.iter().map(|r| r.metrics.commands_run_live))
        .text_opt("workspace_diverged_at", runs.iter().map(|r| r.metrics.workspace_diverged_at.as_deref()))
        .text_opt("final_answer", runs.iter().map(|r| r.final_answer.as_deref()))
        .text_opt("error", runs.iter().map(|r| r.error.as_deref()))
        .text("system_under_test", runs.iter().map(|r| r.system_under_test.as_str()))
        .signed_opt("agent_exit_code", runs.iter().map(|r| r.agent_exit_code.map(i64::from)));
    t.finish(metadata("runs"))
}

/// One row per model call.
pub fn steps_batch(runs: &[RunReport]) -> Result<RecordBatch, ArrowError> {
    let rows: Vec<(&RunReport, &StepRow)> = runs.iter().flat_map(|r| r.steps.iter().map(move |s| (r, s))).collect();
    let mut t = TableBuilder::default();
    t.text("scenario", rows.iter().map(|(r, _)| r.scenario.as_str()))
        .text("variant", rows.iter().map(|(r, _)| r.variant.as_str()))
        .int("trial", rows.iter().map(|(r, _)| r.trial))
        .int("step", rows.iter().map(|(_, s)| s.step))
        .int("call_index", rows.iter().map(|(_, s)| s.call_index))
        .text("purpose", rows.iter().map(|(_, s)| s.purpose.as_str()))
        .int("attempt", rows.iter().map(|(_, s)| s.attempt))
        .text_opt("error", rows.iter().map(|(_, s)| s.error.as_deref()))
        .text_opt("server_result", rows.iter().map(|(_, s)| s.server_result.as_deref()))
        .int_opt("request_messages", rows.iter().map(|(_, s)| s.request_messages))
        .int_opt("input_tokens", rows.iter().map(|(_, s)| s.input_tokens))
        .int_opt("input_tokens_uncompacted", rows.iter().map(|(_, s)| s.input_tokens_uncompacted))
        .int("estimated_input_tokens", rows.iter().map(|(_, s)| s.estimated_input_tokens))
        .int_opt("output_tokens", rows.iter().map(|(_, s)| s.output_tokens))
        .int_opt("cache_read_tokens", rows.iter().map(|(_, s)| s.cache_read_tokens))
        .float_opt("estimated_cost_usd", rows.iter().map(|(_, s)| s.estimated_cost_usd))
        .int_opt("input_tokens_recorded", rows.iter().map(|(_, s)| s.usage_recorded.map(|u| u.input_tokens)))
        .int_opt("output_tokens_recorded", rows.iter().map(|(_, s)| s.usage_recorded.map(|u| u.output_tokens)))
        .int_opt("cache_read_tokens_recorded", rows.iter().map(|(_, s)| s.usage_recorded.map(|u| u.cache_read_tokens)))
        .int_opt("cache_write_tokens_recorded", rows.iter().map(|(_, s)| s.usage_recorded.map(|u| u.cache_write_tokens)))
        .int_opt("cache_write_1h_tokens_recorded", rows.iter().map(|(_, s)| s.cache_write_1h_tokens_recorded))
        .int_opt("exchange", rows.iter().map(|(_, s)| s.exchange))
        .boolean("live", rows.iter().map(|(_, s)| s.live))
        .boolean("cache_break_simulated", rows.iter().map(|(_, s)| s.cache_break_simulated))
        .int_opt("cache_write_tokens", rows.iter().map(|(_, s)| s.cache_write_tokens))
        .int_opt("cache_write_1h_tokens", rows.iter().map(|(_, s)| s.cache_write_1h_tokens))
        .boolean("cache_break_detected", rows.iter().map(|(_, s)| s.cache_break_detected))
        .text_opt("cache_break_causes", rows.iter().map(|(_, s)| s.cache_break_causes.as_deref()))
        .text_opt("cache_break_cause", explained(&rows, |e| Some(e.site.cause)))
        .text_opt("cache_break_by", explained(&rows, |e| e.by.as_deref()))
        .int_opt("cache_break_message", explained(&rows, |e| e.site.message))
        .text_opt("cache_break_role", explained(&rows, |e| Some(e.site.role).filter(|role| !role.is_empty())))
        .text_opt("cache_break_block", explained(&rows, |e| Some(e.site.block.as_str()).filter(|block| !block.is_empty())))
        .int_opt("cache_break_byte_offset", explained(&rows, |e| e.site.byte_offset))
        .text_opt("cache_break_span", explained(&rows, |e| e.site.span.as_deref()))
        .int_opt("cache_tokens_lost", explained(&rows, |e| Some(e.site.lost_tokens)))
        .float_opt("cache_lost_cost_usd", explained(&rows, |e| e.lost_usd))
        .text_opt("finish_reason", rows.iter().map(|(_, s)| s.finish_reason.as_deref()))
        .text_list("tool_calls", rows.iter().map(|(_, s)| s.tool_calls.iter().map(String::as_str)))
        .int("started_ms", rows.iter().map(|(_, s)| s.started_ms))
        .int("finished_ms", rows.iter().map(|(_, s)| s.finished_ms))
        .int("agent_depth", rows.iter().map(|(_, s)| s.agent_depth))
        .int_opt("parent_step", rows.iter().map(|(_, s)| s.parent_step))
        .text_opt("parent_call_id", rows.iter().map(|(_, s)| s.parent_call_id.as_deref()))
        .text_opt("sent_messages", rows.iter().map(|(_, s)| s.sent_messages.as_deref()))
        .int_opt("reply_message", rows.iter().map(|(_, s)| s.reply_message))
        .text_opt("messages_first_seen", rows.iter().map(|(_, s)| s.messages_first_seen.as_deref()))
        .int("references_used", rows.iter().map(|(_, s)| s.references_used))
        .int("references_lost", rows.iter().map(|(_, s)| s.references_lost))
        .text_opt("references_lost_spans", rows.iter().map(|(_, s)| s.references_lost_spans.as_deref()));
    t.finish(metadata("steps"))
}

/// One value per step row from its break explanation (null without a break).
fn explained<'a, T: 'a>(rows: &'a [(&RunReport, &StepRow)], value: impl Fn(&'a ExplainedBreak) -> Option<T> + 'a) -> impl Iterator<Item = Option<T>> + 'a {
    rows.iter().map(move |(_, s)| s.cache_break_explained.as_ref().and_then(&value))
}

/// One row per loop event.
pub fn events_batch(runs: &[RunReport]) -> Result<RecordBatch, ArrowError> {
    let rows: Vec<(&RunReport, &EventRow)> = runs.iter().flat_map(|r| r.events.iter().map(move |e| (r, e))).collect();
    let mut t = TableBuilder::default();
    t.text("scenario", rows.iter().map(|(r, _)| r.scenario.as_str()))
        .text("variant", rows.iter().map(|(r, _)| r.variant.as_str()))
        .int("trial", rows.iter().map(|(r, _)| r.trial))
        .int("seq", rows.iter().map(|(_, e)| e.seq))
        .int("step", rows.iter().map(|(_, e)| e.step))
        .int("at_ms", rows.iter().map(|(_, e)| e.at_ms))
        .text("kind", rows.iter().map(|(_, e)| e.kind.as_str()))
        .int_opt("layer", rows.iter().map(|(_, e)| e.layer))
        .text_opt("strategy", rows.iter().map(|(_, e)| e.strategy.as_deref()))
        .int_opt("tokens_before", rows.iter().map(|(_, e)| e.tokens_before))
        .int_opt("tokens_after", rows.iter().map(|(_, e)| e.tokens_after))
        .text("payload", rows.iter().map(|(_, e)| e.payload.as_str()));
    t.finish(metadata("events"))
}
