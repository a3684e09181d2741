//! Inspect AI eval logs (UKGovernmentBEIS/inspect_ai, `src/inspect_ai/log/`),
//! in both forms Inspect writes:
//!
//! - `.eval` (`_recorders/eval.py`): a zip of `header.json` (the log
//!   without samples: version, status, `eval.model`, plan, results, stats),
//!   `samples/<id>_epoch_<n>.json` (one `EvalSample` each), `summaries.json`,
//!   `reductions.json` and `_journal/`. Samples are condensed on the way in
//!   (`_condense.py`): text over 100 characters in events becomes an
//!   `attachment://<hash>` reference into the sample's `attachments`, and
//!   since log format 3 the model events' inputs are pooled (`input: []`
//!   and `input_refs: [[start, end)]` ranges into `message_pool`, renamed
//!   `events_data.messages` in 2026, #3519).
//! - `.json` (`_recorders/json.py`): the whole `EvalLog`, samples inline.
//!
//! One session per sample and epoch. The accounting unit is an event of
//! the sample (`line` N is event N): the model calls are its `model`
//! events, in order, each with the input it was sent (the new user and tool
//! messages of that input are the session's turns and results, as the
//! model saw them) and the output it returned (`output.choices[0]`, with
//! `output.usage`, whose `input_tokens` exclude cached ones). A `tool`
//! event gives the result of a call that no later model call was sent (the
//! last call of a sample cut off by a limit). Model calls a scorer made, or
//! a sub-agent inside a tool's span, are not the agent's loop and are
//! ignored (the tool's result is what the replay serves). Everything else
//! (spans, sandbox, state, store, score, sample_init, info, logger) is
//! ignored by kind.

use std::collections::{HashMap, HashSet};

use reloop_wire::ToolSpec;
use serde_json::Value;

use super::{content_text, str_at, u64_at};
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// One sample and epoch of a log, as its own session.
#[derive(Debug)]
pub struct Sample {
    /// `<id>-epoch-<n>`, which names its scenario when the log holds more than one.
    pub part: String,
    /// The session.
    pub session: ImportedSession,
}

/// Whether an archive with these entry names is an `.eval` log.
pub fn is_eval_archive<'n>(mut names: impl Iterator<Item = &'n str>) -> bool {
    names.any(|name| name == "header.json")
}

/// Whether a JSON document is a `.json` eval log (for `--format auto`).
pub fn is_log_document(document: &Value) -> bool {
    document.get("eval").is_some_and(Value::is_object) && document.get("samples").is_some_and(Value::is_array)
}

/// The samples of an `.eval` archive, in the order of its entries; `Err`
/// names the entry and field that cannot be read.
pub fn parse_archive(archive: &mut crate::zip::Archive<'_>) -> Result<Vec<Sample>, String> {
    let mut json = |name: &str| -> Result<Value, String> {
        let bytes = archive.read(name)?;
        serde_json::from_slice(&bytes).map_err(|error| format!("entry {name}: not JSON ({error})"))
    };
    let header = json("header.json")?;
    let names: Vec<String> = archive.names().filter(|name| name.starts_with("samples/") && name.ends_with(".json")).map(str::to_owned).collect();
    let mut samples = Vec::new();
    for name in names {
        let value = archive.read(&name).and_then(|bytes| serde_json::from_slice(&bytes).map_err(|error| format!("entry {name}: not JSON ({error})")))?;
        samples.push(sample(value, &header).map_err(|why| format!("entry {name}: {why}"))?);
    }
    Ok(samples)
}

/// The samples of a `.json` log; `Err` names the sample and field.
pub fn parse_document(text: &str) -> Result<Vec<Sample>, String> {
    let mut log: Value = serde_json::from_str(text).map_err(|error| format!("not JSON ({error})"))?;
    let samples = match log.get_mut("samples").map(Value::take) {
        Some(Value::Array(samples)) => samples,
        _ => return Err("field `samples`: missing or not a list (a log written with --no-log-samples holds no model call)".into()),
    };
    samples.into_iter().enumerate().map(|(index, value)| sample(value, &log).map_err(|why| format!("samples[{index}]: {why}"))).collect()
}

