//! The neutral session model every source format is read into, and the one
//! writer (`crate::write`) turns into a scenario and a recording.

use reloop_wire::ToolSpec;
use serde::Serialize;

/// One agent session, whatever format it came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportedSession {
    /// The source format (`pi`, `codex`, ...).
    pub format: &'static str,
    /// The agent whose tool preset applies, when the format names one.
    pub agent: Option<&'static str>,
    /// The model named in the session.
    pub model: Option<String>,
    /// The system prompt (or instructions) the session recorded.
    pub system: Option<String>,
    /// The directory the agent worked in.
    pub cwd: Option<String>,
    /// Tools the session itself declared (request bodies, transcripts), if
    /// any: as a request declares them to the model.
    pub declared_tools: Vec<ToolSpec>,
    /// The conversation in order.
    pub items: Vec<Item>,
    /// The context window the session reported, if any.
    pub context_window: Option<u64>,
    /// What happened to every line of the file.
    pub lines: LineAccount,
    /// The agent's tools whose call ends its run (SWE-agent's `submit`,
    /// OpenHands' `finish`): a session ending on one ends `submitted`.
    pub submit_tools: &'static [&'static str],
    /// How the session ended, when the source says so beyond its items
    /// (SWE-agent's `info.exit_status`); otherwise the items tell.
    pub exit: Option<Exit>,
}

/// One element of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A user message (a prompt, not a tool result).
    User {
        /// Its text.
        text: String,
        /// 1-based line in the source.
        line: usize,
    },
    /// One model response.
    Assistant(AssistantTurn),
    /// A tool's answer to a call.
    ToolResult(ToolResult),
    /// The user stopped the agent (pi's aborted turn, Claude Code's
    /// `[Request interrupted by user]`, Codex's `turn_aborted`). `text` is
    /// what the model saw of it when the session went on, if anything.
    Interrupted {
        /// The marker the agent put in the conversation.
        text: Option<String>,
        /// 1-based line.
        line: usize,
    },
    /// A model call that failed (pi's `stopReason: error`, Claude Code's
    /// API error message, Codex's `error` event).
    ProviderError(ProviderError),
    /// The agent compacted its context.
    Compaction(Compaction),
}

#[cfg(test)]
impl Item {
    /// A word for the item's kind, for tests that check a session's shape.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Item::User { .. } => "user",
            Item::Assistant(_) => "assistant",
            Item::ToolResult(result) if result.is_error => "error",
            Item::ToolResult(_) => "result",
            Item::Interrupted { .. } => "interrupted",
            Item::ProviderError(_) => "provider_error",
            Item::Compaction(_) => "compaction",
        }
    }
}

/// A compaction the agent did, with the prompt sizes the source states
/// (Claude Code's `compactMetadata.preTokens`/`postTokens`, pi's
/// `tokensBefore`); the converter fills the others from the billed input
/// of the model calls around it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compaction {
    /// The summary text the agent's model wrote; empty when the source keeps
    /// none readable (Codex's remote compaction keeps it encrypted).
    pub summary: String,
    /// Prompt tokens before it, as the source states.
    pub tokens_before: Option<u64>,
    /// Prompt tokens after it, as the source states.
    pub tokens_after: Option<u64>,
    /// What started it (`auto`, `manual`), as the source names it.
    pub trigger: Option<String>,
    /// 1-based line.
    pub line: usize,
}

impl Compaction {
    /// A compaction the source records only by its summary.
    pub fn summary(summary: String, line: usize) -> Self {
        Self { summary, line, ..Self::default() }
    }
}

/// One model response: what the recording's exchange will hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssistantTurn {
    /// Visible text.
    pub text: String,
    /// Reasoning or thinking text, kept for the report (v1 recordings drop it).
    pub reasoning: Vec<String>,
    /// Tool calls in order.
    pub tool_calls: Vec<ToolCall>,
    /// The usage the provider reported for this call.
    pub usage: Option<RecordedUsage>,
    /// The provider's usage object as the source logged it, every field
    /// included (Claude Code's `cache_creation` split, `service_tier`):
    /// kept in the recording and sent back with `--recorded-usage`.
    pub usage_wire: Option<serde_json::Value>,
    /// The cost the agent recorded, USD.
    pub cost_usd: Option<f64>,
    /// The stop reason as the source named it.
    pub stop_reason: Option<String>,
    /// The model of this call.
    pub model: Option<String>,
    /// 1-based first line in the source.
    pub line: usize,
}

/// A tool call with its arguments exactly as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub arguments: Arguments,
}

/// Arguments of a call: parsed JSON, or the raw text when it is not JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// A JSON value (an object, normally).
    Json(serde_json::Value),
    /// Text that does not parse as JSON; replayed byte for byte.
    Raw(String),
}

impl Arguments {
    /// Arguments from a JSON string as the OpenAI formats carry them.
    pub fn from_text(text: &str) -> Self {
        match serde_json::from_str(text) {
            Ok(value) => Self::Json(value),
            Err(_) => Self::Raw(text.to_owned()),
        }
    }
}

/// An ending the source states outright.
#[derive(Debug, Clone, PartialEq)]
pub enum Exit {
    /// The harness took the agent's submission.
    Submitted,
    /// The last model call failed.
    Failed(ProviderError),
}

/// A failed model call as the agent logged it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderError {
    /// The error text.
    pub message: String,
    /// The HTTP status, when the source gives it.
    pub status: Option<u16>,
    /// The provider said the context is too long.
    pub context_overflow: bool,
    /// 1-based line.
    pub line: usize,
}

