//! The scenario skeleton of a captured session: the tools from the first
//! request's declarations, the task from its first user message, the system
//! prompt from the request, the tools' fixtures from the recorded results.
//! `reloop record`, `serve --capture` and the cassette import write it
//! beside the recording they produce; any of the three APIs' request bodies
//! is read.

use std::collections::BTreeMap;

use reloop_mock::recording::Recording;
use serde_json::Value;

use crate::formats::{content_text, str_at};
use crate::output::{LoopOut, ScenarioFile, ToolOut};
use crate::presets::PresetTool;
use crate::recorded_calls::recorded_calls;

/// What a request tells about its session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Skeleton {
    /// The API the request was written for.
    pub wire: &'static str,
    /// The model asked for.
    pub model: Option<String>,
    /// The system prompt (Chat system/developer messages, Responses
    /// `instructions`, Anthropic `system`).
    pub system: String,
    /// The first user message.
    pub task: String,
    /// The declared tools, in request order.
    pub tools: Vec<PresetTool>,
}

/// Reads the skeleton of a request body sent to `path` (`/v1/chat/completions`,
/// `/v1/responses` or `/v1/messages`, any prefix).
pub fn skeleton_of_request(path: &str, body: &Value) -> Skeleton {
    let wire = if path.ends_with("/messages") {
        "anthropic"
    } else if path.ends_with("/responses") {
        "openai-responses"
    } else {
        "openai-chat"
    };
    let model = str_at(body, "model").map(str::to_owned);
    let (system, task) = match wire {
        "anthropic" => (body.get("system").map(content_text).unwrap_or_default(), first_user(body.get("messages"))),
        "openai-responses" => (str_at(body, "instructions").unwrap_or_default().to_owned(), responses_task(body.get("input"))),
        _ => (system_messages(body.get("messages")), first_user(body.get("messages"))),
    };
    let tools = body.get("tools").and_then(Value::as_array).into_iter().flatten().filter_map(declared_tool).collect();
    Skeleton { wire, model, system, task, tools }
}

/// A scenario for `skeleton` replaying `recording`, written as
/// `recording_file` (relative to the scenario). Each tool answers the
/// recorded calls with the recorded results (by exact arguments, in order;
/// `recorded_calls`), and any other call with an error. A tool the model
/// called without the first request declaring it gets a permissive
/// declaration.
pub fn skeleton_scenario(skeleton: &Skeleton, name: &str, recording_file: &str, recording: &Recording) -> ScenarioFile {
    let mut tools: BTreeMap<String, ToolOut> = skeleton
        .tools
        .iter()
        .map(|tool| {
            let out = ToolOut { description: tool.description.clone(), parameters: tool.parameters.clone(), parallel_safe: false, risk: None, results: Vec::new() };
            (tool.name.clone(), out)
        })
        .collect();
    for call in recorded_calls(recording) {
        let tool = tools.entry(call.name.clone()).or_insert_with(|| ToolOut {
            description: format!("{} (declaration generated from the recorded calls)", call.name),
            parameters: serde_json::json!({ "type": "object" }),
            parallel_safe: false,
            risk: None,
            results: Vec::new(),
        });
        tool.push_recorded(&call.arguments, call.result);
    }
    tools.values_mut().for_each(ToolOut::push_unmatched);
    ScenarioFile {
        name: name.to_owned(),
        description: "Skeleton written from a captured session: tools answer with the recorded results; add expectations.".into(),
        wire: skeleton.wire,
        model: skeleton.model.clone().unwrap_or_else(|| "gpt-4o".into()),
        context_window: 200_000,
        source: None,
        workspace_root: None,
        system: skeleton.system.clone(),
        task: skeleton.task.clone(),
        recording: recording_file.to_owned(),
        loop_settings: LoopOut { step_budget: recording.exchanges.len() as u64 + 1 },
        tools,
        follow_ups: Vec::new(),
        steering: Vec::new(),
        faults: Vec::new(),
        ending: None,
        expect: None,
    }
}

/// A tool declaration in any of the three shapes.
fn declared_tool(tool: &Value) -> Option<PresetTool> {
    let function = tool.get("function").unwrap_or(tool);
    let name = str_at(function, "name")?.to_owned();
    let parameters = function.get("parameters").or(function.get("input_schema")).cloned().unwrap_or_else(|| serde_json::json!({ "type": "object", "properties": {} }));
    Some(PresetTool { name, description: str_at(function, "description").unwrap_or_default().to_owned(), parameters, parallel_safe: false, risk: None })
}