/// One `EvalSample`, `log` the header (`eval.model`).
fn sample(mut value: Value, log: &Value) -> Result<Sample, String> {
    let part = format!(
        "{}-epoch-{}",
        value.get("id").map(|id| id.as_str().map_or_else(|| id.to_string(), str::to_owned)).unwrap_or_default(),
        u64_at(&value, "epoch")
    );
    let attachments = match value.get_mut("attachments").map(Value::take) {
        Some(Value::Object(attachments)) => attachments.into_iter().filter_map(|(hash, text)| Some((hash, text.as_str()?.to_owned()))).collect(),
        _ => HashMap::new(),
    };
    let mut missing = 0;
    resolve(&mut value, &attachments, &mut missing);
    let pool = value.pointer("/events_data/messages").or_else(|| value.get("message_pool")).and_then(Value::as_array).cloned().unwrap_or_default();
    let events = value.get("events").and_then(Value::as_array).ok_or("field `events`: missing or not a list")?;
    let mut session = ImportedSession { format: "inspect", model: log.pointer("/eval/model").and_then(Value::as_str).map(str::to_owned), ..Default::default() };
    session.lines.read = events.len();
    if missing > 0 {
        session.lines.warn(1, format!("{missing} `attachment://` references with no entry in `attachments`: kept as they are"));
    }
    let spans: HashMap<&str, (Option<&str>, Option<&str>)> = events
        .iter()
        .filter(|event| str_at(event, "event") == Some("span_begin"))
        .filter_map(|span| Some((str_at(span, "id")?, (str_at(span, "parent_id"), str_at(span, "type")))))
        .collect();
    let outside_the_loop = |event: &Value| {
        let mut span = str_at(event, "span_id");
        while let Some((parent, kind)) = span.and_then(|id| spans.get(id)) {
            match *kind {
                Some("scorer" | "scorers") => return Some("model call of a scorer"),
                Some("tool") => return Some("model call inside a tool's span (a sub-agent; the tool's result is replayed)"),
                _ => span = *parent,
            }
        }
        None
    };
    let inputs: Vec<Option<Result<Vec<Value>, String>>> =
        events.iter().map(|event| (str_at(event, "event") == Some("model") && outside_the_loop(event).is_none()).then(|| input(event, &pool))).collect();
    // Calls whose result a later model call was sent: read from there, as the model saw it.
    let sent_results: HashSet<&str> =
        inputs.iter().flatten().flatten().flatten().filter(|m| str_at(m, "role") == Some("tool")).filter_map(|m| str_at(m, "tool_call_id")).collect();
    let mut reader = Reader { session, seen: HashSet::new(), answered: HashSet::new(), tools: Vec::new() };
    for (index, event) in events.iter().enumerate() {
        let unit = index + 1;
        match (str_at(event, "event"), &inputs[index]) {
            (Some("model"), Some(Ok(input))) => reader.model(event, input, unit),
            (Some("model"), Some(Err(why))) => reader.session.lines.skip(unit, why.clone()),
            (Some("model"), None) => reader.session.lines.ignore(outside_the_loop(event).unwrap_or_default()),
            (Some("tool"), _) if str_at(event, "id").is_some_and(|id| !sent_results.contains(id) && !reader.answered.contains(id)) => {
                reader.tool_event(event, unit)
            }
            (Some("tool"), _) => reader.session.lines.ignore("tool (its result read from the next model call's input)"),
            (Some("compaction"), _) => {
                let count = |key: &str| event.get(key).and_then(Value::as_u64);
                let compaction = Compaction {
                    tokens_before: count("tokens_before"),
                    tokens_after: count("tokens_after"),
                    trigger: str_at(event, "type").map(str::to_owned),
                    line: unit,
                    ..Compaction::default()
                };
                reader.session.items.push(Item::Compaction(compaction));
                reader.session.lines.used += 1;
            }
            (Some(kind), _) => reader.session.lines.ignore(kind),
            (None, _) => reader.session.lines.skip(unit, "field `event`: missing or not a string; skipped"),
        }
    }
    if let Some(error) = value.pointer("/error/message").and_then(Value::as_str) {
        reader.session.lines.warn(events.len(), format!("the sample ended on an error: {error}"));
    }
    if let Some(limit) = value.get("limit").filter(|limit| !limit.is_null()) {
        reader.session.lines.warn(events.len(), format!("the sample was stopped by a limit: {limit}"));
    }
    reader.session.declared_tools = reader.tools;
    Ok(Sample { part, session: reader.session })
}

