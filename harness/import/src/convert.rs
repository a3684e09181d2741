//! The one writer: an [`ImportedSession`] becomes a scenario, a recording
//! and the import report. The rules for what does not map one to one are
//! here and in `docs/import.md`.

use std::collections::BTreeMap;

use reloop_agent::LoopSettings;
use reloop_files::presets::{PresetTool, preset};
use reloop_files::scenario::spec::{Ending, Expectations, RecordedCompaction, ScenarioSpec, Steering, ToolFixture, WireChoice};
use reloop_wire::Format;
use serde_json::Value;

use reloop_recording::{self as v2, Exchange, Part, Purpose, Recording, ToolCallPart};

use crate::fixture_answers::{declared, push_recorded, push_unmatched};
use crate::report::ImportReport;
use crate::session::{Arguments, AssistantTurn, Compaction, ImportedSession, Item, ToolCall};
use crate::workspace::workspace_root;

mod ending;

pub(crate) use ending::RETRYABLE_ATTEMPTS;

/// Text of the exchange added when a session holds no model call at all
/// (in `reloop_files`, since recorded pricing in `eval` recognizes it too).
pub use reloop_files::recording_file::SESSION_END_TEXT;

/// Text of the exchange standing for the model call that failed at the end
/// of a session; its fault answers every attempt, so it is never shown.
pub const FAILED_CALL_TEXT: &str = "[reloop import] The recorded session's last model call failed here.";

/// Prefix of the summary written when the session never compacted: strategies
/// that ask for a summary get it, and no main exchange is consumed.
pub use reloop_files::scenario::spec::MECHANICAL_SUMMARY_PREFIX;

/// Choices the user makes on the command line.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// Scenario name.
    pub name: String,
    /// `format:file`, the `source` column.
    pub source: String,
    /// The recording's path relative to the scenario.
    pub recording_path: String,
    /// Replaces the session's system prompt.
    pub system: Option<String>,
    /// Replaces the tool declarations.
    pub tools: Option<Vec<PresetTool>>,
    /// Replaces the computed workspace root.
    pub workspace_root: Option<String>,
}

/// What an import produces.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The scenario's name, which its files are named after.
    pub name: String,
    /// The scenario.
    pub scenario: ScenarioSpec,
    /// The recording (written as v2).
    pub recording: Recording,
    /// The report.
    pub report: ImportReport,
}

/// Converts a session.
pub fn convert(mut session: ImportedSession, options: ConvertOptions) -> Converted {
    let end = ending::settle(&mut session);
    let turns = join_answerless_turns(&mut session);
    let mut report = ImportReport::new(&session, &options.name, &options.source);
    let mut builder = Builder::default();
    for item in &session.items {
        builder.item(item, &mut report);
    }
    for call in builder.calls.iter().filter(|c| c.result.is_none()) {
        report.calls_without_result += 1;
        session.lines.warn(call.line, format!("call {} ({}) has no result: its fixture answers with an error", call.call.id, call.call.name));
    }
    let ending = end.replay(&mut builder.exchanges, builder.last_was_user, &mut session, &mut report);
    let task = builder.task.take().unwrap_or_else(|| {
        report.synthetic.push("the task: the session has no user message".into());
        "(the recorded session has no user message)".into()
    });
    let recorded_compactions = recorded_compactions(&builder.compactions, &builder.exchanges, &mut report);
    let summaries: Vec<String> = builder.compactions.iter().map(|(_, c)| c.summary.clone()).filter(|s| !s.is_empty()).collect();
    let compactions = compaction_exchanges(&summaries, !builder.compactions.is_empty(), &task, &builder.calls, &mut report);
    let tools = tool_fixtures(&session, &options, &builder.calls, &mut report);
    let workspace_root = options.workspace_root.clone().or_else(|| workspace_root(session.cwd.as_deref(), builder.calls.iter().map(|c| &c.call)));
    let main_exchanges = builder.exchanges.len() as u64;
    let tool_call_names: Vec<String> = builder.calls.iter().map(|c| c.call.name.clone()).collect();
    report.turns = turns;
    report.workspace_root = workspace_root.clone();
    report.lines = session.lines.clone();
    let model = session.model.clone().unwrap_or_else(|| "gpt-4o".into());
    let scenario = ScenarioSpec {
        name: Some(options.name.clone()),
        description: Some(format!(
            "Imported by `reloop import` from {} ({} format): {} model calls, {} tool calls.",
            options.source,
            session.format,
            turns,
            tool_call_names.len()
        )),
        wire: WireChoice::One(wire_of(&session)),
        model: model.clone(),
        context_window: session.context_window.unwrap_or(200_000),
        system: options.system.clone().or(session.system.clone()).unwrap_or_else(|| default_system(&session)),
        task,
        recording: options.recording_path.clone().into(),
        loop_settings: LoopSettings { step_budget: u32::try_from(main_exchanges + 1).unwrap_or(u32::MAX), ..LoopSettings::default() },
        tools,
        steering: builder.steering,
        follow_ups: builder.follow_ups,
        faults: ending.fault.into_iter().collect(),
        ending: Some(Ending { outcome: ending.outcome, steps: u32::try_from(main_exchanges).unwrap_or(u32::MAX) }),
        recorded_compactions,
        expect: Expectations { outcome: Some(ending.outcome), tool_calls: Some(tool_call_names), ..Expectations::default() },
        workspace_root: workspace_root.map(Into::into),
        source: Some(options.source.clone()),
        ..ScenarioSpec::default()
    };
    let mut exchanges = builder.exchanges;
    exchanges.extend(compactions);
    let recording = Recording { model: session.model.clone(), exchanges, ..Default::default() };
    Converted { name: options.name, scenario, recording, report }
}

