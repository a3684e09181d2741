//! A report's runs in the shapes other tools read (`docs/export.md`):
//! OpenTelemetry GenAI traces ([`otlp`]) and Harbor's Agent Trajectory
//! Interchange Format ([`atif`]). Both are built from the three Parquet
//! tables alone, so a report from any machine or version exports the same;
//! [`RunTrace::load`] joins each run with its steps and events.

pub mod atif;
pub mod otlp;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

use serde_json::Value;

use crate::error::ReportError;
use crate::table::Table;

/// Outcomes that end a run as the agent meant to: anything else is an error
/// in both exports (`error.type`, an ATIF step's `extra.error`).
pub const SUCCESS_OUTCOMES: [&str; 4] = ["final_answer", "ask_user", "stopped", "submitted"];

/// One run of a report with its model calls and loop events.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTrace {
    /// `scenario` column.
    pub scenario: String,
    /// `variant` column.
    pub variant: String,
    /// The run's row in `runs.parquet`, to tell repeated runs apart.
    pub row: usize,
    /// `scenario_file` column.
    pub scenario_file: String,
    /// `wire` column (`openai-chat`, `anthropic`, ...).
    pub wire: String,
    /// `model` column.
    pub model: String,
    /// `strategy` column.
    pub strategy: String,
    /// `system_under_test` column: `reloop` or a black-box agent's name.
    pub agent: String,
    /// `outcome` column.
    pub outcome: String,
    /// `passed` column.
    pub passed: bool,
    /// `error` column.
    pub error: Option<String>,
    /// `final_answer` column.
    pub final_answer: Option<String>,
    /// `virtual_ms` column: the run's length on the loop's clock.
    pub virtual_ms: u64,
    /// `estimated_cost_usd` column.
    pub cost_usd: Option<f64>,
    /// `doom_loop_kind` column.
    pub doom_loop_kind: Option<String>,
    /// `doom_loop_first_step` column.
    pub doom_loop_first_step: Option<u64>,
    /// `tokens_saved_total` column (may be negative).
    pub tokens_saved: i64,
    /// The run's model calls, in order.
    pub steps: Vec<Step>,
    /// The run's loop events, in order, without the text deltas.
    pub events: Vec<Event>,
    /// The text the main agent's model wrote at each step (the
    /// `llm_text_delta` events joined), by step number.
    pub texts: BTreeMap<u64, String>,
}

/// One model call (a row of `steps.parquet`).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// `step` column.
    pub step: u64,
    /// `purpose` column (`main`, `compaction`, `final_turn`, ...).
    pub purpose: String,
    /// `attempt` column: 0 for the first try, then each retry.
    pub attempt: u64,
    /// `error` column: the error class of a failed call.
    pub error: Option<String>,
    /// `input_tokens` column.
    pub input_tokens: Option<u64>,
    /// `output_tokens` column.
    pub output_tokens: Option<u64>,
    /// `cache_read_tokens` column.
    pub cache_read_tokens: Option<u64>,
    /// `cache_write_tokens` column.
    pub cache_write_tokens: Option<u64>,
    /// `cache_break_detected` column.
    pub cache_break_detected: bool,
    /// `cache_break_causes` column.
    pub cache_break_causes: Option<String>,
    /// `finish_reason` column.
    pub finish_reason: Option<String>,
    /// `started_ms` column.
    pub started_ms: u64,
    /// `finished_ms` column.
    pub finished_ms: u64,
    /// `agent_depth` column: 0 for the main agent, 1 for a sub-agent.
    pub agent_depth: u64,
    /// `parent_call_id` column: the tool call that started a sub-agent.
    pub parent_call_id: Option<String>,
}

/// One loop event (a row of `events.parquet`), its payload parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `step` column.
    pub step: u64,
    /// `at_ms` column.
    pub at_ms: u64,
    /// `kind` column.
    pub kind: String,
    /// `payload` column, parsed (an object with `kind` and the event's fields).
    pub payload: Value,
    /// 0 for the main agent's events, 1 inside a sub-agent (between its
    /// `sub_agent_started` and `sub_agent_finished`).
    pub agent_depth: u64,
}

