use super::*;
use reloop_wire::Message;

const BETAS: Option<&str> = Some("context-management-2025-06-27,compact-2026-01-12");

/// A conversation of `n` tool uses (tools `read` then `bash`, alternating),
/// each result ~`size` words, then a user message; `edits` as sent.
fn request(n: usize, size: usize, edits: Value) -> MessagesRequest {
    let mut messages = vec![json!({"role": "user", "content": "task"})];
    for i in 0..n {
        let tool = if i % 2 == 0 { "read" } else { "bash" };
        messages.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": format!("thought {i} ").repeat(20), "signature": "sig"},
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": tool, "input": {"path": format!("file{i}.rs")}}]}));
        messages.push(
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": format!("line {i} ").repeat(size)}]}),
        );
    }
    serde_json::from_value(json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": messages, "context_management": {"edits": edits}})).unwrap()
}

fn results(prepared: &Prepared) -> Vec<bool> {
    prepared
        .prompt
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult { content, .. } => Some(content == CLEARED),
            _ => None,
        })
        .collect()
}

fn applied(prepared: &Prepared) -> &[AppliedEdit] {
    prepared.side.applied_edits.as_deref().unwrap()
}

#[test]
fn clear_tool_uses_fires_past_its_trigger_and_keeps_the_last_three_by_default() {
    let counter = TokenCounter::new();
    let below =
        prepare(request(5, 50, json!([{"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100000}}])), BETAS, &counter).unwrap();
    assert_eq!((results(&below), applied(&below).len()), (vec![false; 5], 0));
    let whole = counter.count_prompt(&below.prompt).total;
    let fired =
        prepare(request(5, 50, json!([{"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 200}}])), BETAS, &counter).unwrap();
    assert_eq!(results(&fired), [true, true, false, false, false]);
    let edit = &applied(&fired)[0];
    assert_eq!((edit.kind.as_str(), edit.cleared_tool_uses), (CLEAR_TOOL_USES, Some(2)));
    // What is counted is the edited prompt, and the reply reports the difference.
    assert_eq!(counter.count_prompt(&fired.prompt).total, whole - edit.cleared_input_tokens);
    assert!(edit.cleared_input_tokens > 100, "{edit:?}");
    assert_eq!(fired.side.note.as_deref(), Some(format!("clear_tool_uses_20250919 cleared 2 tool uses ({} tokens)", edit.cleared_input_tokens).as_str()));
}

#[test]
fn keep_and_a_tool_uses_trigger_count_tool_uses() {
    let counter = TokenCounter::new();
    let edit = json!([{"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 3}, "keep": {"type": "tool_uses", "value": 1}}]);
    assert_eq!(results(&prepare(request(3, 50, edit.clone()), BETAS, &counter).unwrap()), [false; 3]);
    assert_eq!(results(&prepare(request(4, 50, edit), BETAS, &counter).unwrap()), [true, true, true, false]);
}

#[test]
fn clear_at_least_clears_nothing_when_it_cannot_clear_that_much() {
    let counter = TokenCounter::new();
    let edit = |least: u64| json!([{"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 10}, "clear_at_least": {"type": "input_tokens", "value": least}}]);
    let short = prepare(request(4, 20, edit(100_000)), BETAS, &counter).unwrap();
    assert_eq!((results(&short), applied(&short).len()), (vec![false; 4], 0));
    assert_eq!(results(&prepare(request(4, 20, edit(10)), BETAS, &counter).unwrap()), [true, false, false, false]);
}

#[test]
fn excluded_tools_keep_their_results_and_clear_tool_inputs_empties_the_named_inputs() {
    let counter = TokenCounter::new();
    let trigger = json!({"type": "input_tokens", "value": 10});
    let keep = json!({"type": "tool_uses", "value": 0});
    let excluded =
        prepare(request(4, 30, json!([{"type": "clear_tool_uses_20250919", "trigger": trigger, "keep": keep, "exclude_tools": ["bash"]}])), BETAS, &counter)
            .unwrap();
    assert_eq!(results(&excluded), [true, false, true, false]);
    let inputs = |prepared: &Prepared| -> Vec<String> {
        prepared
            .prompt
            .messages
            .iter()
            .flat_map(|m| match m {
                Message::Assistant { tool_calls, .. } => tool_calls.clone(),
                _ => Vec::new(),
            })
            .map(|c| c.arguments.to_string())
            .collect()
    };
    let only_read = prepare(
        request(2, 30, json!([{"type": "clear_tool_uses_20250919", "trigger": trigger, "keep": keep, "clear_tool_inputs": ["read"]}])),
        BETAS,
        &counter,
    )
    .unwrap();
    assert_eq!(inputs(&only_read), ["{}", r#"{"path":"file1.rs"}"#]);
    let all =
        prepare(request(2, 30, json!([{"type": "clear_tool_uses_20250919", "trigger": trigger, "keep": keep, "clear_tool_inputs": true}])), BETAS, &counter)
            .unwrap();
    assert_eq!(inputs(&all), ["{}", "{}"]);
    let none =
        prepare(request(2, 30, json!([{"type": "clear_tool_uses_20250919", "trigger": trigger, "keep": keep, "clear_tool_inputs": false}])), BETAS, &counter)
            .unwrap();
    assert_eq!(inputs(&none), [r#"{"path":"file0.rs"}"#, r#"{"path":"file1.rs"}"#]);
}

#[test]
fn clear_thinking_keeps_the_last_turn_by_default_n_turns_or_all() {
    let counter = TokenCounter::new();
    let thinking = |prepared: &Prepared| -> Vec<bool> {
        prepared
            .prompt
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::Assistant { reasoning, .. } => Some(!reasoning.is_empty()),
                _ => None,
            })
            .collect()
    };
    let default = prepare(request(3, 5, json!([{"type": "clear_thinking_20251015"}])), BETAS, &counter).unwrap();
    assert_eq!(thinking(&default), [false, false, true]);
    let edit = &applied(&default)[0];
    assert_eq!((edit.kind.as_str(), edit.cleared_thinking_turns, edit.cleared_tool_uses), (CLEAR_THINKING, Some(2), None));
    let two = prepare(request(3, 5, json!([{"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}}])), BETAS, &counter).unwrap();
    assert_eq!(thinking(&two), [false, true, true]);
    let all = prepare(request(3, 5, json!([{"type": "clear_thinking_20251015", "keep": "all"}])), BETAS, &counter).unwrap();
    assert_eq!((thinking(&all), applied(&all).len()), (vec![true; 3], 0));
}

#[test]
fn each_edit_needs_its_beta_header() {
    let counter = TokenCounter::new();
    let error = prepare(request(1, 5, json!([{"type": "clear_thinking_20251015"}])), Some("prompt-caching-2024-07-31"), &counter).unwrap_err();
    assert_eq!(error, "context_management.edits: `clear_thinking_20251015` requires the `anthropic-beta: context-management-2025-06-27` header");
    let error = prepare(request(1, 5, json!([{"type": "compact_20260112"}])), Some(ANTHROPIC_CONTEXT_EDITING_BETA), &counter).unwrap_err();
    assert!(error.contains("compact-2026-01-12"), "{error}");
    // A request without context_management needs no header and reports nothing.
    let mut plain = request(1, 5, json!([]));
    plain.extra.clear();
    assert_eq!(prepare(plain, None, &counter).unwrap().side, ServerSide::default());
}

#[test]
fn compaction_summarizes_past_its_trigger_and_a_returned_block_stands_for_what_came_before() {
    let counter = TokenCounter::new();
    let low = prepare(request(2, 5, json!([{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 1000}}])), BETAS, &counter).unwrap_err();
    assert!(low.contains("at least 50000"), "{low}");
    let edit = json!([{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}, "pause_after_compaction": true}]);
    let whole = counter.count_prompt(&request(40, 500, json!([])).to_prompt()).total;
    assert!(whole > 50_000, "{whole}");
    let compacted = prepare(request(40, 500, edit), BETAS, &counter).unwrap();
    let compaction = compacted.side.compaction.as_ref().unwrap();
    assert!(compaction.returned.pause && compaction.returned.id.is_none() && compaction.returned.content == compaction.summary);
    assert_eq!(compacted.prompt.messages.len(), 2, "the summary, then the last message");
    assert!(counter.count_prompt(&compacted.prompt).total < whole / 2);
    assert_eq!(applied(&compacted)[0].kind, COMPACT);
    // Sent back, the block stands for everything before it.
    let mut next = request(40, 500, json!([]));
    next.extra.clear();
    let mut messages = serde_json::to_value(&next.messages).unwrap();
    let messages = messages.as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": [{"type": "compaction", "content": compaction.returned.content}, {"type": "text", "text": "Done."}]}));
    messages.push(json!({"role": "user", "content": "next"}));
    next.messages = serde_json::from_value(Value::Array(messages.clone())).unwrap();
    let read = prepare(next, None, &counter).unwrap();
    assert_eq!(read.prompt.messages.len(), 2);
    assert!(matches!(&read.prompt.messages[0], Message::Assistant { text, .. } if text.starts_with("Summary of") && text.ends_with("Done.")));
    assert_eq!(read.side.note.as_deref(), Some("compaction block read: 81 earlier messages dropped"));
}
