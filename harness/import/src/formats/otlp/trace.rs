//! One trace's spans into a session: its chat spans, by start time, are
//! the model calls; the next chat span's input (or an `execute_tool` span)
//! answers their tool calls. Every span is accounted for: used, ignored by
//! kind, or skipped with its reason.

use std::collections::{HashMap, HashSet};

use reloop_wire::ToolSpec;
use serde_json::Value;

use super::messages::{self, Form, Message, Part};
use super::spans::Span;
use crate::formats::str_at;
use crate::session::{AssistantTurn, ImportedSession, Item, ProviderError, RecordedUsage, ToolCall, ToolResult};

/// The operations that are a model call (`gen_ai.operation.name`; Latitude
/// and OpenLLMetry's `llm.request.type` say `completion`).
const CALLS: [&str; 4] = ["chat", "text_completion", "generate_content", "completion"];

/// What a span is to the importer.
#[derive(Debug, PartialEq)]
enum Kind {
    Call,
    Agent,
    Tool,
    /// A GenAI operation that is no model call (`embeddings`, ...).
    Other(String),
    NotGenAi,
}

fn kind(span: &Span) -> Kind {
    let operation = span.text("gen_ai.operation.name").or_else(|| span.text("llm.request.type"));
    let by_name = |prefix: &str| span.name == prefix || span.name.starts_with(&format!("{prefix} "));
    match operation {
        Some(op) if CALLS.contains(&op) => Kind::Call,
        Some("invoke_agent" | "create_agent") => Kind::Agent,
        Some("execute_tool") => Kind::Tool,
        Some(other) => Kind::Other(other.to_owned()),
        None if by_name("chat") => Kind::Call,
        None if by_name("invoke_agent") => Kind::Agent,
        None if by_name("execute_tool") => Kind::Tool,
        None if span.attributes.keys().any(|key| key.starts_with("gen_ai.prompt.") || key.starts_with("gen_ai.completion.")) => Kind::Call,
        None if span.attributes.keys().any(|key| key.starts_with("gen_ai.")) => Kind::Other("without gen_ai.operation.name".into()),
        None => Kind::NotGenAi,
    }
}

/// An `execute_tool` span's answer.
struct ToolSpan<'s> {
    span: &'s Span,
    call_id: Option<&'s str>,
    name: Option<&'s str>,
    used: bool,
}

/// Reads one trace's spans (in file order) into `session`.
pub fn read(spans: &[Span], session: &mut ImportedSession) {
    let mut spans: Vec<&Span> = spans.iter().collect();
    spans.sort_by_key(|span| (span.start, span.unit));
    session.lines.read += spans.len();
    let by_id: HashMap<&str, &Span> = spans.iter().map(|span| (span.span_id.as_str(), *span)).collect();
    let calls: HashSet<&str> = spans.iter().filter(|span| kind(span) == Kind::Call).map(|span| span.span_id.as_str()).collect();
    let tool_spans: HashSet<&str> = spans.iter().filter(|span| kind(span) == Kind::Tool).map(|span| span.span_id.as_str()).collect();
    let mut tools = Vec::new();
    let mut reader = Reader { session, pending: Vec::new(), answered: HashSet::new(), first: true };
    for span in &spans {
        match kind(span) {
            Kind::Call if has_ancestor_in(span, &calls, &by_id) => {
                reader.session.lines.ignore("chat span inside another chat span (one call instrumented twice: the outer one is read)")
            }
            Kind::Call if has_ancestor_in(span, &tool_spans, &by_id) => {
                reader.session.lines.ignore("chat span under an execute_tool span (a sub-agent: the tool's result is what the replay serves)")
            }
            Kind::Call => reader.call(span, &mut tools),
            Kind::Agent => {
                reader.declare_tools(span);
                reader.session.lines.ignore("invoke_agent (the run around its chat spans)");
            }
            Kind::Tool => tools.push(ToolSpan { span, call_id: span.text("gen_ai.tool.call.id"), name: span.text("gen_ai.tool.name"), used: false }),
            Kind::Other(operation) => reader.session.lines.ignore(&format!("gen_ai operation {operation} (not a model call)")),
            Kind::NotGenAi => reader.session.lines.ignore("span without gen_ai attributes"),
        }
    }
    let results = reader.answer_from_tool_spans(&mut tools);
    reader.session.items.extend(results);
    for tool in &tools {
        let call = tool.call_id.or(tool.name).unwrap_or("?");
        if tool.used {
            reader.session.lines.used += 1;
        } else if tool.call_id.is_some_and(|id| reader.answered.contains(id)) {
            reader.session.lines.ignore("execute_tool (its result read from the next chat span's input)");
        } else {
            reader.session.lines.skip(tool.span.unit, format!("execute_tool span of call {call}, which no chat span of the trace made, or without a result"));
        }
    }
}

