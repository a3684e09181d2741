//! Auxiliary requests: what an agent asks besides its main loop (opencode's
//! title request, a summary prompt), mostly sent without tools. The rule
//! the real APIs keep is that a request declaring no tools never gets a
//! tool call; so a tool-less request is auxiliary when the next recorded
//! main turn calls tools, or when it matches a `when` of the recording's
//! `auxiliary:` list (or of its agent preset's). A request that declares
//! tools (Claude Code's compaction request declares all of them) is
//! auxiliary when a `when` occurs in its system prompt or its last message:
//! its history may quote anything. It gets a text (the list's answer, else
//! a short placeholder) and never consumes an exchange: the recorded turn
//! waits for the request it was made for. `crate::replay::recovery` adds the side
//! requests that follow a context-length refusal.

use reloop_wire::{FinishReason, ModelTurn, Prompt};

use crate::replay::divergence::message_text;

use reloop_recording::{AuxiliaryAnswer, Exchange, ReplayMode};

/// The text an auxiliary request gets when the list has no answer for it.
pub const AUXILIARY_TEXT: &str = "reloop replay";

/// The log's `result` of an auxiliary request.
pub const AUXILIARY_RESULT: &str = "auxiliary";

/// Whether `request` is auxiliary given the exchange it would otherwise
/// get and the recording's list: it declares no tools, and that exchange
/// calls some or a `when` of the list matches it. An exchange replayed raw
/// (byte for byte) is sent as recorded, never diverted.
pub fn is_auxiliary(request: &Prompt, next: Option<&Exchange>, answers: &[AuxiliaryAnswer]) -> bool {
    if next.is_some_and(|exchange| exchange.replay == ReplayMode::Raw) {
        return false;
    }
    if !request.tools.is_empty() {
        let asked: Vec<&str> = request.system.as_deref().into_iter().chain(request.messages.last().map(message_text)).collect();
        return answers.iter().filter_map(|a| a.when.as_deref()).any(|when| asked.iter().any(|text| text.contains(when)));
    }
    next.is_some_and(|exchange| exchange.tool_calls().next().is_some()) || matching(request, answers).is_some()
}

/// The text turn an auxiliary request gets: the list's answer whose `when`
/// it matches, else its next answer without `when` (`used` counts those
/// given so far), else [`AUXILIARY_TEXT`].
pub fn auxiliary_turn(request: &Prompt, answers: &[AuxiliaryAnswer], used: &mut usize) -> ModelTurn {
    let text = match matching(request, answers) {
        Some(answer) => answer.text.clone(),
        None => match answers.iter().filter(|a| a.when.is_none()).nth(*used) {
            Some(answer) => {
                *used += 1;
                answer.text.clone()
            }
            None => AUXILIARY_TEXT.to_owned(),
        },
    };
    ModelTurn { text, finish_reason: FinishReason::Stop, ..ModelTurn::default() }
}

/// The first answer whose `when` occurs in the request's text.
fn matching<'a>(request: &Prompt, answers: &'a [AuxiliaryAnswer]) -> Option<&'a AuxiliaryAnswer> {
    let mut patterned = answers.iter().filter(|a| a.when.is_some()).peekable();
    patterned.peek()?;
    let texts: Vec<&str> = request.system.as_deref().into_iter().chain(request.messages.iter().map(message_text)).collect();
    patterned.find(|answer| answer.when.as_deref().is_some_and(|when| texts.iter().any(|text| text.contains(when))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(json: serde_json::Value) -> Exchange {
        serde_json::from_value(json).unwrap()
    }

    fn prompt(tools: serde_json::Value) -> Prompt {
        chat("You are a title generator.", tools)
    }

    fn chat(system: &str, tools: serde_json::Value) -> Prompt {
        let messages = serde_json::json!([{ "role": "system", "content": system }, { "role": "user", "content": "Title this chat" }]);
        let body = serde_json::json!({ "model": "m", "messages": messages, "tools": tools });
        serde_json::from_value::<reloop_wire::openai_chat::ChatRequest>(body).unwrap().to_prompt()
    }

    fn answers(json: serde_json::Value) -> Vec<AuxiliaryAnswer> {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn only_a_tool_less_request_facing_a_tool_call_or_matching_a_when_is_auxiliary() {
        let calls = exchange(serde_json::json!({ "tool_calls": [{ "name": "read", "arguments": {} }] }));
        let text = exchange(serde_json::json!({ "text": "done" }));
        let tool = serde_json::json!([{ "type": "function", "function": { "name": "read", "parameters": { "type": "object" } } }]);
        let title = answers(serde_json::json!([{ "when": "title generator", "text": "Port lookup" }]));
        let other = answers(serde_json::json!([{ "when": "summarize", "text": "Summary" }, { "text": "any" }]));
        assert!(is_auxiliary(&prompt(serde_json::json!([])), Some(&calls), &[]));
        assert!(!is_auxiliary(&prompt(serde_json::json!([])), Some(&text), &[]));
        assert!(is_auxiliary(&prompt(serde_json::json!([])), Some(&text), &title));
        assert!(!is_auxiliary(&prompt(serde_json::json!([])), Some(&text), &other));
        assert!(is_auxiliary(&prompt(tool.clone()), Some(&calls), &title), "a `when` in the system prompt, tools or not");
        assert!(!is_auxiliary(&prompt(tool.clone()), Some(&calls), &other), "with tools, only a `when` makes it auxiliary");
        assert!(!is_auxiliary(&prompt(serde_json::json!([])), None, &[]));
        assert!(is_auxiliary(&prompt(serde_json::json!([])), None, &title));
    }

    #[test]
    fn a_matching_when_answers_every_time_and_the_rest_answer_once_in_order() {
        let list = answers(serde_json::json!([{ "text": "first" }, { "when": "title generator", "text": "Port lookup" }, { "text": "second" }]));
        let request = prompt(serde_json::json!([]));
        let mut used = 0;
        assert_eq!(auxiliary_turn(&request, &list, &mut used).text, "Port lookup");
        assert_eq!(auxiliary_turn(&request, &list, &mut used).text, "Port lookup");
        let plain = chat("Summarize the conversation.", serde_json::json!([]));
        let texts: Vec<String> = (0..3).map(|_| auxiliary_turn(&plain, &list, &mut used).text).collect();
        assert_eq!(texts, ["first", "second", AUXILIARY_TEXT]);
        assert_eq!(auxiliary_turn(&plain, &[], &mut 0).tool_calls, []);
    }
}
