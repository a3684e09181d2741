//! Provider-side context management, as the requests ask for it: Anthropic's
//! `context_management.edits` (context editing and the compaction beta) and
//! the Responses API's `context_management` compaction. Both ride in the
//! request bodies' `extra` maps, so a request without them parses as before;
//! these types read them with the providers' documented defaults, which the
//! mock applies and the built-in loop's `strategy: native` writes.
//!
//! The neutral request is [`ContextManagement`], a list of [`ContextEdit`]s
//! ([`crate::Prompt::context_management`]): Anthropic carries every edit,
//! Responses the compaction alone (its `compact_threshold` is the edit's
//! trigger); [`crate::codec::manages`] says which wire carries which.
//!
//! Shapes: Anthropic "Context editing" (beta header
//! [`ANTHROPIC_CONTEXT_EDITING_BETA`]) and "Compaction" (beta header
//! [`ANTHROPIC_COMPACTION_BETA`]); OpenAI "Compaction" (`POST /responses`
//! with `context_management`, and `POST /responses/compact`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `anthropic-beta` value context editing requires.
pub const ANTHROPIC_CONTEXT_EDITING_BETA: &str = "context-management-2025-06-27";
/// The `anthropic-beta` value the compaction edit requires.
pub const ANTHROPIC_COMPACTION_BETA: &str = "compact-2026-01-12";
/// Edit type: clear old tool results (and optionally their inputs).
pub const CLEAR_TOOL_USES: &str = "clear_tool_uses_20250919";
/// Edit type: clear thinking blocks of earlier assistant turns.
pub const CLEAR_THINKING: &str = "clear_thinking_20251015";
/// Edit type: summarize earlier turns into a `compaction` block.
pub const COMPACT: &str = "compact_20260112";
/// `clear_tool_uses` trigger when the request names none (input tokens).
pub const DEFAULT_CLEAR_TRIGGER: u64 = 100_000;
/// `clear_tool_uses` tool uses kept when the request names none.
pub const DEFAULT_KEEP_TOOL_USES: u64 = 3;
/// `compact` trigger when the request names none (input tokens).
pub const DEFAULT_COMPACT_TRIGGER: u64 = 150_000;
/// The lowest `compact` trigger the API accepts.
pub const MIN_COMPACT_TRIGGER: u64 = 50_000;

/// Anthropic's `context_management` request field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ContextManagement {
    /// The edits, applied in order.
    #[serde(default)]
    pub edits: Vec<ContextEdit>,
}

/// One Anthropic context edit, by its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ContextEdit {
    /// `clear_tool_uses_20250919`.
    #[serde(rename = "clear_tool_uses_20250919")]
    ClearToolUses(ClearToolUses),
    /// `clear_thinking_20251015`.
    #[serde(rename = "clear_thinking_20251015")]
    ClearThinking(ClearThinking),
    /// `compact_20260112` (the compaction beta).
    #[serde(rename = "compact_20260112")]
    Compact(Compact),
}

impl ContextEdit {
    /// The edit's `type` ([`CLEAR_TOOL_USES`], [`CLEAR_THINKING`], [`COMPACT`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ClearToolUses(_) => CLEAR_TOOL_USES,
            Self::ClearThinking(_) => CLEAR_THINKING,
            Self::Compact(_) => COMPACT,
        }
    }

    /// The `anthropic-beta` value the edit requires.
    pub fn beta(&self) -> &'static str {
        match self {
            Self::ClearToolUses(_) | Self::ClearThinking(_) => ANTHROPIC_CONTEXT_EDITING_BETA,
            Self::Compact(_) => ANTHROPIC_COMPACTION_BETA,
        }
    }
}

/// The input-token unit of [`Amount`]s.
pub const INPUT_TOKENS: &str = "input_tokens";

/// A count with its unit: `{"type": "input_tokens" | "tool_uses" | "thinking_turns", "value": N}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Amount {
    /// The unit.
    #[serde(rename = "type")]
    pub unit: String,
    /// How many.
    pub value: u64,
}

impl Amount {
    /// `value` of `unit`.
    pub fn new(unit: &str, value: u64) -> Self {
        Self { unit: unit.to_owned(), value }
    }
}

/// The parameters of `clear_tool_uses_20250919`; `None` takes the documented default.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClearToolUses {
    /// When to clear: input tokens (default [`DEFAULT_CLEAR_TRIGGER`]) or tool uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<Amount>,
    /// The most recent tool uses left whole (default [`DEFAULT_KEEP_TOOL_USES`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<Amount>,
    /// Clear at least this many input tokens, or nothing: a cache break must be worth it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear_at_least: Option<Amount>,
    /// Tools whose uses are never cleared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_tools: Vec<String>,
    /// Also clear the calls' inputs: all (`true`) or those of the named tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear_tool_inputs: Option<ClearInputs>,
}