/// An assistant turn with no tool calls followed directly by another
/// assistant turn (Codex commentary, reasoning-only items) would end the
/// replay early: it is joined into the next turn. Returns the model calls.
fn join_answerless_turns(session: &mut ImportedSession) -> usize {
    let mut items: Vec<Item> = Vec::with_capacity(session.items.len());
    for item in std::mem::take(&mut session.items) {
        match (items.last_mut(), item) {
            (Some(Item::Assistant(previous)), Item::Assistant(next)) if previous.tool_calls.is_empty() => {
                session
                    .lines
                    .warn(next.line, format!("model response without tool calls at line {} is followed by another: joined into one exchange", previous.line));
                let joined = join(std::mem::take(previous), next);
                *previous = joined;
            }
            (_, item) => items.push(item),
        }
    }
    session.items = items;
    session.items.iter().filter(|i| matches!(i, Item::Assistant(_))).count()
}

fn join(first: AssistantTurn, next: AssistantTurn) -> AssistantTurn {
    let text = [first.text, next.text].into_iter().filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n");
    let usage = match (first.usage, next.usage) {
        (Some(a), Some(b)) => Some(a.plus(b)),
        (a, b) => a.or(b),
    };
    // Summed counts are no longer either call's usage object.
    let usage_wire = if first.usage.is_some() && next.usage.is_some() { None } else { first.usage_wire.or(next.usage_wire) };
    AssistantTurn { text, reasoning: [first.reasoning, next.reasoning].concat(), usage, usage_wire, line: first.line, ..next }
}

/// A call and the result the session gave it.
struct CallRecord {
    call: ToolCall,
    result: Option<(String, bool)>,
    line: usize,
}

#[derive(Default)]
struct Builder {
    task: Option<String>,
    follow_ups: Vec<String>,
    steering: Vec<Steering>,
    exchanges: Vec<Exchange>,
    calls: Vec<CallRecord>,
    /// The agent's compactions, each with the model calls made before it.
    compactions: Vec<(usize, Compaction)>,
    /// The previous item was a user message (and no model call came since).
    last_was_user: bool,
    /// Where the latest user message went.
    last_user: LastUser,
}

/// Which list holds the latest user message.
#[derive(Default, Clone, Copy)]
enum LastUser {
    #[default]
    Task,
    FollowUp,
    Steering,
}

impl Builder {
    fn append_to_last_user_message(&mut self, text: &str) {
        let target = match self.last_user {
            LastUser::Task => self.task.as_mut(),
            LastUser::FollowUp => self.follow_ups.last_mut(),
            LastUser::Steering => self.steering.last_mut().map(|s| &mut s.message),
        };
        if let Some(target) = target {
            target.push_str("\n\n");
            target.push_str(text);
        }
    }

