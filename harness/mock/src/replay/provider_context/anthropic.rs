//! Anthropic context editing and compaction, applied to the Messages request
//! before the model sees it.
//!
//! Order, as the API documents it: a `compaction` block sent back makes the
//! API read nothing before it; then each edit of `context_management.edits`
//! runs in turn on what is left, measured in input tokens of the prompt as it
//! stands. Cleared tool results (and inputs) keep their place and ids, their
//! content replaced by [`CLEARED`], so a cleared block is an edit at that
//! block: the cache breaks there and nowhere earlier.

use reloop_wire::anthropic::{AnthropicContent, AnthropicMessage, ContentBlock, MessagesRequest, Role, TextBlock};
use reloop_wire::context_management::{
    ANTHROPIC_COMPACTION_BETA, ANTHROPIC_CONTEXT_EDITING_BETA, AppliedEdit, CLEAR_THINKING, CLEAR_TOOL_USES, COMPACT, COMPACTION_BLOCK, ClearThinking,
    ClearToolUses, Compact, ContextEdit, ContextManagement, DEFAULT_CLEAR_TRIGGER, DEFAULT_COMPACT_TRIGGER, DEFAULT_KEEP_TOOL_USES, MIN_COMPACT_TRIGGER,
    beta_listed, extra_field,
};
use serde_json::{Map, Value, json};

use super::{Compaction, Prepared, Refusal, ServerSide, summary};
use crate::replay::tokens::TokenCounter;

/// What a cleared tool result (or input) reads as. The API documents a
/// placeholder without spelling it; this one is the mock's.
pub const CLEARED: &str = "[cleared]";

/// Applies `request`'s compaction blocks and edits (see the module doc).
///
/// # Errors
///
/// An edit that does not parse, a missing beta header, or a compaction
/// trigger below the API's minimum: the API's 400 message.
pub fn prepare(mut request: MessagesRequest, beta: Option<&str>, counter: &TokenCounter) -> Result<Prepared, Refusal> {
    let management: Option<ContextManagement> = extra_field(&request.extra, "context_management")?;
    request.extra.remove("context_management");
    let mut side = ServerSide::default();
    let mut notes = Vec::new();
    if let Some(cut) = expand_compaction(&mut request) {
        notes.push(format!("compaction block read: {cut} earlier messages dropped"));
    }
    if let Some(management) = management {
        require_betas(&management, beta.unwrap_or_default())?;
        let mut applied = Vec::new();
        for edit in &management.edits {
            let before = tokens(&request, counter);
            let outcome = match edit {
                ContextEdit::ClearToolUses(clear) => clear_tool_uses(&mut request, clear, counter, before),
                ContextEdit::ClearThinking(clear) => clear_thinking(&mut request, clear, counter, before),
                ContextEdit::Compact(compact) => {
                    side.compaction = compact_history(&mut request, compact, before)?;
                    side.compaction.as_ref().map(|_| AppliedEdit {
                        kind: COMPACT.into(),
                        cleared_tool_uses: None,
                        cleared_thinking_turns: None,
                        cleared_input_tokens: before.saturating_sub(tokens(&request, counter)),
                    })
                }
            };
            if let Some(edit) = outcome {
                notes.push(describe(&edit));
                applied.push(edit);
            }
        }
        side.applied_edits = Some(applied);
    }
    side.note = (!notes.is_empty()).then(|| notes.join("; "));
    let breakpoints = Some(request.cache_breakpoints());
    Ok(Prepared { prompt: request.to_prompt(), breakpoints, side, history: None })
}

/// `clear_tool_uses_20250919 cleared 3 tool uses (1204 tokens)`.
fn describe(edit: &AppliedEdit) -> String {
    let what = match (edit.cleared_tool_uses, edit.cleared_thinking_turns) {
        (Some(uses), _) => format!(" cleared {uses} tool uses"),
        (_, Some(turns)) => format!(" cleared the thinking of {turns} turns"),
        _ => " compacted the history".to_owned(),
    };
    format!("{}{what} ({} tokens)", edit.kind, edit.cleared_input_tokens)
}