/// Replaces every `attachment://<hash>` string (and the older `tc://`) by
/// the attachment, as `resolve_sample_attachments` does; counts those with
/// no attachment.
fn resolve(value: &mut Value, attachments: &HashMap<String, String>, missing: &mut usize) {
    match value {
        Value::String(text) => {
            if let Some(hash) = text.strip_prefix("attachment://").or_else(|| text.strip_prefix("tc://")) {
                match attachments.get(hash) {
                    Some(attachment) => *text = attachment.clone(),
                    None => *missing += 1,
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| resolve(item, attachments, missing)),
        Value::Object(fields) => fields.values_mut().for_each(|item| resolve(item, attachments, missing)),
        _ => {}
    }
}

/// The messages a model event was sent: `input`, or its `input_refs`
/// ranges into the pool (`_expand_refs`: `pool[start:end]`, end exclusive).
fn input(event: &Value, pool: &[Value]) -> Result<Vec<Value>, String> {
    let Some(refs) = event.get("input_refs").filter(|refs| !refs.is_null()) else {
        return event.get("input").and_then(Value::as_array).cloned().ok_or_else(|| "field `input`: missing or not a list; skipped".into());
    };
    let mut messages = Vec::new();
    for range in refs.as_array().into_iter().flatten() {
        let bounds = range.as_array().filter(|pair| pair.len() == 2).map(|pair| (pair[0].as_u64(), pair[1].as_u64()));
        let Some((Some(start), Some(end))) = bounds else {
            return Err(format!("field `input_refs`: {range} is not a [start, end] range; skipped"));
        };
        let slice = usize::try_from(start).ok().zip(usize::try_from(end).ok()).and_then(|(s, e)| pool.get(s..e));
        messages.extend(
            slice
                .ok_or_else(|| format!("field `input_refs`: [{start}, {end}] is outside the message pool of {} messages; skipped", pool.len()))?
                .iter()
                .cloned(),
        );
    }
    Ok(messages)
}

/// Inspect's `ModelUsage` in reloop's convention, where the input tokens
/// include the cached ones. Since inspect_ai 0.3.184 (#3341) `input_tokens`
/// exclude `input_tokens_cache_read` and `_write` for every provider;
/// before, the OpenAI-style providers counted them in (OpenAI's
/// `prompt_tokens`). `total_tokens` tells which a log holds: equal to input
/// and output alone, the input held the cache already.
fn usage(usage: &Value) -> RecordedUsage {
    let [input, output, read, write] = ["input_tokens", "output_tokens", "input_tokens_cache_read", "input_tokens_cache_write"].map(|key| u64_at(usage, key));
    let cached_in_input = read + write > 0 && usage.get("total_tokens").and_then(Value::as_u64) == Some(input + output);
    if cached_in_input {
        return RecordedUsage { input_tokens: input, output_tokens: output, cache_read_tokens: read, cache_write_tokens: write, cache_write_1h_tokens: 0 };
    }
    RecordedUsage::from_anthropic(input, output, read, write)
}

/// The session being read, with what it holds so far.
struct Reader {
    session: ImportedSession,
    /// Messages already turned into items (by id, else by their JSON).
    seen: HashSet<String>,
    /// Calls already given a result.
    answered: HashSet<String>,
    /// The tools the model calls were sent, first declaration of each name.
    tools: Vec<ToolSpec>,
}

fn key(message: &Value) -> String {
    str_at(message, "id").map_or_else(|| message.to_string(), str::to_owned)
}

impl Reader {
    /// A model call: the new messages of its input, then its output.
    fn model(&mut self, event: &Value, input: &[Value], unit: usize) {
        self.session.lines.used += 1;
        for tool in event.get("tools").and_then(Value::as_array).into_iter().flatten() {
            let name = str_at(tool, "name").unwrap_or_default();
            if !self.tools.iter().any(|known| known.name == name) {
                let parameters = tool.get("parameters").cloned().unwrap_or(Value::Null);
                self.tools.push(ToolSpec { name: name.to_owned(), description: str_at(tool, "description").unwrap_or_default().to_owned(), parameters });
            }
        }
        for message in input {
            if !self.seen.insert(key(message)) {
                continue;
            }
            let text = content_text(message.get("content").unwrap_or(&Value::Null));
            match str_at(message, "role") {
                Some("system") if self.session.system.is_none() => self.session.system = Some(text),
                Some("system") if self.session.system.as_deref() != Some(text.as_str()) => {
                    self.session.lines.warn(unit, "a later system message differs from the first, which the scenario keeps")
                }
                Some("system") => {}
                Some("user") => self.session.items.push(Item::User { text, line: unit }),
                Some("tool") => self.result(str_at(message, "tool_call_id"), text, message, unit),
                Some("assistant") => self
                    .session
                    .lines
                    .warn(unit, "an assistant message in the input that no model call of the sample returned (a prefill, or another agent's): not replayed"),
                other => self.session.lines.warn(unit, format!("an input message of role {other:?}: not replayed")),
            }
        }
        if let Some(error) = str_at(event, "error") {
            self.session.items.push(Item::ProviderError(ProviderError::from_message(error, None, unit)));
            return;
        }
        let Some(message) = event.pointer("/output/choices/0/message") else {
            self.session.lines.warn(unit, "field `output.choices`: no choice; the call answered nothing");
            self.session.items.push(Item::Assistant(AssistantTurn { line: unit, ..Default::default() }));
            return;
        };
        self.seen.insert(key(message));
        let content = message.get("content").unwrap_or(&Value::Null);
        let mut turn = AssistantTurn { text: content_text(content), line: unit, ..Default::default() };
        turn.reasoning = content
            .as_array()
            .into_iter()
            .flatten()
            .filter(|block| str_at(block, "type") == Some("reasoning"))
            .filter_map(|b| str_at(b, "reasoning"))
            .map(str::to_owned)
            .collect();
        turn.stop_reason = event.pointer("/output/choices/0/stop_reason").and_then(Value::as_str).map(str::to_owned);
        turn.model = str_at(event, "model").map(str::to_owned);
        if let Some(logged) = event.pointer("/output/usage").filter(|usage| usage.is_object()) {
            turn.usage = Some(usage(logged));
            turn.cost_usd = logged.get("total_cost").and_then(Value::as_f64);
        }
        for call in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let id = str_at(call, "id").unwrap_or_default().to_owned();
            if let Some(error) = str_at(call, "parse_error") {
                self.session.lines.warn(unit, format!("call {id}: Inspect could not parse its arguments ({error}); replayed as logged"));
            }
            let arguments = call.get("arguments").cloned().unwrap_or_else(|| Value::Object(Default::default()));
            turn.tool_calls.push(ToolCall { id, name: str_at(call, "function").unwrap_or_default().to_owned(), arguments: Arguments::Json(arguments) });
        }
        self.session.items.push(Item::Assistant(turn));
    }

    /// The result of call `call_id` (from a tool message, or a tool event,
    /// `source`, whose `error.message` says it failed), unless it has one.
    fn result(&mut self, call_id: Option<&str>, text: String, source: &Value, unit: usize) {
        let call_id = call_id.unwrap_or_default().to_owned();
        if !self.answered.insert(call_id.clone()) {
            return;
        }
        let error = source.pointer("/error/message").and_then(Value::as_str);
        let output = if text.is_empty() { error.unwrap_or_default().to_owned() } else { text };
        self.session.items.push(Item::ToolResult(ToolResult { call_id, output, is_error: error.is_some(), line: unit }));
    }

    /// A tool event whose result no model call was sent.
    fn tool_event(&mut self, event: &Value, unit: usize) {
        self.session.lines.used += 1;
        let text = match event.get("result") {
            Some(Value::String(text)) => text.clone(),
            Some(result @ Value::Array(_)) => content_text(result),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        self.result(str_at(event, "id"), text, event, unit);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::{Format, NamedSession, read_sessions};

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions/inspect-ai").join(name)
    }

    fn read(name: &str) -> Vec<NamedSession> {
        read_sessions(&fixture(name), None).unwrap().into_iter().map(Result::unwrap).collect()
    }

    fn one<T: std::fmt::Debug>(items: Vec<T>) -> [T; 1] {
        items.try_into().unwrap()
    }

    fn calls(session: &ImportedSession) -> Vec<&str> {
        let turns = session.items.iter().filter_map(|item| if let Item::Assistant(turn) = item { Some(turn) } else { None });
        turns.flat_map(|turn| &turn.tool_calls).map(|call| call.name.as_str()).collect()
    }

    /// Log format 3: the model events' inputs are ranges into the message
    /// pool, and a tool's description an attachment.
    #[test]
    fn the_message_pool_and_attachments_of_a_real_eval_archive_are_resolved() {
        let [NamedSession { part, session }] = one(read("inspect-ai__log_message_deduplication.eval"));
        assert_eq!(part, None, "the one sample of a log names no part");
        assert_eq!(calls(&session), ["bash"; 5]);
        assert!(
            matches!(&session.items[0], Item::User { text, line: 9 } if text == "Guess the number"),
            "the first model call's input, event 9: {:?}",
            session.items[0]
        );
        let results: Vec<&ToolResult> = session.items.iter().filter_map(|i| if let Item::ToolResult(r) = i { Some(r) } else { None }).collect();
        assert_eq!(results.len(), 5);
        assert!(results.iter().all(|r| r.output.starts_with("bin\nboot\n") && !r.is_error));
        assert!(matches!(session.items.last(), Some(Item::Assistant(t)) if t.text == "done" && t.usage.is_none()));
        let python = session.declared_tools.iter().find(|tool| tool.name == "python").unwrap();
        assert!(python.description.starts_with("Use the python function"), "{}", python.description);
        assert_eq!((session.lines.read, session.lines.used, session.lines.accounted()), (42, 6, 42));
        assert_eq!(session.lines.ignored.get("tool (its result read from the next model call's input)"), Some(&5));
    }

    #[test]
    fn a_real_json_log_gives_each_call_its_usage_with_cache_reads_counted_in() {
        let [NamedSession { session, .. }] = one(read("inspect-ai__browser.json"));
        assert_eq!(calls(&session), ["web_browser_go", "web_browser_click", "web_browser_click", "web_browser_click"]);
        let Some(Item::Assistant(last)) = session.items.last() else { panic!() };
        // inspect_ai 0.3.95 counted OpenAI's cached tokens in: 5,915 = 6,122 total - 207 output.
        assert_eq!(last.usage, Some(RecordedUsage { input_tokens: 5915, output_tokens: 207, cache_read_tokens: 3840, ..RecordedUsage::default() }));
        assert_eq!(session.model.as_deref(), Some("openai/gpt-4o-mini"));
        assert_eq!((session.lines.read, session.lines.accounted(), session.lines.skipped.len()), (43, 43, 0));
    }

    #[test]
    fn cached_tokens_are_counted_in_once_whichever_inspect_wrote_the_log() {
        let before = usage(&json!({"input_tokens": 5915, "output_tokens": 207, "total_tokens": 6122, "input_tokens_cache_read": 3840}));
        let since = usage(&json!({"input_tokens": 2075, "output_tokens": 207, "total_tokens": 6122, "input_tokens_cache_read": 3840}));
        assert_eq!(before, since);
        assert_eq!((since.input_tokens, since.cache_read_tokens), (5915, 3840));
    }

    #[test]
    fn each_sample_is_a_session_named_by_sample_and_epoch_and_a_scorer_call_is_not_the_agents() {
        let samples = read("inspect-ai__security-guide.json");
        let parts: Vec<_> = samples.iter().map(|s| s.part.as_deref().unwrap()).collect();
        assert_eq!(parts, ["1-epoch-1", "2-epoch-1", "3-epoch-1"]);
        for sample in &samples {
            let turns = sample.session.items.iter().filter(|i| matches!(i, Item::Assistant(_))).count();
            assert_eq!(turns, 1);
            assert_eq!(sample.session.lines.ignored.get("model call of a scorer"), Some(&1));
        }
    }

    fn model_event(refs: Value, output: Value) -> Value {
        json!({"event": "model", "model": "openai/gpt-4o", "input": [], "input_refs": refs, "tools": [], "output": output})
    }

    /// The 2026 spelling of the pool (`events_data.messages`), a range
    /// outside it, a failed call, and the result of a call that no later
    /// model call was sent (the sample stopped by a limit) read from its
    /// tool event.
    #[test]
    fn the_events_data_pool_a_bad_range_a_failed_call_and_a_last_tool_event() {
        let call = json!({"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}, "type": "function"});
        let log = json!({"version": 2, "eval": {"model": "openai/gpt-4o"}, "samples": [{
            "id": "s", "epoch": 2,
            "events_data": {"messages": [{"id": "u", "role": "user", "content": "List."}], "calls": []},
            "events": [
                model_event(json!([[0, 1]]), json!({"choices": [{"message": {"id": "a", "role": "assistant", "content": "", "tool_calls": [call]}, "stop_reason": "tool_calls"}]})),
                {"event": "tool", "id": "c1", "function": "bash", "arguments": {"cmd": "ls"}, "result": "", "error": {"type": "timeout", "message": "timed out"}},
                model_event(json!([[0, 9]]), json!({})),
                {"event": "model", "model": "openai/gpt-4o", "input": [], "input_refs": [[0, 1]], "tools": [], "output": {"choices": []}, "error": "429 rate limited"},
            ],
            "limit": {"type": "token", "limit": 1000}
        }]});
        let [sample] = one(parse_document(&log.to_string()).unwrap());
        let session = sample.session;
        assert_eq!(sample.part, "s-epoch-2");
        assert!(matches!(&session.items[2], Item::ToolResult(r) if r.call_id == "c1" && r.output == "timed out" && r.is_error), "{:?}", session.items);
        assert!(matches!(&session.items[3], Item::ProviderError(e) if e.status == Some(429) && e.line == 4));
        assert_eq!(session.lines.skipped[0].line, 3);
        assert!(session.lines.skipped[0].reason.contains("field `input_refs`: [0, 9] is outside the message pool of 1 messages"));
        assert!(session.lines.warnings.iter().any(|w| w.reason.contains("stopped by a limit")));
        assert_eq!(session.lines.accounted(), 4);
    }

    /// inspect_ai 0.3.285 against reloop's mock: the `.eval` it wrote
    /// (zstd-compressed entries) imports as the `.json` that
    /// `inspect log convert` wrote of it does, 5 calls.
    #[test]
    fn a_zstd_archive_imports_as_its_json_conversion_does() {
        let [NamedSession { session: zipped, .. }] = one(read("inspect-ai-0-3-285-bash-against-reloop-mock.eval"));
        let [NamedSession { session, .. }] = one(read("inspect-ai-0-3-285-bash-against-reloop-mock.json"));
        assert_eq!(calls(&session), ["bash"; 5]);
        assert_eq!(calls(&zipped), calls(&session));
        assert_eq!(zipped.items, session.items, "the same session, whichever file it came from");
        assert_eq!((session.lines.read, session.lines.accounted()), (34, 34));
    }

    #[test]
    fn bad_logs_are_named_by_field_and_an_archive_is_not_read_as_another_format() {
        assert!(parse_document("{\"eval\": {}}").unwrap_err().contains("field `samples`"));
        let error = parse_document("{\"eval\": {}, \"samples\": [{\"id\": 1}]}").unwrap_err();
        assert!(error.contains("samples[0]: field `events`"), "{error}");
        let error = read_sessions(&fixture("inspect-ai__log_read_sample.eval"), Some(Format::Pi)).unwrap_err().to_string();
        assert!(
            error.contains("inspect-ai__log_read_sample.eval: a zip archive is read only as an Inspect AI `.eval` log (format inspect), not as pi"),
            "{error}"
        );
    }
}