/// Whether a parent, grand-parent... of `span` is one of `calls`.
fn has_ancestor_in(span: &Span, calls: &HashSet<&str>, by_id: &HashMap<&str, &Span>) -> bool {
    let mut seen = HashSet::new();
    let mut parent = span.parent.as_deref();
    while let Some(id) = parent.filter(|id| seen.insert(*id)) {
        if calls.contains(id) {
            return true;
        }
        parent = by_id.get(id).and_then(|span| span.parent.as_deref());
    }
    false
}

struct Reader<'a> {
    session: &'a mut ImportedSession,
    /// The calls of the last turn not answered yet.
    pending: Vec<ToolCall>,
    /// Calls answered from a chat span's input.
    answered: HashSet<String>,
    /// No chat span read yet.
    first: bool,
}

impl Reader<'_> {
    fn call(&mut self, span: &Span, tools: &mut [ToolSpan<'_>]) {
        let unit = span.unit;
        let exchange = match messages::exchange(span) {
            Ok(exchange) => exchange,
            Err(reason) => return self.session.lines.skip(unit, format!("{reason}: chat span skipped")),
        };
        let outputs: Vec<&Message> = exchange.output.iter().filter(|m| m.role == "assistant" || m.role == "model").collect();
        if outputs.is_empty() {
            if let Some(error) = &span.error {
                self.session.lines.used += 1;
                self.session.items.push(Item::ProviderError(ProviderError::from_message(error, None, unit)));
                return;
            }
            let why = if exchange.form == Form::None {
                "chat span without messages (the instrumentation did not capture content: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, or TRACELOOP_TRACE_CONTENT)"
            } else {
                "chat span without an assistant output message"
            };
            return self.session.lines.skip(unit, format!("{why}: skipped"));
        }
        self.session.lines.used += 1;
        self.declare_tools(span);
        if self.session.system.is_none() {
            let system: Vec<String> = exchange.input.iter().filter(|m| m.role == "system" || m.role == "developer").map(Message::text).collect();
            self.session.system = exchange.system.clone().or_else(|| (!system.is_empty()).then(|| system.join("\n\n")));
        }
        self.new_input(&exchange.input, unit, tools);
        let turn = self.turn(span, &outputs);
        self.pending = turn.tool_calls.clone();
        self.session.model = self.session.model.take().or_else(|| turn.model.clone());
        self.session.items.push(Item::Assistant(turn));
        self.first = false;
    }

    /// The messages of this call's input that are new: all of the first
    /// call's, then those after the input's last assistant message (the
    /// previous call's answer): tool results of its calls, user messages.
    fn new_input(&mut self, input: &[Message], unit: usize, tools: &mut [ToolSpan<'_>]) {
        let start = if self.first { 0 } else { input.iter().rposition(|m| m.role == "assistant" || m.role == "model").map_or(0, |at| at + 1) };
        let mut users = Vec::new();
        let mut results = Vec::new();
        for message in &input[start..] {
            match message.role.as_str() {
                "system" | "developer" => {}
                "assistant" | "model" => {
                    self.session.lines.warn(unit, "an assistant message before the trace's first chat span (history it did not record): left out")
                }
                _ => {
                    for part in &message.parts {
                        match part {
                            Part::ToolResult { id, output } => match self.answer(id.as_deref()) {
                                Some(call) => {
                                    self.answered.insert(call.id.clone());
                                    results.push(Item::ToolResult(ToolResult { call_id: call.id, output: output.clone(), is_error: false, line: unit }));
                                }
                                None => self
                                    .session
                                    .lines
                                    .warn(unit, format!("a tool result for call {} that the last turn did not make: left out", id.as_deref().unwrap_or("?"))),
                            },
                            Part::Other(kind) => self.session.lines.warn(unit, format!("an input part of type {kind}: left out")),
                            _ => {}
                        }
                    }
                    let text = message.text();
                    if message.role == "user" && !text.is_empty() {
                        users.push(Item::User { text, line: unit });
                    }
                }
            }
        }
        results.extend(self.answer_from_tool_spans(tools));
        self.session.items.extend(results);
        self.session.items.extend(users);
    }

    /// The pending call `id` answers (the first pending one when the result names none), taken off the list.
    fn answer(&mut self, id: Option<&str>) -> Option<ToolCall> {
        let at = match id {
            Some(id) => self.pending.iter().position(|call| call.id == id)?,
            None if !self.pending.is_empty() => 0,
            None => return None,
        };
        Some(self.pending.remove(at))
    }

    /// Results for the pending calls from `execute_tool` spans, by call id, or by tool name when the span names no id.
    fn answer_from_tool_spans(&mut self, tools: &mut [ToolSpan<'_>]) -> Vec<Item> {
        let mut results = Vec::new();
        for call in std::mem::take(&mut self.pending) {
            let found = tools.iter_mut().find(|tool| !tool.used && tool.call_id.map_or(tool.name == Some(call.name.as_str()), |id| id == call.id));
            match found.filter(|tool| tool.span.attributes.contains_key("gen_ai.tool.call.result") || tool.span.error.is_some()) {
                Some(tool) => {
                    tool.used = true;
                    let output = tool
                        .span
                        .attributes
                        .get("gen_ai.tool.call.result")
                        .map_or_else(|| tool.span.error.clone().unwrap_or_default(), |v| messages::output_text(Some(v)));
                    results.push(Item::ToolResult(ToolResult { call_id: call.id, output, is_error: tool.span.error.is_some(), line: tool.span.unit }));
                }
                None => self.pending.push(call),
            }
        }
        results
    }

    fn turn(&mut self, span: &Span, outputs: &[&Message]) -> AssistantTurn {
        let mut turn = AssistantTurn { line: span.unit, usage: usage(span), ..AssistantTurn::default() };
        let mut texts = Vec::new();
        for part in outputs.iter().flat_map(|message| &message.parts) {
            match part {
                Part::Text(text) if !text.is_empty() => texts.push(text.clone()),
                Part::Reasoning(text) => turn.reasoning.push(text.clone()),
                Part::ToolCall(call) => {
                    let mut call = call.clone();
                    if call.id.is_empty() {
                        call.id = format!("call_{}_{}", span.unit, turn.tool_calls.len());
                        self.session.lines.warn(span.unit, format!("a tool call ({}) without an id: named {}", call.name, call.id));
                    }
                    turn.tool_calls.push(call);
                }
                Part::Other(kind) => self.session.lines.warn(span.unit, format!("an output part of type {kind}: left out")),
                _ => {}
            }
        }
        turn.text = texts.join("\n\n");
        let reasons =
            span.attributes.get("gen_ai.response.finish_reasons").and_then(Value::as_array).and_then(|list| list.first()?.as_str().map(str::to_owned));
        turn.stop_reason = outputs.iter().find_map(|m| m.finish_reason.clone()).or(reasons);
        turn.model = span.text("gen_ai.response.model").or_else(|| span.text("gen_ai.request.model")).map(str::to_owned);
        turn
    }

    /// `gen_ai.tool.definitions` (a JSON list of `{type, name, description,
    /// parameters}` or of OpenAI's `{type, function: {...}}`), each tool once.
    fn declare_tools(&mut self, span: &Span) {
        let Some(value) = span.attributes.get("gen_ai.tool.definitions") else { return };
        let value = match value {
            Value::String(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            other => other.clone(),
        };
        for tool in value.as_array().into_iter().flatten() {
            let tool = tool.get("function").filter(|f| f.is_object()).unwrap_or(tool);
            let Some(name) = str_at(tool, "name") else { continue };
            if !self.session.declared_tools.iter().any(|declared| declared.name == name) {
                self.session.declared_tools.push(ToolSpec {
                    name: name.to_owned(),
                    description: str_at(tool, "description").unwrap_or_default().to_owned(),
                    parameters: tool.get("parameters").cloned().unwrap_or(Value::Null),
                });
            }
        }
    }
}

/// The call's usage, with `input_tokens` counting the cached tokens as
/// reloop does. The current conventions count them in
/// `gen_ai.usage.input_tokens`; semantic-conventions v1.36 and earlier
/// said nothing, and Anthropic instrumentations of that time report
/// Anthropic's own count, which leaves them out: a span that names its
/// provider only by the older `gen_ai.system` as `anthropic`, or whose
/// cached count exceeds its input count, has them added. OpenLLMetry's
/// `gen_ai.usage.prompt_tokens` and `completion_tokens` stand in for the
/// newer names, and its `cache_read_input_tokens` and
/// `cache_creation_input_tokens` for the cache's.
fn usage(span: &Span) -> Option<RecordedUsage> {
    let input = span.count("gen_ai.usage.input_tokens").or_else(|| span.count("gen_ai.usage.prompt_tokens"));
    let output = span.count("gen_ai.usage.output_tokens").or_else(|| span.count("gen_ai.usage.completion_tokens"));
    if input.is_none() && output.is_none() {
        return None;
    }
    let (input, output) = (input.unwrap_or(0), output.unwrap_or(0));
    let read = span.count("gen_ai.usage.cache_read.input_tokens").or_else(|| span.count("gen_ai.usage.cache_read_input_tokens")).unwrap_or(0);
    let write = span.count("gen_ai.usage.cache_creation.input_tokens").or_else(|| span.count("gen_ai.usage.cache_creation_input_tokens")).unwrap_or(0);
    let older_anthropic = span.text("gen_ai.provider.name").is_none()
        && span.text("gen_ai.system") == Some("anthropic")
        && span.attributes.contains_key("gen_ai.usage.input_tokens");
    Some(if older_anthropic || input < read + write {
        RecordedUsage::from_anthropic(input, output, read, write)
    } else {
        RecordedUsage { input_tokens: input, output_tokens: output, cache_read_tokens: read, cache_write_tokens: write, cache_write_1h_tokens: 0 }
    })
}