/// The beta headers the edits need, as the API checks them.
fn require_betas(management: &ContextManagement, beta: &str) -> Result<(), Refusal> {
    for edit in &management.edits {
        let (kind, needed) = match edit {
            ContextEdit::Compact(_) => (COMPACT, ANTHROPIC_COMPACTION_BETA),
            ContextEdit::ClearToolUses(_) => (CLEAR_TOOL_USES, ANTHROPIC_CONTEXT_EDITING_BETA),
            ContextEdit::ClearThinking(_) => (CLEAR_THINKING, ANTHROPIC_CONTEXT_EDITING_BETA),
        };
        if !beta_listed(beta, needed) {
            return Err(format!("context_management.edits: `{kind}` requires the `anthropic-beta: {needed}` header"));
        }
    }
    Ok(())
}

/// Input tokens of the request as it stands.
fn tokens(request: &MessagesRequest, counter: &TokenCounter) -> u64 {
    counter.count_prompt(&request.to_prompt()).total
}

fn blocks_mut(message: &mut AnthropicMessage) -> Option<&mut Vec<ContentBlock>> {
    match &mut message.content {
        AnthropicContent::Blocks(blocks) => Some(blocks),
        AnthropicContent::Text(_) => None,
    }
}

/// Drops everything before the last `compaction` block sent back, which
/// stands for it, and reads the block as the text of its summary. Returns
/// the messages dropped, when there was a block.
fn expand_compaction(request: &mut MessagesRequest) -> Option<usize> {
    let (message, block) = request.messages.iter().enumerate().rev().find_map(|(m, message)| match &message.content {
        AnthropicContent::Blocks(blocks) => blocks.iter().rposition(is_compaction).map(|b| (m, b)),
        AnthropicContent::Text(_) => None,
    })?;
    request.messages.drain(..message);
    let blocks = blocks_mut(&mut request.messages[0])?;
    blocks.drain(..block);
    let text = match &blocks[0] {
        ContentBlock::Other(value) => value.get("content").and_then(Value::as_str).unwrap_or_default().to_owned(),
        _ => String::new(),
    };
    blocks[0] = ContentBlock::Text(TextBlock { text, cache_control: None, extra: Map::new() });
    Some(message)
}

fn is_compaction(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Other(value) if value.get("type").and_then(Value::as_str) == Some(COMPACTION_BLOCK))
}

/// One tool use: where its call and result are, and its tool.
struct ToolUse {
    call: (usize, usize),
    result: Option<(usize, usize)>,
    name: String,
    cleared: bool,
}

fn tool_uses(request: &MessagesRequest) -> Vec<ToolUse> {
    let mut uses: Vec<ToolUse> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for (m, message) in request.messages.iter().enumerate() {
        let AnthropicContent::Blocks(blocks) = &message.content else { continue };
        for (b, block) in blocks.iter().enumerate() {
            match block {
                ContentBlock::ToolUse(call) => {
                    ids.push(call.id.clone());
                    uses.push(ToolUse { call: (m, b), result: None, name: call.name.clone(), cleared: false });
                }
                ContentBlock::ToolResult(result) => {
                    if let Some(index) = ids.iter().position(|id| *id == result.tool_use_id) {
                        uses[index].result = Some((m, b));
                        uses[index].cleared = matches!(&result.content, Some(AnthropicContent::Text(text)) if text == CLEARED);
                    }
                }
                _ => {}
            }
        }
    }
    uses
}

