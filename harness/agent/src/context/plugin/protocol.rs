//! The plug-in protocol's lines (`docs/strategies.md`,
//! `docs/schema/strategy.schema.json`): one JSON object per line, each with
//! a `type`. reloop writes [`ToPlugin`] lines on the plug-in's stdin and
//! reads one [`FromPlugin`] line from its stdout in answer to each.
//!
//! The transcript only grows, so each `plan` carries only the messages
//! added since the last one (each message's text crosses the pipe once);
//! the view, which edits rewrite, is sent whole but small: ids, flags and
//! token figures, and the text of notes only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::context::{ContextView, StrategyContext, StrategyTuning, ViewItem};
use crate::message::Message;

/// The protocol version this reloop speaks; a plug-in's hello must name it.
pub const PROTOCOL_VERSION: u32 = 1;

/// A line reloop writes (borrowing what it sends from the loop).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToPlugin<'a> {
    /// The first line: the protocol spoken and the strategy's settings.
    Hello {
        /// [`PROTOCOL_VERSION`].
        protocol: u32,
        /// The scenario's `loop.strategy.settings`, as written (null when absent).
        settings: &'a serde_json::Value,
        /// The scenario's `loop.strategies`: the built-ins' constants, for a
        /// plug-in that re-implements or varies one.
        strategies: &'a StrategyTuning,
    },
    /// Before a model call (or after the provider rejected the context):
    /// the next edit, if any. Within a step it is asked again after each
    /// edit, until it answers none.
    Plan(PlanRequest<'a>),
}

/// What a `plan` line carries.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanRequest<'a> {
    /// The loop's step (0-based).
    pub step: u32,
    /// Whether the provider has just rejected the context as too long
    /// (reloop's Layer 4: one edit, then the call is retried once).
    pub reactive: bool,
    /// The model's context window, in tokens.
    pub window: u64,
    /// The loop's estimate of the whole request as the view stands
    /// (system prompt and tools included), calibrated by the usage seen.
    pub estimated_tokens: u64,
    /// The output slot requested per call.
    pub max_output_tokens: u32,
    /// The transcript messages added since the last `plan` (all of them in
    /// the first), in order; a message's `id` is its index in the transcript.
    pub messages: Vec<MessageLine<'a>>,
    /// The view as it stands, in order: what the provider would be sent.
    pub view: Vec<ViewLine<'a>>,
}

/// The role of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The task, a scripted reply, a harness notice.
    User,
    /// A model turn.
    Assistant,
    /// A tool result.
    Tool,
}

/// A transcript message, whole.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MessageLine<'a> {
    /// Its index in the transcript: what a `mask` or `keep_users` names.
    pub id: usize,
    /// Whose it is.
    pub role: Role,
    /// The text (a tool result's content).
    pub text: &'a str,
    /// A tool result's tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<&'a str>,
    /// Whether a tool result is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// A tool result's line count (as reloop's `masking` counts them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<usize>,
    /// An assistant message's tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallLine<'a>>,
    /// The loop's estimate of the message shown whole, framing included.
    pub tokens: u64,
}

/// A tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ToolCallLine<'a> {
    /// The tool.
    pub name: &'a str,
    /// Its arguments, a JSON text.
    pub arguments: &'a str,
}

/// A view item: a transcript message (`id`, maybe masked) or a note
/// standing for messages no longer shown (`note`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ViewLine<'a> {
    /// The transcript message shown here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<usize>,
    /// Whether that message (a tool result) is shown as a placeholder.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub masked: bool,
    /// A note's text (a collapsed round, the session memory, a summary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'a str>,
    /// The loop's estimate of the item as shown, framing included.
    pub tokens: u64,
}

/// A line a plug-in writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromPlugin {
    /// The answer to reloop's hello.
    Hello {
        /// The protocol it speaks: [`PROTOCOL_VERSION`].
        protocol: u32,
        /// Its name, reported with its compactions (and a sweep's variant name).
        name: String,
    },
    /// The answer to a `plan`.
    Edit {
        /// The edit, or null when the view is ready.
        edit: Option<PluginEdit>,
    },
}

/// An edit, as the built-in strategies make them. View positions are
/// 0-based indices into the `view` just sent; ranges are `[start, end)`
/// and must not separate a tool call from its results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PluginEdit {
    /// Show these tool results (by `id`) as their placeholders.
    Mask {
        /// What to mask.
        results: Vec<MaskLine>,
    },
    /// Replace each view range (a tool round) by a one-line note per call.
    Collapse {
        /// Disjoint ranges, in order.
        rounds: Vec<[usize; 2]>,
    },
    /// Replace a view range by reloop's mechanical session memory.
    Memory {
        /// The range.
        range: [usize; 2],
    },
    /// Replace a view range by a summary the model writes (a model call, as
    /// the built-in strategies' Layer 3), keeping some user messages whole
    /// before it.
    Summarize {
        /// The range.
        range: [usize; 2],
        /// Ids of user messages in the range kept verbatim.
        #[serde(default)]
        keep_users: Vec<usize>,
    },
}

/// One tool result to mask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaskLine {
    /// The tool result's id.
    pub id: usize,
    /// The text shown in its place.
    pub placeholder: String,
}

/// Any line of the protocol, either way: the root of its JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ProtocolLine<'a> {
    /// reloop to the plug-in.
    ToPlugin(ToPlugin<'a>),
    /// The plug-in to reloop.
    FromPlugin(FromPlugin),
}

impl<'a> PlanRequest<'a> {
    /// The `plan` line for `context`, with the transcript messages from
    /// index `sent` on.
    pub fn of(context: &StrategyContext<'a>, sent: usize, reactive: bool) -> Self {
        let view = context.view;
        Self {
            step: context.step,
            reactive,
            window: context.window,
            estimated_tokens: context.estimated_tokens,
            max_output_tokens: context.max_output_tokens,
            messages: context.transcript.iter().enumerate().skip(sent).map(|(id, message)| message_line(view, id, message)).collect(),
            view: view_lines(view),
        }
    }
}

fn message_line<'a>(view: &ContextView, id: usize, message: &'a Message) -> MessageLine<'a> {
    let mut line =
        MessageLine { id, role: Role::User, text: "", tool_name: None, is_error: None, lines: None, tool_calls: Vec::new(), tokens: view.message_tokens(id) };
    match message {
        Message::User { text } => line.text = text,
        Message::Assistant { text, tool_calls, .. } => {
            line.role = Role::Assistant;
            line.text = text;
            line.tool_calls = tool_calls.iter().map(|call| ToolCallLine { name: &call.name, arguments: &call.arguments }).collect();
        }
        Message::ToolResult { tool_name, content, is_error, .. } => {
            line.role = Role::Tool;
            line.text = content;
            line.tool_name = Some(tool_name);
            line.is_error = Some(*is_error);
            line.lines = Some(content.lines().count());
        }
    }
    line
}

fn view_lines(view: &ContextView) -> Vec<ViewLine<'_>> {
    view.items()
        .iter()
        .enumerate()
        .map(|(position, item)| {
            let tokens = view.item_tokens(position);
            match item {
                ViewItem::Message(id) => ViewLine { id: Some(*id), masked: view.is_masked(*id), note: None, tokens },
                ViewItem::Note(text) => ViewLine { id: None, masked: false, note: Some(text), tokens },
            }
        })
        .collect()
}