/// `clear_tool_inputs`: a flag, or the tools whose inputs are cleared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClearInputs {
    /// All or none.
    All(bool),
    /// Only these tools'.
    Tools(Vec<String>),
}

impl ClearInputs {
    /// Whether the input of a call to `tool` is cleared with its result.
    pub fn covers(&self, tool: &str) -> bool {
        match self {
            Self::All(all) => *all,
            Self::Tools(tools) => tools.iter().any(|name| name == tool),
        }
    }
}

/// The parameters of `clear_thinking_20251015`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClearThinking {
    /// The assistant turns whose thinking is kept (default one, the last):
    /// `{"type": "thinking_turns", "value": N}` or `"all"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<ThinkingKeep>,
}

/// `keep` of `clear_thinking_20251015`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ThinkingKeep {
    /// `"all"`: nothing is cleared (the cache is kept).
    All(String),
    /// The last N turns' thinking.
    Turns(Amount),
}

impl ThinkingKeep {
    /// The assistant turns kept; `None` for all.
    pub fn turns(&self) -> Option<u64> {
        match self {
            Self::All(_) => None,
            Self::Turns(amount) => Some(amount.value),
        }
    }
}

/// The parameters of `compact_20260112`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Compact {
    /// Input tokens that trigger it (default [`DEFAULT_COMPACT_TRIGGER`], at least [`MIN_COMPACT_TRIGGER`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<Amount>,
    /// Stop after the compaction block (`stop_reason: "compaction"`) instead of answering.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pause_after_compaction: bool,
    /// A summarization prompt replacing the default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// One entry of the Responses API's `context_management` list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesContextManagement {
    /// `"compaction"` (the only type documented).
    #[serde(rename = "type")]
    pub kind: String,
    /// Input tokens past which the server compacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_threshold: Option<u64>,
}

/// One entry of a reply's `context_management.applied_edits`: what an edit
/// cleared. A `clear_tool_uses` edit reports `cleared_tool_uses`, a
/// `clear_thinking` edit `cleared_thinking_turns`; both report the input
/// tokens they took out of the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedEdit {
    /// The edit's type ([`CLEAR_TOOL_USES`], [`CLEAR_THINKING`], [`COMPACT`]).
    #[serde(rename = "type")]
    pub kind: String,
    /// Tool uses whose results (and maybe inputs) were cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared_tool_uses: Option<u64>,
    /// Assistant turns whose thinking was cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared_thinking_turns: Option<u64>,
    /// Input tokens the edit removed from the prompt.
    pub cleared_input_tokens: u64,
}

impl ResponsesContextManagement {
    /// The entry a compaction edit is sent as: its trigger as the threshold.
    pub fn of_compact(compact: &Compact) -> Self {
        Self { kind: COMPACTION_ITEM.to_owned(), compact_threshold: compact.trigger.as_ref().map(|trigger| trigger.value) }
    }

    /// The compaction edit this entry asks for; `None` for a type the API does not document.
    pub fn to_compact(&self) -> Option<Compact> {
        (self.kind == COMPACTION_ITEM).then(|| Compact { trigger: self.compact_threshold.map(|value| Amount::new(INPUT_TOKENS, value)), ..Compact::default() })
    }
}

/// What the provider's context management did before the model read the prompt, as its
/// reply reports it ([`crate::reply::Reply::context`], [`crate::reply::DecodedReply::context`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppliedContext {
    /// Anthropic's `context_management.applied_edits`, in the whole body and the stream's
    /// `message_delta`: `Some` (maybe empty) when the request asked for context management.
    pub applied_edits: Option<Vec<AppliedEdit>>,
    /// The compaction made for this request, returned before the answer.
    pub compaction: Option<Compaction>,
}

impl AppliedContext {
    /// Whether the reply is the compaction alone (see [`Compaction::pause`]).
    pub fn paused(&self) -> bool {
        self.compaction.as_ref().is_some_and(|compaction| compaction.pause)
    }
}

/// A compaction the provider made and returns first: Anthropic's `compaction` block,
/// Responses' `compaction` output item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// The Responses item id (`cmp_…`; generated when `None`); Anthropic's block has none.
    pub id: Option<String>,
    /// What the client keeps and sends back: Anthropic's summary text, Responses' opaque
    /// `encrypted_content`.
    pub content: String,
    /// The reply is the compaction alone: Anthropic's `pause_after_compaction` (with
    /// `stop_reason: "compaction"`), a Responses compaction the client triggered.
    pub pause: bool,
}

