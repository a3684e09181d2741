//! A report as OpenTelemetry traces in OTLP/JSON (an
//! `ExportTraceServiceRequest`), named by the GenAI semantic conventions so
//! Jaeger, Phoenix and Langfuse show a run as an agent run: one trace per
//! run, an `invoke_agent` span over one `chat` span per model call and one
//! `execute_tool` span per tool call (a sub-agent's spans under the tool
//! call that started it). reloop's findings ride along as `reloop.*`
//! attributes and span events. Span times are the run's virtual clock
//! (milliseconds from the run's start, as nanoseconds since the epoch), so
//! the same report always exports the same bytes.
//!
//! Under the current conventions the content rides along too, as their
//! opt-in attributes (`gen_ai.input.messages` on a run's first call,
//! `gen_ai.output.messages` on each main-agent call, the tool calls'
//! arguments and results), so an export imports back (`reloop import
//! --format otlp`) and replays with the same tool calls.
//!
//! The attribute names follow the current GenAI conventions by default; a
//! backend still on semantic-conventions v1.36.0 (the release OpenTelemetry's
//! transition plan has instrumentations keep until they opt in) gets that
//! release's names instead ([`Conventions::V1_36`]).

use std::collections::HashMap;

use serde_json::{Value, json};

use super::atif::Opening;
use super::{Event, RunTrace, Step};

mod content;

/// `SpanKind` values of the OTLP protobuf.
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;
/// `Status.StatusCode.STATUS_CODE_ERROR`.
const STATUS_ERROR: u8 = 2;

/// Which release of the GenAI semantic conventions names the attributes
/// (`reloop export --otel-conventions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Conventions {
    /// The current release, from the GenAI conventions' own repository:
    /// `gen_ai.provider.name`, `gen_ai.usage.input_tokens` with the cached
    /// tokens included, and the cache's reads and writes apart.
    #[default]
    Current,
    /// semantic-conventions v1.36.0: `gen_ai.system`, the input tokens as the
    /// provider counts them (Anthropic's leave the cached ones out), and no
    /// cache attributes, which that release did not have.
    V1_36,
}

impl Conventions {
    /// Every release, by the name `--otel-conventions` takes.
    pub const ALL: [Self; 2] = [Self::Current, Self::V1_36];

    /// The name `--otel-conventions` takes: `current`, `v1.36`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Current => "current",
            Self::V1_36 => "v1.36",
        }
    }

    /// The attribute that names the provider.
    fn provider_key(self) -> &'static str {
        match self {
            Self::Current => "gen_ai.provider.name",
            Self::V1_36 => "gen_ai.system",
        }
    }

    /// The usage attributes of `tokens`, spent on `wire`; a count the run does
    /// not have is left out.
    fn usage(self, wire: &str, tokens: &Tokens) -> Vec<Value> {
        let entries = match self {
            Self::Current => vec![
                ("gen_ai.usage.input_tokens", tokens.input),
                ("gen_ai.usage.output_tokens", tokens.output),
                ("gen_ai.usage.cache_read.input_tokens", tokens.cache_read),
                ("gen_ai.usage.cache_creation.input_tokens", tokens.cache_write),
            ],
            Self::V1_36 => {
                // reloop counts every prompt token; Anthropic's own count leaves the cache's out.
                let cached = if wire == "anthropic" { tokens.cache_read.unwrap_or_default() + tokens.cache_write.unwrap_or_default() } else { 0 };
                vec![("gen_ai.usage.input_tokens", tokens.input.map(|input| input.saturating_sub(cached))), ("gen_ai.usage.output_tokens", tokens.output)]
            }
        };
        entries.into_iter().filter_map(|(key, value)| value.map(|value| int(key, value))).collect()
    }
}

/// The tokens of a call, or of a run's calls summed.
struct Tokens {
    input: Option<u64>,
    output: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
}

impl Tokens {
    fn of_step(step: &Step) -> Self {
        Self { input: step.input_tokens, output: step.output_tokens, cache_read: step.cache_read_tokens, cache_write: step.cache_write_tokens }
    }