    fn item(&mut self, item: &Item, report: &mut ImportReport) {
        match item {
            Item::User { text, line } => {
                report.user_messages += 1;
                if self.last_was_user {
                    // Consecutive user messages reach the model together: one message.
                    report.joined_user_messages.push(*line);
                    self.append_to_last_user_message(text);
                } else if self.task.is_none() {
                    self.task = Some(text.clone());
                    self.last_user = LastUser::Task;
                } else if self.exchanges.last().is_none_or(|e| !has_tool_calls(e)) {
                    self.follow_ups.push(text.clone());
                    self.last_user = LastUser::FollowUp;
                } else {
                    self.last_user = LastUser::Steering;
                    self.steering.push(Steering { after_tool_calls: u32::try_from(self.calls.len()).unwrap_or(u32::MAX), message: text.clone() });
                }
                self.last_was_user = true;
            }
            Item::Assistant(turn) => {
                self.last_was_user = false;
                if let Some(usage) = turn.usage {
                    report.add_usage(usage, turn.cost_usd);
                }
                for call in &turn.tool_calls {
                    *report.tool_calls.entry(call.name.clone()).or_default() += 1;
                    self.calls.push(CallRecord { call: call.clone(), result: None, line: turn.line });
                }
                self.exchanges.push(exchange(turn));
            }
            Item::ToolResult(result) => match self.calls.iter_mut().find(|c| c.call.id == result.call_id && c.result.is_none()) {
                Some(call) => call.result = Some((result.output.clone(), result.is_error)),
                None => {
                    report.results_without_call += 1;
                    report.unmatched_results.push(result.line);
                }
            },
            // `ending::settle` took them out: they end the session or are dropped.
            Item::Interrupted { .. } | Item::ProviderError(_) => {}
            Item::Compaction(compaction) => {
                report.compactions_seen += 1;
                self.compactions.push((self.exchanges.len(), compaction.clone()));
                // A session opening with the agent's compaction goes on from
                // the summary, which the agent sends as a user message: it is
                // the task, and a prompt typed next reaches the model with it.
                if self.task.is_none() && self.exchanges.is_empty() && !compaction.summary.is_empty() {
                    self.task = Some(compaction.summary.clone());
                    self.last_user = LastUser::Task;
                    self.last_was_user = true;
                }
            }
        }
    }
}

/// A recorded model call as a v2 exchange: its text, then its tool calls
/// (what v1's `text` and `tool_calls` loaded as).
fn exchange(turn: &AssistantTurn) -> Exchange {
    let text = Some(turn.text.clone()).filter(|text| !text.is_empty()).map(text_part);
    let calls = turn.tool_calls.iter().map(|call| {
        let arguments = match &call.arguments {
            // A JSON string reads back as text sent byte for byte.
            Arguments::Json(Value::String(text)) | Arguments::Raw(text) => v2::Arguments::Raw(text.clone()),
            Arguments::Json(value) => v2::Arguments::Json(value.clone()),
        };
        Part::ToolCall(ToolCallPart::new(Some(call.id.clone()).filter(|id| !id.is_empty()), call.name.clone(), arguments))
    });
    let usage = turn.usage.map(|usage| v2::RecordedUsage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
        reasoning_tokens: None,
        wire: turn.usage_wire.clone(),
    });
    Exchange { parts: text.into_iter().chain(calls).collect(), usage, ..Default::default() }
}

pub(crate) fn text_part(text: String) -> Part {
    Part::text(text)
}

fn has_tool_calls(exchange: &Exchange) -> bool {
    exchange.parts.iter().any(|part| matches!(part, Part::ToolCall(_)))
}

/// The agent's compactions for the scenario and the report. A size the
/// source does not state is the billed prompt of the model call either
/// side: the last one before (what the agent had grown to), the first one
/// after (what it went on with).
fn recorded_compactions(compactions: &[(usize, Compaction)], exchanges: &[Exchange], report: &mut ImportReport) -> Vec<RecordedCompaction> {
    let billed = |exchange: &Exchange| exchange.usage.as_ref().map(|usage| usage.input_tokens);
    let recorded: Vec<RecordedCompaction> = compactions
        .iter()
        .map(|(calls_before, compaction)| RecordedCompaction {
            after_calls: u32::try_from(*calls_before).unwrap_or(u32::MAX),
            tokens_before: compaction.tokens_before.or_else(|| exchanges[..*calls_before].iter().rev().find_map(billed)),
            tokens_after: compaction.tokens_after.or_else(|| exchanges[*calls_before..].iter().find_map(billed)),
            trigger: compaction.trigger.clone(),
            line: compaction.line as u64,
        })
        .collect();
    report.tokens_saved_recorded = RecordedCompaction::saved_over(&recorded, u32::try_from(exchanges.len()).unwrap_or(u32::MAX));
    report.compactions = recorded.clone();
    recorded
}