impl ProviderError {
    /// An error from its text, with the status and overflow read from it
    /// when the agent did not log them apart (`429 {...}`, `API Error: 529
    /// ...`, "prompt is too long").
    pub fn from_message(message: &str, status: Option<u16>, line: usize) -> Self {
        let status = status.or_else(|| leading_status(message));
        Self { message: message.to_owned(), status, context_overflow: is_context_overflow(message), line }
    }
}

/// The first three-digit number 400-599 at the start of the text or after
/// `API Error:`, as agents prefix their error messages with the status.
fn leading_status(message: &str) -> Option<u16> {
    let rest = message.split_once("API Error:").map_or(message, |(_, rest)| rest).trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|status| (400..600).contains(status))
}

/// What providers and agents say when the prompt is over the window.
fn is_context_overflow(message: &str) -> bool {
    const MARKERS: [&str; 6] =
        ["prompt is too long", "context_length_exceeded", "context window", "maximum context length", "too many tokens", "exceeds the context"];
    let lower = message.to_lowercase();
    MARKERS.iter().any(|marker| lower.contains(marker))
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call it answers.
    pub call_id: String,
    /// The output text.
    pub output: String,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// 1-based line.
    pub line: usize,
}

/// Usage as the provider reported it, normalized to OpenAI's convention:
/// `input_tokens` includes cached tokens read and written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RecordedUsage {
    /// All prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the cache.
    pub cache_write_tokens: u64,
    /// Of those, the ones written with a 1-hour lifetime (Anthropic's
    /// `cache_creation.ephemeral_1h_input_tokens`).
    pub cache_write_1h_tokens: u64,
}

impl RecordedUsage {
    /// From Anthropic's split fields, where `input` excludes the cache.
    pub fn from_anthropic(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Self {
        Self {
            input_tokens: input + cache_read + cache_write,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            cache_write_1h_tokens: 0,
        }
    }

    /// From an Anthropic usage object as the Messages API sends it, the
    /// cache writes split by lifetime when `cache_creation` says.
    pub fn of_anthropic(usage: &serde_json::Value) -> Self {
        let count = |pointer: &str| usage.pointer(pointer).and_then(serde_json::Value::as_u64);
        let split = [count("/cache_creation/ephemeral_5m_input_tokens"), count("/cache_creation/ephemeral_1h_input_tokens")];
        let written = count("/cache_creation_input_tokens").unwrap_or_else(|| split.iter().flatten().sum());
        let read = count("/cache_read_input_tokens").unwrap_or(0);
        let usage = Self::from_anthropic(count("/input_tokens").unwrap_or(0), count("/output_tokens").unwrap_or(0), read, written);
        Self { cache_write_1h_tokens: split[1].unwrap_or(0).min(written), ..usage }
    }

    /// The sum of two usages.
    pub fn plus(self, other: Self) -> Self {
        Self {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
            cache_read_tokens: self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens: self.cache_write_tokens + other.cache_write_tokens,
            cache_write_1h_tokens: self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        }
    }
}

/// Where every line of the source went: the import report's accounting.
/// `read` = `used` + every ignored, skipped and joined count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LineAccount {
    /// Lines (or records) in the file.
    pub read: usize,
    /// Lines that became part of the session.
    pub used: usize,
    /// Lines ignored on purpose, by kind (`progress`, `file-history-snapshot`, ...).
    pub ignored: std::collections::BTreeMap<String, usize>,
    /// Lines that could not be used, each with its reason.
    pub skipped: Vec<LineNote>,
    /// Lines that continued an earlier one (Claude Code's split messages)
    /// or were split (two objects glued on one line), each with its reason.
    pub joined: Vec<LineNote>,
    /// Warnings that dropped nothing (a call with no result, raw arguments).
    pub warnings: Vec<LineNote>,
}

/// A line and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineNote {
    /// 1-based line.
    pub line: usize,
    /// What and why.
    pub reason: String,
}

impl LineAccount {
    /// Counts a line ignored on purpose.
    pub fn ignore(&mut self, kind: &str) {
        *self.ignored.entry(kind.to_owned()).or_default() += 1;
    }

    /// Records a skipped line.
    pub fn skip(&mut self, line: usize, reason: impl Into<String>) {
        self.skipped.push(LineNote { line, reason: reason.into() });
    }

    /// Records a joined or split line.
    pub fn join(&mut self, line: usize, reason: impl Into<String>) {
        self.joined.push(LineNote { line, reason: reason.into() });
    }

    /// Records a warning.
    pub fn warn(&mut self, line: usize, reason: impl Into<String>) {
        self.warnings.push(LineNote { line, reason: reason.into() });
    }

    /// Lines accounted for: used, ignored, skipped or joined.
    pub fn accounted(&self) -> usize {
        self.used + self.ignored.values().sum::<usize>() + self.skipped.len() + self.joined.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_and_overflow_are_read_from_the_message() {
        let error = ProviderError::from_message("API Error: 529 Overloaded", None, 3);
        assert_eq!((error.status, error.context_overflow), (Some(529), false));
        let error = ProviderError::from_message(r#"400 {"type":"error","error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#, None, 3);
        assert_eq!((error.status, error.context_overflow), (Some(400), true));
        assert_eq!(ProviderError::from_message("Connection error.", None, 1).status, None);
        assert_eq!(ProviderError::from_message("Connection error.", Some(503), 1).status, Some(503));
    }
}