impl Event {
    /// A text field of the payload.
    pub fn text(&self, field: &str) -> Option<&str> {
        self.payload.get(field).and_then(Value::as_str)
    }

    /// An integer field of the payload.
    pub fn int(&self, field: &str) -> Option<u64> {
        self.payload.get(field).and_then(Value::as_u64)
    }
}

impl RunTrace {
    /// Reads a report directory; runs whose outcome is `skipped` (a
    /// black-box agent not installed) are left out: nothing ran.
    pub fn load(dir: &Path) -> Result<Vec<Self>, ReportError> {
        let runs = Table::load(dir, "runs")?;
        let steps = Table::load(dir, "steps")?;
        let events = Table::load(dir, "events")?;
        let mut traces = read_runs(&runs)?;
        let mut step_rows = by_key(read_steps(&steps)?);
        let mut event_rows = by_key(read_events(&events)?);
        for trace in &mut traces {
            let key = (trace.scenario.clone(), trace.variant.clone());
            trace.steps = take_run(&mut step_rows, &key);
            let mut depth: u64 = 0;
            for mut event in take_run(&mut event_rows, &key) {
                // A sub-agent's events come between its start and finish,
                // numbered by its own steps.
                if event.kind == "sub_agent_finished" {
                    depth = depth.saturating_sub(1);
                }
                event.agent_depth = depth;
                if event.kind == "sub_agent_started" {
                    depth += 1;
                }
                if event.kind == "llm_text_delta" {
                    if depth == 0 {
                        trace.texts.entry(event.step).or_default().push_str(event.text("text").unwrap_or_default());
                    }
                } else {
                    trace.events.push(event);
                }
            }
        }
        traces.retain(|trace| trace.outcome != "skipped");
        Ok(traces)
    }

    /// Whether the run ended in an error (see [`SUCCESS_OUTCOMES`]).
    pub fn failed(&self) -> bool {
        !SUCCESS_OUTCOMES.contains(&self.outcome.as_str())
    }
}

/// Rows of one table keyed by run, each with the number that grows along a
/// run (`call_index`, `seq`).
type Keyed<T> = Vec<((String, String), (u64, T))>;

/// The rows of each run key, in table order.
fn by_key<T>(rows: Keyed<T>) -> HashMap<(String, String), VecDeque<(u64, T)>> {
    let mut grouped: HashMap<_, VecDeque<_>> = HashMap::new();
    for (key, row) in rows {
        grouped.entry(key).or_default().push_back(row);
    }
    grouped
}

/// Takes the rows of the next run of `key`: up to where the ordering number
/// stops growing (a repeated run of the same scenario and variant starts
/// over at 0).
fn take_run<T>(grouped: &mut HashMap<(String, String), VecDeque<(u64, T)>>, key: &(String, String)) -> Vec<T> {
    let Some(rows) = grouped.get_mut(key) else { return Vec::new() };
    let mut taken = Vec::new();
    let mut last = None;
    while let Some((position, _)) = rows.front() {
        if last.is_some_and(|last| *position <= last) {
            break;
        }
        last = Some(*position);
        taken.extend(rows.pop_front().map(|(_, row)| row));
    }
    taken
}

fn ints(table: &Table, name: &str) -> Vec<Option<u64>> {
    let values = table.number(name).unwrap_or_else(|| vec![None; table.len()]);
    values.into_iter().map(|v| v.map(|v| v.max(0.0) as u64)).collect()
}

fn floats(table: &Table, name: &str) -> Vec<Option<f64>> {
    table.number(name).unwrap_or_else(|| vec![None; table.len()])
}

fn texts(table: &Table, name: &str) -> Result<Vec<Option<String>>, ReportError> {
    Ok(table.text_opt(name)?.unwrap_or_else(|| vec![None; table.len()]))
}

fn keys(table: &Table) -> Result<Vec<(String, String)>, ReportError> {
    Ok(table.text("scenario")?.into_iter().zip(table.text("variant")?).collect())
}