/// The session's own summaries, the last reusable; or one mechanical summary
/// when it never compacted or kept no summary readable (`compacted`: it did).
fn compaction_exchanges(summaries: &[String], compacted: bool, task: &str, calls: &[CallRecord], report: &mut ImportReport) -> Vec<Exchange> {
    let compaction = |text: String, reusable: bool| Exchange { purpose: Purpose::Compaction, reusable, parts: vec![text_part(text)], ..Default::default() };
    if summaries.is_empty() {
        let why =
            if compacted { "the session's compactions keep no readable summary (Codex's remote one is encrypted)" } else { "the session never compacted" };
        report.synthetic.push(format!("a mechanical compaction summary: {why}"));
        let mut names: Vec<&str> = calls.iter().map(|c| c.call.name.as_str()).collect();
        names.dedup();
        let task_head: String = task.chars().take(400).collect();
        let text = format!("{MECHANICAL_SUMMARY_PREFIX} The user asked: {task_head}\nTool calls so far ({}): {}.", calls.len(), names.join(", "));
        return vec![compaction(text, true)];
    }
    let last = summaries.len() - 1;
    summaries.iter().enumerate().map(|(index, summary)| compaction(summary.clone(), index == last)).collect()
}

/// The fixture tools: declarations (override, session, preset, or generated
/// from the calls), each answering its recorded calls by exact arguments and
/// in order.
fn tool_fixtures(session: &ImportedSession, options: &ConvertOptions, calls: &[CallRecord], report: &mut ImportReport) -> BTreeMap<String, ToolFixture> {
    let declarations: Vec<PresetTool> = options.tools.clone().unwrap_or_else(|| {
        if !session.declared_tools.is_empty() {
            session.declared_tools.iter().map(PresetTool::from).collect()
        } else {
            session.agent.and_then(preset).map(|p| p.tools).unwrap_or_default()
        }
    });
    let mut tools: BTreeMap<String, ToolFixture> = declarations.into_iter().map(|t| (t.name.clone(), declared(t))).collect();
    for record in calls {
        let tool = tools.entry(record.call.name.clone()).or_insert_with(|| {
            report.generated_tools.push(record.call.name.clone());
            let description = format!("{} (declaration generated from the recorded calls)", record.call.name);
            declared(PresetTool {
                name: record.call.name.clone(),
                description,
                parameters: generated_schema(&record.call.name, calls),
                ..PresetTool::default()
            })
        });
        if let Arguments::Json(arguments) = &record.call.arguments {
            push_recorded(tool, arguments, record.result.clone());
        }
    }
    tools.values_mut().for_each(push_unmatched);
    tools
}

/// An object schema naming every argument key the calls of `name` used.
fn generated_schema(name: &str, calls: &[CallRecord]) -> Value {
    let mut properties = serde_json::Map::new();
    for record in calls.iter().filter(|c| c.call.name == name) {
        if let Arguments::Json(Value::Object(arguments)) = &record.call.arguments {
            for (key, value) in arguments {
                let kind = match value {
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    Value::Bool(_) => "boolean",
                    Value::Array(_) => "array",
                    Value::Object(_) => "object",
                    Value::Null => "null",
                };
                properties.entry(key.clone()).or_insert_with(|| serde_json::json!({ "type": kind }));
            }
        }
    }
    serde_json::json!({ "type": "object", "properties": properties })
}

/// The API the session's agent spoke.
fn wire_of(session: &ImportedSession) -> Format {
    match session.format {
        "codex" => Format::OpenaiResponses,
        "pi" | "claude-code" => Format::Anthropic,
        "gemini-cli" => Format::Gemini,
        _ => Format::OpenaiChat,
    }
}

/// A system prompt for formats that do not record one (pi, Claude Code).
fn default_system(session: &ImportedSession) -> String {
    let cwd = session.cwd.as_deref().unwrap_or("the workspace");
    format!(
        "You are the {} coding agent working in {cwd}. (The recorded session does not hold its system prompt; `reloop import --system FILE` sets the real one.)",
        session.agent.unwrap_or(session.format)
    )
}