    fn of_run(run: &RunTrace) -> Self {
        let sum = |f: fn(&Step) -> Option<u64>| Some(run.steps.iter().filter_map(f).sum::<u64>());
        Self {
            input: sum(|s| s.input_tokens),
            output: sum(|s| s.output_tokens),
            cache_read: sum(|s| s.cache_read_tokens),
            cache_write: sum(|s| s.cache_write_tokens),
        }
    }
}

/// The `ExportTraceServiceRequest` for these runs, named by `conventions`,
/// without their opening prompts (see [`request_with_openings`]).
pub fn request(runs: &[RunTrace], conventions: Conventions) -> Value {
    request_with_openings(runs, conventions, &[])
}

/// The `ExportTraceServiceRequest` for these runs, named by `conventions`:
/// what `--otlp` writes and `--otlp-endpoint` posts to `/v1/traces`.
/// `openings[i]` is run `i`'s system prompt and task (from its scenario
/// file, when it could be read), the first call's input messages.
pub fn request_with_openings(runs: &[RunTrace], conventions: Conventions, openings: &[Option<Opening>]) -> Value {
    let spans: Vec<Value> =
        runs.iter().enumerate().flat_map(|(index, run)| run_spans(run, conventions, openings.get(index).and_then(Option::as_ref))).collect();
    json!({
        "resourceSpans": [{
            "resource": {"attributes": [text("service.name", "reloop"), text("service.version", env!("CARGO_PKG_VERSION"))]},
            "scopeSpans": [{
                "scope": {"name": "reloop", "version": env!("CARGO_PKG_VERSION")},
                "spans": spans,
            }],
        }],
    })
}

/// `gen_ai.provider.name` (`gen_ai.system` in v1.36.0) for a wire (the conventions' well-known values).
pub fn provider_name(wire: &str) -> &str {
    match wire {
        "openai-chat" | "openai-responses" => "openai",
        "anthropic" => "anthropic",
        gemini if gemini.starts_with("gemini") => "gcp.gemini",
        other => other,
    }
}

/// One span before it is written.
struct Span {
    id: String,
    parent: Option<String>,
    name: String,
    kind: u8,
    start_ms: u64,
    end_ms: u64,
    attributes: Vec<Value>,
    events: Vec<Value>,
    error: Option<String>,
}

impl Span {
    fn to_json(&self, trace_id: &str) -> Value {
        let mut span = json!({
            "traceId": trace_id,
            "spanId": self.id,
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": nanos(self.start_ms),
            "endTimeUnixNano": nanos(self.end_ms.max(self.start_ms)),
            "attributes": self.attributes,
            "events": self.events,
        });
        if let Some(parent) = &self.parent {
            span["parentSpanId"] = json!(parent);
        }
        if let Some(message) = &self.error {
            span["status"] = json!({"code": STATUS_ERROR, "message": message});
        }
        span
    }
}

/// Deterministic ids: the same run of the same report gets the same trace.
struct Ids {
    seed: u64,
    next: u64,
}

impl Ids {
    fn for_run(run: &RunTrace) -> Self {
        Self { seed: fnv1a(format!("{}\0{}\0{}", run.scenario, run.variant, run.row).as_bytes()), next: 0 }
    }

    fn trace_id(&self) -> String {
        format!("{:016x}{:016x}", splitmix(self.seed) | 1, splitmix(self.seed ^ 0x5eed))
    }

    fn span_id(&mut self) -> String {
        self.next += 1;
        format!("{:016x}", splitmix(self.seed.wrapping_add(self.next.wrapping_mul(0x9e37_79b9))) | 1)
    }
}

