use super::*;
use reloop_wire::Message;
use serde_json::json;

/// A Responses request of `n` function calls with ~`size`-word outputs.
fn request(n: usize, size: usize, management: Option<Value>) -> ResponsesRequest {
    let mut input = vec![json!({"role": "user", "content": "task"})];
    for i in 0..n {
        input.push(json!({"type": "function_call", "call_id": format!("call_{i}"), "name": "shell", "arguments": format!("{{\"cmd\":\"cat f{i}\"}}")}));
        input.push(json!({"type": "function_call_output", "call_id": format!("call_{i}"), "output": format!("out {i} ").repeat(size)}));
    }
    let mut body = json!({"model": "gpt-5.1-codex", "input": input});
    if let Some(management) = management {
        body["context_management"] = management;
    }
    serde_json::from_value(body).unwrap()
}

#[test]
fn context_management_compacts_only_past_its_threshold() {
    let counter = TokenCounter::new();
    let whole = counter.count_prompt(&request(6, 100, None).to_prompt()).total;
    let above = json!([{"type": "compaction", "compact_threshold": whole + 1}]);
    let kept = prepare(request(6, 100, Some(above)), &counter).unwrap();
    assert_eq!((kept.side.compaction.is_none(), counter.count_prompt(&kept.prompt).total), (true, whole));
    let below = json!([{"type": "compaction", "compact_threshold": whole - 1}]);
    let compacted = prepare(request(6, 100, Some(below)), &counter).unwrap();
    let compaction = compacted.side.compaction.unwrap();
    assert!(!compaction.returned.pause && compaction.returned.id.as_deref().unwrap().starts_with("cmp_"));
    assert_eq!(Sealed::open(&compaction.returned.content).unwrap().summary, compaction.summary);
    // The model read the window: the task, then the summary.
    assert!(
        matches!(&compacted.prompt.messages[..], [Message::User { text: task }, Message::User { text: summary }] if task == "task" && summary.starts_with("Summary of 13"))
    );
    assert!(counter.count_prompt(&compacted.prompt).total < whole / 2);
    assert!(compacted.side.note.unwrap().starts_with(&format!("context_management compaction past {} tokens: 12 items compacted", whole - 1)));
    let error = prepare(request(1, 1, Some(json!([{"type": "truncation"}]))), &counter).unwrap_err();
    assert!(error.contains("`truncation` is not supported"), "{error}");
}

#[test]
fn a_compact_window_keeps_the_user_messages_and_expands_back_to_what_it_replaced() {
    let (prompt, output, summary) = compact(request(3, 10, None)).unwrap();
    assert_eq!(prompt.messages.len(), 7, "the whole input was read");
    assert_eq!(output.len(), 2);
    assert!(is_user_message(&output[0]));
    let InputItem::Other(item) = &output[1] else { panic!("{output:?}") };
    let sealed = Sealed::open(compaction_item_content(item).unwrap()).unwrap();
    assert_eq!((sealed.summary, sealed.replaced.len()), (summary, 6));
    assert_eq!(sealed.replaced[0]["call_id"], "call_0");
    // Sent back after more work (stateless chaining: old items kept), the
    // model reads the user messages, the summary, then what came after.
    let mut next = request(3, 10, None);
    next.input.push(InputItem::Other(item.clone()));
    next.input.push(serde_json::from_value(json!({"role": "user", "content": "go on"})).unwrap());
    let read = prepare(next, &TokenCounter::new()).unwrap();
    assert_eq!(read.prompt.messages.len(), 3);
    assert_eq!(read.side.note.as_deref(), Some("compaction item read: 6 earlier items dropped"));
    // Matched against the recording as the whole conversation: the results it replaced are there.
    let results = read.history.unwrap().messages.iter().filter(|m| matches!(m, Message::ToolResult { .. })).count();
    assert_eq!(results, 3);
    let mut foreign = request(1, 1, None);
    foreign.input.push(InputItem::Other(compaction_item("cmp_x", "gAAAA-openai")));
    assert!(prepare(foreign, &TokenCounter::new()).unwrap_err().contains("not made by this server"));
}

#[test]
fn a_compaction_trigger_item_asks_for_the_compaction_alone_of_the_whole_input() {
    let counter = TokenCounter::new();
    let mut asked = request(3, 10, None);
    let whole = counter.count_prompt(&asked.to_prompt()).total;
    asked.input.push(InputItem::Other(json!({"type": "compaction_trigger"})));
    let prepared = prepare(asked, &counter).unwrap();
    let compaction = prepared.side.compaction.unwrap();
    assert!(compaction.returned.pause && compaction.returned.id.as_deref().unwrap().starts_with("cmp_"));
    assert_eq!(counter.count_prompt(&prepared.prompt).total, whole, "the compaction read the whole input");
    assert_eq!(prepared.side.note.as_deref(), Some("compaction_trigger: 7 items compacted"));
}