fn read_runs(table: &Table) -> Result<Vec<RunTrace>, ReportError> {
    let text = |name| -> Result<Vec<String>, ReportError> { Ok(texts(table, name)?.into_iter().map(Option::unwrap_or_default).collect()) };
    let (scenario_file, wire, model, strategy) = (text("scenario_file")?, text("wire")?, text("model")?, text("strategy")?);
    let (agent, outcome, error, final_answer) = (text("system_under_test")?, text("outcome")?, texts(table, "error")?, texts(table, "final_answer")?);
    let (passed, virtual_ms, cost, saved) =
        (ints(table, "passed"), ints(table, "virtual_ms"), floats(table, "estimated_cost_usd"), floats(table, "tokens_saved_total"));
    let (doom_kind, doom_step) = (texts(table, "doom_loop_kind")?, ints(table, "doom_loop_first_step"));
    Ok(keys(table)?
        .into_iter()
        .enumerate()
        .map(|(row, (scenario, variant))| RunTrace {
            scenario,
            variant,
            row,
            scenario_file: scenario_file[row].clone(),
            wire: wire[row].clone(),
            model: model[row].clone(),
            strategy: strategy[row].clone(),
            agent: if agent[row].is_empty() { "reloop".to_owned() } else { agent[row].clone() },
            outcome: outcome[row].clone(),
            passed: passed[row] == Some(1),
            error: error[row].clone(),
            final_answer: final_answer[row].clone(),
            virtual_ms: virtual_ms[row].unwrap_or_default(),
            cost_usd: cost[row],
            doom_loop_kind: doom_kind[row].clone(),
            doom_loop_first_step: doom_step[row],
            tokens_saved: saved[row].unwrap_or_default() as i64,
            steps: Vec::new(),
            events: Vec::new(),
            texts: BTreeMap::new(),
        })
        .collect())
}

fn read_steps(table: &Table) -> Result<Keyed<Step>, ReportError> {
    let int = |name| ints(table, name);
    let (step, attempt, started, finished, depth) = (int("step"), int("attempt"), int("started_ms"), int("finished_ms"), int("agent_depth"));
    let (input, output, read, write) = (int("input_tokens"), int("output_tokens"), int("cache_read_tokens"), int("cache_write_tokens"));
    let (purpose, error, causes) = (texts(table, "purpose")?, texts(table, "error")?, texts(table, "cache_break_causes")?);
    let (finish, parent, broke) = (texts(table, "finish_reason")?, texts(table, "parent_call_id")?, int("cache_break_detected"));
    let call_index = int("call_index");
    Ok(keys(table)?
        .into_iter()
        .enumerate()
        .map(|(row, key)| {
            let value = Step {
                step: step[row].unwrap_or_default(),
                purpose: purpose[row].clone().unwrap_or_default(),
                attempt: attempt[row].unwrap_or_default(),
                error: error[row].clone(),
                input_tokens: input[row],
                output_tokens: output[row],
                cache_read_tokens: read[row],
                cache_write_tokens: write[row],
                cache_break_detected: broke[row] == Some(1),
                cache_break_causes: causes[row].clone(),
                finish_reason: finish[row].clone(),
                started_ms: started[row].unwrap_or_default(),
                finished_ms: finished[row].unwrap_or_default(),
                agent_depth: depth[row].unwrap_or_default(),
                parent_call_id: parent[row].clone(),
            };
            (key, (call_index[row].unwrap_or(row as u64), value))
        })
        .collect())
}

fn read_events(table: &Table) -> Result<Keyed<Event>, ReportError> {
    let (seq, step, at) = (ints(table, "seq"), ints(table, "step"), ints(table, "at_ms"));
    let (kind, payload) = (table.text("kind")?, table.text("payload")?);
    keys(table)?
        .into_iter()
        .enumerate()
        .map(|(row, key)| {
            let parsed = serde_json::from_str(&payload[row]).map_err(|e| ReportError::Column {
                path: table.path.clone(),
                column: "payload".to_owned(),
                problem: format!("row {row} is not JSON: {e}"),
            })?;
            let event =
                Event { step: step[row].unwrap_or_default(), at_ms: at[row].unwrap_or_default(), kind: kind[row].clone(), payload: parsed, agent_depth: 0 };
            Ok((key, (seq[row].unwrap_or(row as u64), event)))
        })
        .collect()
}
