//! A report's runs as ATIF trajectories (Harbor's Agent Trajectory
//! Interchange Format, v1.8), one document per run, so a reloop run opens
//! in the tools that read Harbor's trajectories.
//!
//! The main agent's model calls are `agent` steps (the successful attempt
//! of each step: its text, tool calls with their arguments, the tools'
//! results as the observation, and `metrics` with prompt, completion and
//! cached tokens); reloop's compactions are `system` steps marked
//! `extra.context_management` (see [`compaction_step`]); the scripted user's
//! follow-ups and replies are `user` steps. Cache writes, cache breaks and
//! doom-loop marks are under `extra.reloop`. The run's end is a last
//! `system` step with its outcome (so a run whose every call failed is a
//! trajectory too). The report holds neither the scenario's prompts nor the
//! tools' full output: the caller passes the prompts ([`Opening`], read from
//! the scenario file), and an observation is the result's summary.

use serde_json::{Map, Value, json};

use super::{Event, RunTrace, Step};

/// The version written.
pub const SCHEMA_VERSION: &str = "ATIF-v1.8";

/// The file name of a run's trajectory: `SCENARIO.json`, or
/// `SCENARIO.VARIANT.json` for a variant other than `default`, `/` and
/// other unsafe characters replaced; repeated runs get `.N` (from 2).
pub fn file_name(run: &RunTrace, repeat: usize) -> String {
    let safe = |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_@.".contains(c) { c } else { '_' }).collect::<String>();
    let mut name = safe(&run.scenario);
    if run.variant != "default" {
        name = format!("{name}.{}", safe(&run.variant));
    }
    if repeat > 1 {
        name = format!("{name}.{repeat}");
    }
    format!("{name}.json")
}

/// The prompts a run started from: the scenario's system prompt and task.
#[derive(Debug, Clone, Default)]
pub struct Opening {
    /// The system prompt (empty: no step).
    pub system: String,
    /// The user's task.
    pub task: String,
}

/// One run as an ATIF trajectory; `opening` (when the scenario file could be
/// read) gives its first steps.
pub fn trajectory(run: &RunTrace, opening: Option<&Opening>) -> Value {
    let mut items: Vec<(u64, Value)> = Vec::new();
    if let Some(opening) = opening {
        if !opening.system.is_empty() {
            items.push((0, json!({"step_id": 0, "source": "system", "message": opening.system})));
        }
        items.push((0, json!({"step_id": 0, "source": "user", "message": opening.task})));
    }
    let calls = main_calls(run);
    for event in run.events.iter().filter(|e| e.agent_depth == 0) {
        if let Some(step) = compaction_step(event).or_else(|| user_step(event)) {
            items.push((event.at_ms, step));
        }
    }
    for call in &calls {
        items.push((call.finished_ms, agent_step(run, call)));
    }
    // Stable: at the same instant, events keep their order and precede the
    // model call they prepared.
    items.sort_by_key(|(at, _)| *at);
    items.push((run.virtual_ms, end_step(run)));
    let steps: Vec<Value> = items
        .into_iter()
        .enumerate()
        .map(|(index, (_, mut step))| {
            step["step_id"] = json!(index + 1);
            step
        })
        .collect();
    let sum = |f: fn(&Step) -> Option<u64>| run.steps.iter().filter_map(f).sum::<u64>();
    let mut final_metrics = json!({
        "total_prompt_tokens": sum(|s| s.input_tokens),
        "total_completion_tokens": sum(|s| s.output_tokens),
        "total_cached_tokens": sum(|s| s.cache_read_tokens),
        "total_steps": steps.len(),
        "extra": {"total_cache_write_tokens": sum(|s| s.cache_write_tokens), "llm_calls": run.steps.len()},
    });
    if let Some(cost) = run.cost_usd {
        final_metrics["total_cost_usd"] = json!(cost);
    }
    let mut reloop = json!({
        "scenario": run.scenario,
        "variant": run.variant,
        "scenario_file": run.scenario_file,
        "wire": run.wire,
        "strategy": run.strategy,
        "outcome": run.outcome,
        "passed": run.passed,
        "tokens_saved": run.tokens_saved,
    });
    for (key, value) in [("error", run.error.as_deref()), ("final_answer", run.final_answer.as_deref()), ("doom_loop_kind", run.doom_loop_kind.as_deref())] {
        if let Some(value) = value {
            reloop[key] = json!(value);
        }
    }
    if let Some(step) = run.doom_loop_first_step {
        reloop["doom_loop_first_step"] = json!(step);
    }
    json!({
        "schema_version": SCHEMA_VERSION,
        "session_id": file_name(run, 1).trim_end_matches(".json"),
        "agent": {"name": run.agent, "version": env!("CARGO_PKG_VERSION"), "model_name": run.model},
        "steps": steps,
        "final_metrics": final_metrics,
        "extra": {"reloop": reloop},
    })
}

/// The main agent's model calls that answered, one per step (a retried
/// call's failed attempts are counted in `extra.reloop.attempts`).
fn main_calls(run: &RunTrace) -> Vec<&Step> {
    run.steps.iter().filter(|s| s.agent_depth == 0 && s.purpose != "compaction" && s.error.is_none()).collect()
}