fn run_spans(run: &RunTrace, conventions: Conventions, opening: Option<&Opening>) -> Vec<Value> {
    let mut ids = Ids::for_run(run);
    let trace_id = ids.trace_id();
    let common = |operation: &str| {
        vec![text("gen_ai.operation.name", operation), text(conventions.provider_key(), provider_name(&run.wire)), text("gen_ai.request.model", &run.model)]
    };
    let agent_id = ids.span_id();
    let (tools, starters) = tool_spans(run, &agent_id, &mut ids, &common("execute_tool"), conventions == Conventions::Current);
    let mut opening = opening.filter(|_| conventions == Conventions::Current);
    let chats: Vec<Span> = run
        .steps
        .iter()
        .map(|step| {
            let parent = step.parent_call_id.as_ref().and_then(|call| starters.get(call)).unwrap_or(&agent_id);
            let mut attributes = common("chat");
            attributes.extend(conventions.usage(&run.wire, &Tokens::of_step(step)));
            if conventions == Conventions::Current {
                attributes.extend(content::chat(run, step, &mut opening));
            }
            chat_span(run, step, ids.span_id(), parent, attributes)
        })
        .collect();
    let mut attributes = common("invoke_agent");
    attributes.extend(conventions.usage(&run.wire, &Tokens::of_run(run)));
    let agent = agent_span(run, agent_id, attributes);
    std::iter::once(&agent).chain(&chats).chain(&tools).map(|span| span.to_json(&trace_id)).collect()
}

fn agent_span(run: &RunTrace, id: String, mut attributes: Vec<Value>) -> Span {
    attributes.extend([
        text("gen_ai.agent.name", &run.agent),
        texts("gen_ai.response.finish_reasons", [run.outcome.as_str()]),
        text("reloop.scenario", &run.scenario),
        text("reloop.variant", &run.variant),
        text("reloop.scenario_file", &run.scenario_file),
        text("reloop.wire", &run.wire),
        text("reloop.strategy", &run.strategy),
        text("reloop.outcome", &run.outcome),
        boolean("reloop.passed", run.passed),
        int("reloop.compaction.tokens_saved", run.tokens_saved),
        boolean("reloop.doom_loop.detected", run.doom_loop_kind.is_some()),
    ]);
    if let Some(kind) = &run.doom_loop_kind {
        attributes.push(text("reloop.doom_loop.kind", kind));
    }
    if let Some(step) = run.doom_loop_first_step {
        attributes.push(int("reloop.doom_loop.first_step", step));
    }
    if let Some(cost) = run.cost_usd {
        attributes.push(json!({"key": "reloop.estimated_cost_usd", "value": {"doubleValue": cost}}));
    }
    let error = run.failed().then(|| run.error.clone().unwrap_or_else(|| run.outcome.clone()));
    if error.is_some() {
        attributes.push(text("error.type", &run.outcome));
    }
    Span {
        id,
        parent: None,
        name: format!("invoke_agent {}", run.agent),
        kind: KIND_INTERNAL,
        start_ms: 0,
        end_ms: run.virtual_ms.max(run.steps.iter().map(|s| s.finished_ms).max().unwrap_or_default()),
        attributes,
        events: run.events.iter().filter_map(finding).collect(),
        error,
    }
}

fn chat_span(run: &RunTrace, step: &Step, id: String, parent: &str, mut attributes: Vec<Value>) -> Span {
    if let Some(reason) = &step.finish_reason {
        attributes.push(texts("gen_ai.response.finish_reasons", [reason.as_str()]));
    }
    if let Some(class) = &step.error {
        attributes.push(text("error.type", class));
    }
    attributes.extend([
        int("reloop.step", step.step),
        int("reloop.attempt", step.attempt),
        text("reloop.purpose", &step.purpose),
        int("reloop.agent_depth", step.agent_depth),
        boolean("reloop.cache_break.detected", step.cache_break_detected),
    ]);
    if let Some(causes) = &step.cache_break_causes {
        attributes.push(text("reloop.cache_break.causes", causes));
    }
    Span {
        id,
        parent: Some(parent.to_owned()),
        name: format!("chat {}", run.model),
        kind: KIND_CLIENT,
        start_ms: step.started_ms,
        end_ms: step.finished_ms,
        attributes,
        events: Vec::new(),
        error: step.error.clone(),
    }
}