fn system_messages(messages: Option<&Value>) -> String {
    let system = messages.and_then(Value::as_array).into_iter().flatten().filter(|m| matches!(str_at(m, "role"), Some("system" | "developer")));
    system.map(|m| content_text(m.get("content").unwrap_or(&Value::Null))).collect::<Vec<_>>().join("\n\n")
}

fn first_user(messages: Option<&Value>) -> String {
    let mut users = messages.and_then(Value::as_array).into_iter().flatten().filter(|m| str_at(m, "role") == Some("user"));
    users.next().map(|m| content_text(m.get("content").unwrap_or(&Value::Null))).unwrap_or_default()
}

fn responses_task(input: Option<&Value>) -> String {
    match input {
        Some(Value::String(text)) => text.clone(),
        other => first_user(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_api_gives_system_task_and_tools() {
        let chat = json!({"model": "gpt-4o", "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "T"}],
            "tools": [{"type": "function", "function": {"name": "read", "description": "r", "parameters": {"type": "object"}}}]});
        let responses = json!({"model": "gpt-5", "instructions": "S", "input": [{"role": "user", "content": [{"type": "input_text", "text": "T"}]}],
            "tools": [{"type": "function", "name": "read", "description": "r", "parameters": {"type": "object"}}]});
        let anthropic = json!({"model": "claude", "system": [{"type": "text", "text": "S"}], "messages": [{"role": "user", "content": "T"}],
            "tools": [{"name": "read", "description": "r", "input_schema": {"type": "object"}}]});
        for (path, body, wire) in [("/v1/chat/completions", chat, "openai-chat"), ("/v1/responses", responses, "openai-responses"), ("/s/x/v1/messages", anthropic, "anthropic")] {
            let skeleton = skeleton_of_request(path, &body);
            assert_eq!((skeleton.wire, skeleton.system.as_str(), skeleton.task.as_str()), (wire, "S", "T"), "{path}");
            assert_eq!(skeleton.tools[0].name, "read");
            assert_eq!(skeleton.tools[0].parameters, json!({"type": "object"}));
            let scenario = skeleton_scenario(&skeleton, "n", "n.recording.yaml", &Recording::default());
            assert_eq!(scenario.loop_settings.step_budget, 1);
            assert!(scenario.tools["read"].results[0].error.is_some());
        }
        let plain = skeleton_of_request("/v1/responses", &json!({"input": "just text"}));
        assert_eq!(plain.task, "just text");
    }

    #[test]
    fn tools_answer_the_recorded_calls_with_the_recorded_results() {
        let recording: Recording = serde_json::from_value(json!({ "format": "reloop.recording/v2", "exchanges": [
            { "parts": [{ "type": "tool_call", "id": "c1", "name": "read", "arguments": { "path": "a" } },
                        { "type": "tool_call", "id": "c2", "name": "grep", "arguments": { "q": "x" } }] },
            { "parts": [{ "type": "text", "text": "done" }], "request": { "path": "/v1/chat/completions", "body": { "model": "m", "messages": [
                { "role": "tool", "tool_call_id": "c1", "content": "alpha" }, { "role": "tool", "tool_call_id": "c2", "content": "x:1" } ] } } },
        ] }))
        .unwrap();
        let declared = json!({ "tools": [{ "type": "function", "function": { "name": "read", "parameters": { "type": "object" } } }] });
        let scenario = skeleton_scenario(&skeleton_of_request("/v1/chat/completions", &declared), "n", "n.recording.yaml", &recording);
        assert_eq!(scenario.loop_settings.step_budget, 3);
        let read = &scenario.tools["read"].results;
        assert_eq!((read[0].when.as_ref().unwrap()["path"].as_str(), read[0].output.as_deref(), read[0].once), (Some("a"), Some("alpha"), true));
        assert!(read[1].when.is_none() && read[1].error.is_some(), "any other call gets an error");
        let grep = &scenario.tools["grep"];
        assert!(grep.description.contains("generated"), "an undeclared tool gets a declaration");
        assert_eq!(grep.results[0].output.as_deref(), Some("x:1"));
    }
}