/// The Anthropic block type of a compaction, returned and sent back.
pub const COMPACTION_BLOCK: &str = "compaction";

/// The `stop_reason` of a paused Anthropic compaction.
pub const PAUSED_FOR_COMPACTION: &str = "compaction";

/// The Responses item type of a compaction (`/responses/compact` output, and
/// `POST /responses` output when `context_management` compacted).
pub const COMPACTION_ITEM: &str = "compaction";

/// A Responses compaction item: `{"type": "compaction", "id", "encrypted_content"}`.
pub fn compaction_item(id: &str, encrypted_content: &str) -> Value {
    serde_json::json!({"type": COMPACTION_ITEM, "id": id, "encrypted_content": encrypted_content})
}

/// The `encrypted_content` of a Responses compaction item, when `item` is one.
pub fn compaction_item_content(item: &Value) -> Option<&str> {
    (item.get("type").and_then(Value::as_str) == Some(COMPACTION_ITEM)).then(|| item.get("encrypted_content").and_then(Value::as_str)).flatten()
}

/// Reads `field` of a request's `extra` map as `T`; `Ok(None)` when absent or null.
///
/// # Errors
///
/// The field is there but not a `T`; the message names the field.
pub fn extra_field<T: serde::de::DeserializeOwned>(extra: &Map<String, Value>, field: &str) -> Result<Option<T>, String> {
    match extra.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => T::deserialize(value).map(Some).map_err(|e| format!("{field}: {e}")),
    }
}

/// Whether an `anthropic-beta` header value (comma-separated) names `beta`.
pub fn beta_listed(header: &str, beta: &str) -> bool {
    header.split(',').any(|listed| listed.trim() == beta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_documented_parameter_reads() {
        let field = json!({"edits": [
            {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 30000},
             "keep": {"type": "tool_uses", "value": 2}, "clear_at_least": {"type": "input_tokens", "value": 5000},
             "exclude_tools": ["web_search"], "clear_tool_inputs": ["bash"]},
            {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
            {"type": "clear_thinking_20251015", "keep": "all"},
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60000}, "pause_after_compaction": true, "instructions": "Be short."},
        ]});
        let read: ContextManagement = serde_json::from_value(field.clone()).unwrap();
        let ContextEdit::ClearToolUses(clear) = &read.edits[0] else { panic!("{read:?}") };
        assert_eq!(clear.keep, Some(Amount::new("tool_uses", 2)));
        assert_eq!(clear.exclude_tools, ["web_search"]);
        assert!(clear.clear_tool_inputs.as_ref().unwrap().covers("bash") && !clear.clear_tool_inputs.as_ref().unwrap().covers("read"));
        let ContextEdit::ClearThinking(thinking) = &read.edits[1] else { panic!() };
        assert_eq!(thinking.keep.as_ref().unwrap().turns(), Some(2));
        let ContextEdit::ClearThinking(all) = &read.edits[2] else { panic!() };
        assert_eq!(all.keep.as_ref().unwrap().turns(), None);
        let ContextEdit::Compact(compact) = &read.edits[3] else { panic!() };
        assert!(compact.pause_after_compaction);
        // What the loop writes reads back the same.
        assert_eq!(serde_json::to_value(&read).unwrap(), field);
    }

    #[test]
    fn a_bare_edit_takes_the_defaults_and_an_unknown_type_is_an_error_naming_the_field() {
        let mut extra = Map::new();
        extra.insert("context_management".into(), json!({"edits": [{"type": "clear_tool_uses_20250919"}]}));
        let read: ContextManagement = extra_field(&extra, "context_management").unwrap().unwrap();
        assert_eq!(read.edits, [ContextEdit::ClearToolUses(ClearToolUses::default())]);
        extra.insert("context_management".into(), json!({"edits": [{"type": "clear_everything"}]}));
        let error = extra_field::<ContextManagement>(&extra, "context_management").unwrap_err();
        assert!(error.starts_with("context_management: unknown variant `clear_everything`"), "{error}");
        assert_eq!(extra_field::<ContextManagement>(&Map::new(), "context_management"), Ok(None));
    }

    #[test]
    fn responses_compaction_and_beta_lists_read() {
        let read: Vec<ResponsesContextManagement> = serde_json::from_value(json!([{"type": "compaction", "compact_threshold": 200000}])).unwrap();
        assert_eq!(read[0].compact_threshold, Some(200_000));
        assert!(beta_listed("prompt-caching-2024-07-31, context-management-2025-06-27", ANTHROPIC_CONTEXT_EDITING_BETA));
        assert!(!beta_listed("context-management-2025-06-27x", ANTHROPIC_CONTEXT_EDITING_BETA));
    }
}