/// The `execute_tool` spans in the order the calls started: from
/// `tool_start` to its `tool_end` (`elapsed_ms` later), or a zero-length
/// span with `error.type` `denied` for a `tool_denied`; and the span of each
/// call that started a sub-agent, by call id, for the sub-agent's `chat`
/// spans. A sub-agent numbers its calls afresh (its `call_000_0` is not its
/// parent's), so a call's span is looked up among the calls of its own
/// agent: the ones still open.
fn tool_spans(run: &RunTrace, agent_id: &str, ids: &mut Ids, common: &[Value], content: bool) -> (Vec<Span>, HashMap<String, String>) {
    let mut spans: Vec<Span> = Vec::new();
    let mut starters: HashMap<String, String> = HashMap::new();
    // Per running agent, innermost last: its open calls by id (into `spans`).
    let mut open: Vec<HashMap<String, usize>> = vec![HashMap::new()];
    // The spans of the calls that started the sub-agents now running.
    let mut sub_agents: Vec<String> = Vec::new();
    for event in &run.events {
        let call = event.text("call_id").unwrap_or_default().to_owned();
        let calls = open.len() - 1;
        match event.kind.as_str() {
            "sub_agent_started" => {
                let span_id = open[calls].get(&call).map_or_else(|| agent_id.to_owned(), |&index| spans[index].id.clone());
                starters.insert(call, span_id.clone());
                sub_agents.push(span_id);
                open.push(HashMap::new());
            }
            "sub_agent_finished" if calls > 0 => {
                sub_agents.pop();
                open.pop();
            }
            "tool_start" | "tool_denied" => {
                let parent_id = sub_agents.last().map_or_else(|| agent_id.to_owned(), Clone::clone);
                let tool = event.text("tool").unwrap_or_default();
                let mut attributes = common.to_vec();
                attributes.extend([
                    text("gen_ai.tool.name", tool),
                    text("gen_ai.tool.call.id", &call),
                    text("gen_ai.tool.type", "function"),
                    int("reloop.step", event.step),
                ]);
                if content {
                    attributes.push(text("gen_ai.tool.call.arguments", event.text("arguments").unwrap_or("{}")));
                }
                let denied = event.kind == "tool_denied";
                if denied {
                    attributes.push(text("error.type", "denied"));
                    if content {
                        attributes.push(text("gen_ai.tool.call.result", event.text("reason").unwrap_or("denied")));
                    }
                }
                let span = Span {
                    id: ids.span_id(),
                    parent: Some(parent_id),
                    name: format!("execute_tool {tool}"),
                    kind: KIND_INTERNAL,
                    start_ms: event.at_ms,
                    end_ms: event.at_ms,
                    attributes,
                    events: Vec::new(),
                    error: denied.then(|| event.text("reason").unwrap_or("denied").to_owned()),
                };
                if !denied {
                    open[calls].insert(call, spans.len());
                }
                spans.push(span);
            }
            "tool_end" => {
                if let Some(index) = open[calls].remove(&call) {
                    let span = &mut spans[index];
                    span.end_ms = span.start_ms + event.int("elapsed_ms").unwrap_or_default();
                    if content {
                        span.attributes.push(text("gen_ai.tool.call.result", event.text("result_summary").unwrap_or_default()));
                    }
                    if event.payload.get("is_error").and_then(Value::as_bool) == Some(true) {
                        span.attributes.push(text("error.type", "tool_error"));
                        span.error = Some(event.text("result_summary").unwrap_or("tool error").to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    (spans, starters)
}

/// A span event for one of reloop's findings: a compaction (reloop's or the
/// agent's), a cache break with its cause, a doom loop.
fn finding(event: &Event) -> Option<Value> {
    let kind = event.kind.as_str();
    let mut attributes = vec![text("reloop.event", kind), int("reloop.step", event.step)];
    let (before, after) = (event.int("tokens_before"), event.int("tokens_after"));
    // An agent's compaction is one even when its session states no sizes
    // (Goose keeps no usage a size could come from): its sizes are then absent.
    let name = if kind == "agent_compaction" || (before.is_some() && after.is_some()) {
        attributes.extend(before.map(|before| int("reloop.compaction.tokens_before", before)));
        attributes.extend(after.map(|after| int("reloop.compaction.tokens_after", after)));
        if let Some(strategy) = event.text("strategy") {
            attributes.push(text("reloop.strategy", strategy));
        }
        if let Some(layer) = event.int("layer") {
            attributes.push(int("reloop.compaction.layer", layer));
        }
        "reloop.compaction"
    } else if kind == "cache_break_detected" {
        let causes: Vec<&str> = event.payload.get("changed").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        attributes.push(texts("reloop.cache_break.causes", causes));
        "reloop.cache_break"
    } else if kind.starts_with("doom_loop_") {
        let detector =
            event.text("detector").map(str::to_owned).unwrap_or_else(|| kind.trim_start_matches("doom_loop_").trim_end_matches("_detected").to_owned());
        attributes.push(text("reloop.doom_loop.kind", &detector));
        for field in ["tool", "reaction"] {
            if let Some(value) = event.text(field) {
                attributes.push(text(&format!("reloop.doom_loop.{field}"), value));
            }
        }
        "reloop.doom_loop"
    } else {
        return None;
    };
    Some(json!({"timeUnixNano": nanos(event.at_ms), "name": name, "attributes": attributes}))
}

fn nanos(ms: u64) -> String {
    (u128::from(ms) * 1_000_000).to_string()
}

fn text(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

fn texts<'a>(key: &str, values: impl IntoIterator<Item = &'a str>) -> Value {
    let values: Vec<Value> = values.into_iter().map(|v| json!({"stringValue": v})).collect();
    json!({"key": key, "value": {"arrayValue": {"values": values}}})
}

/// OTLP/JSON writes 64-bit integers as strings (the protobuf JSON mapping).
fn int(key: &str, value: impl std::fmt::Display) -> Value {
    json!({"key": key, "value": {"intValue": value.to_string()}})
}

fn boolean(key: &str, value: bool) -> Value {
    json!({"key": key, "value": {"boolValue": value}})
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::export::{Event, RunTrace, Step};

    fn event(step: u64, at_ms: u64, payload: Value) -> Event {
        Event { step, at_ms, kind: payload["kind"].as_str().unwrap().to_owned(), payload, agent_depth: 0 }
    }

    fn run() -> RunTrace {
        let step = |step, started_ms, finished_ms| Step {
            step,
            purpose: "main".into(),
            attempt: 0,
            error: None,
            input_tokens: Some(100),
            output_tokens: Some(10),
            cache_read_tokens: Some(60),
            cache_write_tokens: Some(40),
            cache_break_detected: step == 1,
            cache_break_causes: (step == 1).then(|| "tools".to_owned()),
            finish_reason: Some("tool_calls".into()),
            started_ms,
            finished_ms,
            agent_depth: 0,
            parent_call_id: None,
        };
        RunTrace {
            scenario: "s".into(),
            variant: "default".into(),
            row: 0,
            scenario_file: "s.yaml".into(),
            wire: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            strategy: "roku".into(),
            agent: "reloop".into(),
            outcome: "doom_loop_stopped".into(),
            passed: true,
            error: Some("stopped: identical calls".into()),
            final_answer: None,
            virtual_ms: 5_000,
            cost_usd: Some(0.01),
            doom_loop_kind: Some("identical_calls".into()),
            doom_loop_first_step: Some(1),
            tokens_saved: 12,
            steps: vec![step(0, 0, 1_000), step(1, 2_500, 4_000)],
            events: vec![
                event(0, 1_000, json!({"kind": "tool_start", "call_id": "c1", "tool": "read", "arguments": "{}"})),
                event(
                    0,
                    1_000,
                    json!({"kind": "tool_end", "call_id": "c1", "tool": "read", "is_error": true, "elapsed_ms": 1_500, "result_summary": "no such file"}),
                ),
                event(1, 2_500, json!({"kind": "microcompact_ran", "strategy": "roku", "cleared": 1, "tokens_before": 90, "tokens_after": 78})),
                event(1, 2_500, json!({"kind": "cache_break_detected", "changed": ["tools"]})),
                event(1, 4_000, json!({"kind": "doom_loop_detected", "detector": "identical_calls", "tool": "read", "repeats": 3, "reaction": "stop"})),
            ],
            texts: Default::default(),
        }
    }

    fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
        &span["attributes"].as_array().unwrap().iter().find(|a| a["key"] == key).unwrap_or_else(|| panic!("{key} missing on {span}"))["value"]
    }

    #[test]
    fn a_run_is_an_agent_span_over_its_calls_and_tools_in_virtual_time() {
        let request = request(&[run()], Conventions::Current);
        let spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap();
        let names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["invoke_agent reloop", "chat claude-sonnet-4-5", "chat claude-sonnet-4-5", "execute_tool read"]);
        let agent = &spans[0];
        assert!(spans[1..].iter().all(|s| s["parentSpanId"] == agent["spanId"] && s["traceId"] == agent["traceId"]));
        assert_eq!((agent["startTimeUnixNano"].as_str(), agent["endTimeUnixNano"].as_str()), (Some("0"), Some("5000000000")));
        assert_eq!(attr(agent, "gen_ai.provider.name")["stringValue"], "anthropic");
        assert_eq!(attr(agent, "gen_ai.usage.cache_creation.input_tokens")["intValue"], "80");
        assert_eq!(attr(agent, "error.type")["stringValue"], "doom_loop_stopped");
        assert_eq!(agent["status"]["code"], 2);
        let chat = &spans[2];
        assert_eq!(attr(chat, "gen_ai.usage.cache_read.input_tokens")["intValue"], "60");
        assert_eq!(attr(chat, "gen_ai.response.finish_reasons")["arrayValue"]["values"][0]["stringValue"], "tool_calls");
        assert_eq!(attr(chat, "reloop.cache_break.causes")["stringValue"], "tools");
        let tool = &spans[3];
        assert_eq!(
            (attr(tool, "gen_ai.tool.call.id")["stringValue"].as_str(), attr(tool, "error.type")["stringValue"].as_str()),
            (Some("c1"), Some("tool_error"))
        );
        assert_eq!((tool["startTimeUnixNano"].as_str(), tool["endTimeUnixNano"].as_str()), (Some("1000000000"), Some("2500000000")));
        let findings: Vec<&str> = agent["events"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(findings, ["reloop.compaction", "reloop.cache_break", "reloop.doom_loop"]);
    }

    /// An agent's compaction whose session states no sizes (a Goose
    /// session keeps no usage to take them from) was dropped from the
    /// export: it is a `reloop.compaction` span event without sizes.
    #[test]
    fn an_agent_compaction_without_sizes_is_still_a_compaction_span_event() {
        let mut run = run();
        run.events = vec![event(1, 2_000, json!({"kind": "agent_compaction", "strategy": "recorded", "tokens_before": null, "tokens_after": null}))];
        let request = request(&[run], Conventions::Current);
        let agent = &request["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        let finding = &agent["events"][0];
        assert_eq!(finding["name"], "reloop.compaction", "{agent}");
        assert_eq!(attr(finding, "reloop.strategy")["stringValue"], "recorded");
        assert!(!finding["attributes"].as_array().unwrap().iter().any(|a| a["key"] == "reloop.compaction.tokens_before"), "{finding}");
    }

    /// A sub-agent numbers its calls afresh: its `c0` is not the parent's
    /// `c0` that started it, and its spans hang under the parent's.
    #[test]
    fn a_sub_agent_hangs_under_the_call_that_started_it_even_with_the_same_call_id() {
        let mut run = run();
        let mut sub_step = run.steps[0].clone();
        (sub_step.agent_depth, sub_step.parent_call_id, sub_step.started_ms, sub_step.finished_ms) = (1, Some("c0".into()), 1_000, 1_200);
        run.steps = vec![run.steps[0].clone(), sub_step];
        run.events = vec![
            event(0, 1_000, json!({"kind": "tool_start", "call_id": "c0", "tool": "Agent", "arguments": "{}"})),
            event(0, 1_000, json!({"kind": "sub_agent_started", "call_id": "c0", "task": "look", "step_budget": 2})),
            event(0, 1_200, json!({"kind": "tool_start", "call_id": "c0", "tool": "grep", "arguments": "{}"})),
            event(0, 1_200, json!({"kind": "tool_end", "call_id": "c0", "tool": "grep", "is_error": false, "elapsed_ms": 100, "result_summary": "x"})),
            event(
                0,
                1_300,
                json!({"kind": "sub_agent_finished", "call_id": "c0", "outcome": "final_answer", "steps": 1, "timed_out": false, "elapsed_ms": 300}),
            ),
            event(0, 1_000, json!({"kind": "tool_end", "call_id": "c0", "tool": "Agent", "is_error": false, "elapsed_ms": 400, "result_summary": "found"})),
        ];
        let request = request(&[run], Conventions::Current);
        let spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap();
        let named = |name: &str| spans.iter().find(|s| s["name"] == name).unwrap();
        let (agent_call, grep) = (named("execute_tool Agent"), named("execute_tool grep"));
        assert_eq!(grep["parentSpanId"], agent_call["spanId"]);
        assert_eq!(spans[2]["parentSpanId"], agent_call["spanId"], "the sub-agent's model call");
        assert_eq!((agent_call["endTimeUnixNano"].as_str(), grep["endTimeUnixNano"].as_str()), (Some("1400000000"), Some("1300000000")));
    }

    #[test]
    fn the_same_run_exports_the_same_ids_and_another_row_other_ones() {
        let first = request(&[run()], Conventions::Current);
        assert_eq!(first, request(&[run()], Conventions::Current));
        let mut again = run();
        again.row = 1;
        let id = |r: &Value| r["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"].as_str().unwrap().to_owned();
        assert_ne!(id(&first), id(&request(&[again], Conventions::Current)));
        assert_eq!(id(&first).len(), 32);
    }

    /// v1.36.0 names the provider `gen_ai.system`, has no cache attributes,
    /// and counts input as the provider does: Anthropic's without the cache.
    #[test]
    fn the_v1_36_conventions_keep_that_releases_names_and_counts() {
        let keys = |span: &Value| span["attributes"].as_array().unwrap().iter().map(|a| a["key"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
        let spans_of = |run: RunTrace| request(&[run], Conventions::V1_36)["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().clone();
        let anthropic = spans_of(run());
        for span in &anthropic {
            let keys = keys(span);
            assert!(keys.contains(&"gen_ai.system".to_owned()) && !keys.contains(&"gen_ai.provider.name".to_owned()), "{keys:?}");
            assert!(!keys.iter().any(|key| key.starts_with("gen_ai.usage.cache")), "{keys:?}");
        }
        assert_eq!(attr(&anthropic[0], "gen_ai.system")["stringValue"], "anthropic");
        // Each call: 100 prompt tokens, 60 read from the cache and 40 written to it.
        assert_eq!(
            (attr(&anthropic[1], "gen_ai.usage.input_tokens")["intValue"].as_str(), attr(&anthropic[1], "gen_ai.usage.output_tokens")["intValue"].as_str()),
            (Some("0"), Some("10"))
        );
        let mut chat = run();
        chat.wire = "openai-chat".into();
        let openai = spans_of(chat);
        assert_eq!(attr(&openai[0], "gen_ai.usage.input_tokens")["intValue"], "200", "OpenAI's count has the cached tokens in it");
        let current = request(&[run()], Conventions::Current);
        assert_eq!(attr(&current["resourceSpans"][0]["scopeSpans"][0]["spans"][1], "gen_ai.usage.input_tokens")["intValue"], "100");
    }

    #[test]
    fn wires_name_their_providers_as_the_conventions_do() {
        assert_eq!([provider_name("openai-chat"), provider_name("openai-responses"), provider_name("anthropic")], ["openai", "openai", "anthropic"]);
        assert_eq!(provider_name("gemini"), "gcp.gemini");
    }
}