fn agent_step(run: &RunTrace, call: &Step) -> Value {
    let events: Vec<&Event> = run.events.iter().filter(|e| e.agent_depth == 0 && e.step == call.step).collect();
    let tool_calls: Vec<Value> = events
        .iter()
        .filter(|e| e.kind == "tool_start")
        .map(|e| {
            let raw = e.text("arguments").unwrap_or("{}");
            let mut call = json!({"tool_call_id": e.text("call_id"), "function_name": e.text("tool")});
            // ATIF's arguments are an object: text that is not one (a
            // truncated stream, a redaction) is kept whole under `extra`.
            match serde_json::from_str::<Value>(raw) {
                Ok(Value::Object(object)) => call["arguments"] = Value::Object(object),
                _ => {
                    call["arguments"] = json!({});
                    call["extra"] = json!({"raw_arguments": raw});
                }
            }
            call
        })
        .collect();
    let results: Vec<Value> = events
        .iter()
        .filter(|e| e.kind == "tool_end" || e.kind == "tool_denied")
        .map(|e| {
            let content = e.text("result_summary").or_else(|| e.text("reason")).unwrap_or_default();
            let mut result = json!({"source_call_id": e.text("call_id"), "content": content});
            if e.kind == "tool_denied" || e.payload.get("is_error").and_then(Value::as_bool) == Some(true) {
                result["extra"] = json!({"is_error": true, "denied": e.kind == "tool_denied"});
            }
            result
        })
        .collect();
    let mut metrics = Map::new();
    for (key, value) in [("prompt_tokens", call.input_tokens), ("completion_tokens", call.output_tokens), ("cached_tokens", call.cache_read_tokens)] {
        if let Some(value) = value {
            metrics.insert(key.to_owned(), json!(value));
        }
    }
    if let Some(written) = call.cache_write_tokens {
        metrics.insert("extra".to_owned(), json!({"cache_write_tokens": written}));
    }
    let attempts = run.steps.iter().filter(|s| s.agent_depth == 0 && s.step == call.step && s.purpose == call.purpose).count();
    let mut reloop = json!({"step": call.step, "purpose": call.purpose, "attempts": attempts, "started_ms": call.started_ms, "finished_ms": call.finished_ms});
    if let Some(reason) = &call.finish_reason {
        reloop["finish_reason"] = json!(reason);
    }
    if call.cache_break_detected {
        reloop["cache_break"] = json!({"causes": call.cache_break_causes});
    }
    let doom: Vec<&Value> = events.iter().filter(|e| e.kind.starts_with("doom_loop_")).map(|e| &e.payload).collect();
    if !doom.is_empty() {
        reloop["doom_loop"] = json!(doom);
    }
    let mut step = json!({
        "step_id": 0,
        "source": "agent",
        "model_name": run.model,
        "message": run.texts.get(&call.step).map(String::as_str).unwrap_or_default(),
        "llm_call_count": 1,
        "metrics": metrics,
        "extra": {"reloop": reloop},
    });
    if !tool_calls.is_empty() {
        step["tool_calls"] = json!(tool_calls);
    }
    if !results.is_empty() {
        step["observation"] = json!({"results": results});
    }
    step
}

/// How the run ended, as a last `system` step.
fn end_step(run: &RunTrace) -> Value {
    let mut message = format!("Run ended: {}.", run.outcome);
    if let Some(error) = run.error.as_deref().filter(|_| run.failed()) {
        message = format!("Run ended: {}: {error}", run.outcome);
    }
    let mut reloop = json!({"outcome": run.outcome, "virtual_ms": run.virtual_ms});
    if let Some(error) = &run.error {
        reloop["error"] = json!(error);
    }
    json!({"step_id": 0, "source": "system", "message": message, "extra": {"reloop": reloop}})
}

/// A compaction (any event with tokens before and after) as a `system`
/// step with Harbor's `context_management` mark: `compaction` with boundary
/// `replace` (as Harbor's converters mark a summary that replaces the
/// history) for a full compaction, `clearing` with boundary `in_place` for
/// reloop's lighter layers (old tool results cleared, rounds folded), which
/// edit the history without replacing it.
fn compaction_step(event: &Event) -> Option<Value> {
    let (before, after) = (event.int("tokens_before")?, event.int("tokens_after")?);
    let by = event.text("strategy").map(|s| format!(" ({s})")).unwrap_or_default();
    let (kind, boundary) = match event.kind.as_str() {
        "microcompact_ran" | "mid_compact_layer1_ran" | "mid_compact_layer2_ran" => ("clearing", "in_place"),
        _ => ("compaction", "replace"),
    };
    Some(json!({
        "step_id": 0,
        "source": "system",
        "message": format!("Context compacted by {}{by}: {before} -> {after} tokens.", event.kind),
        "extra": {
            "context_management": {"type": kind, "boundary": boundary},
            "reloop": {"step": event.step, "event": event.payload},
        },
    }))
}

/// What the scripted user said during the run: a queued follow-up, a
/// steering message, a reply to the agent's question.
fn user_step(event: &Event) -> Option<Value> {
    let message = match event.kind.as_str() {
        "follow_up_queued" | "steering_queued" => event.text("message")?,
        "user_replied" => event.text("reply")?,
        _ => return None,
    };
    Some(json!({"step_id": 0, "source": "user", "message": message, "extra": {"reloop": {"step": event.step, "event": event.kind}}}))
}