/// `clear_tool_uses_20250919`: once the prompt passes `trigger` (input
/// tokens, or tool uses), the results of all but the last `keep` tool uses
/// are cleared, oldest first, except those of `exclude_tools` and those
/// already cleared; with `clear_tool_inputs`, their inputs too. When that
/// clears fewer than `clear_at_least` tokens, nothing is cleared.
fn clear_tool_uses(request: &mut MessagesRequest, clear: &ClearToolUses, counter: &TokenCounter, before: u64) -> Option<AppliedEdit> {
    let uses = tool_uses(request);
    let fired = match &clear.trigger {
        Some(trigger) if trigger.unit == "tool_uses" => uses.len() as u64 > trigger.value,
        trigger => before > trigger.as_ref().map_or(DEFAULT_CLEAR_TRIGGER, |t| t.value),
    };
    if !fired {
        return None;
    }
    let keep = clear.keep.as_ref().map_or(DEFAULT_KEEP_TOOL_USES, |keep| keep.value) as usize;
    let candidates = uses.len().saturating_sub(keep);
    let mut edited = request.clone();
    let mut cleared = 0;
    for tool_use in uses.iter().take(candidates).filter(|u| !u.cleared && !clear.exclude_tools.contains(&u.name)) {
        let Some((m, b)) = tool_use.result else { continue };
        if let Some(ContentBlock::ToolResult(result)) = blocks_mut(&mut edited.messages[m]).and_then(|blocks| blocks.get_mut(b)) {
            result.content = Some(AnthropicContent::Text(CLEARED.into()));
        }
        if clear.clear_tool_inputs.as_ref().is_some_and(|inputs| inputs.covers(&tool_use.name)) {
            let (m, b) = tool_use.call;
            if let Some(ContentBlock::ToolUse(call)) = blocks_mut(&mut edited.messages[m]).and_then(|blocks| blocks.get_mut(b)) {
                call.input = json!({});
            }
        }
        cleared += 1;
    }
    let cleared_tokens = before.saturating_sub(tokens(&edited, counter));
    let enough = clear.clear_at_least.as_ref().is_none_or(|least| cleared_tokens >= least.value);
    if cleared == 0 || !enough {
        return None;
    }
    *request = edited;
    Some(AppliedEdit { kind: CLEAR_TOOL_USES.into(), cleared_tool_uses: Some(cleared), cleared_thinking_turns: None, cleared_input_tokens: cleared_tokens })
}

/// `clear_thinking_20251015`: the thinking blocks of all assistant turns but
/// the last `keep` that have any are dropped (`keep: "all"` drops none;
/// default one turn).
fn clear_thinking(request: &mut MessagesRequest, clear: &ClearThinking, counter: &TokenCounter, before: u64) -> Option<AppliedEdit> {
    let keep = clear.keep.as_ref().map_or(Some(1), |keep| keep.turns())? as usize;
    let thinking = |block: &ContentBlock| match block {
        ContentBlock::Thinking(_) => true,
        ContentBlock::Other(value) => value.get("type").and_then(Value::as_str) == Some("redacted_thinking"),
        _ => false,
    };
    let turns: Vec<usize> = request
        .messages
        .iter()
        .enumerate()
        .filter(|(_, message)| message.role == Role::Assistant && matches!(&message.content, AnthropicContent::Blocks(blocks) if blocks.iter().any(thinking)))
        .map(|(m, _)| m)
        .collect();
    let cleared = turns.len().saturating_sub(keep);
    if cleared == 0 {
        return None;
    }
    for &m in &turns[..cleared] {
        if let Some(blocks) = blocks_mut(&mut request.messages[m]) {
            blocks.retain(|block| !thinking(block));
        }
    }
    let cleared_tokens = before.saturating_sub(tokens(request, counter));
    Some(AppliedEdit {
        kind: CLEAR_THINKING.into(),
        cleared_tool_uses: None,
        cleared_thinking_turns: Some(cleared as u64),
        cleared_input_tokens: cleared_tokens,
    })
}

/// `compact_20260112`: once the prompt passes `trigger`, everything before
/// the last message is summarized into a `compaction` block, which the
/// model reads in place of it (and the client sends back from then on).
fn compact_history(request: &mut MessagesRequest, compact: &Compact, before: u64) -> Result<Option<Compaction>, Refusal> {
    let trigger = compact.trigger.as_ref().map_or(DEFAULT_COMPACT_TRIGGER, |t| t.value);
    if trigger < MIN_COMPACT_TRIGGER {
        return Err(format!("context_management.edits: `{COMPACT}` trigger must be at least {MIN_COMPACT_TRIGGER} input tokens, got {trigger}"));
    }
    if before <= trigger || request.messages.len() < 2 {
        return Ok(None);
    }
    let last = request.messages.len() - 1;
    let mut earlier = request.clone();
    earlier.messages.truncate(last);
    let summary = summary::of(&earlier.to_prompt().messages, compact.instructions.as_deref());
    let text = ContentBlock::Text(TextBlock { text: summary.clone(), cache_control: None, extra: Map::new() });
    request.messages.splice(..last, [AnthropicMessage { role: Role::Assistant, content: AnthropicContent::Blocks(vec![text]) }]);
    let returned = reloop_wire::context_management::Compaction { id: None, content: summary.clone(), pause: compact.pause_after_compaction };
    Ok(Some(Compaction { summary, returned }))
}

#[cfg(test)]
mod tests;
