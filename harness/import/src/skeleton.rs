//! The scenario skeleton of a captured session: the tools from the first
//! request's declarations, the task from its first user message, the system
//! prompt from the request. `reloop record`, `serve --capture` and the
//! cassette import write it beside the recording they produce; any of the
//! three APIs' request bodies is read.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::formats::{content_text, str_at};
use crate::output::{LoopOut, ResultOut, ScenarioFile, ToolOut};
use crate::presets::PresetTool;

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

/// A scenario for `skeleton` replaying `recording` (relative to the scenario).
/// Each tool answers every call with an error until fixtures are added.
pub fn skeleton_scenario(skeleton: &Skeleton, name: &str, recording: &str, exchanges: usize) -> ScenarioFile {
    let tools: BTreeMap<String, ToolOut> = skeleton
        .tools
        .iter()
        .map(|tool| {
            let results = vec![ResultOut { when: None, output: None, error: Some("no fixture recorded for this tool yet".into()), once: false }];
            (tool.name.clone(), ToolOut { description: tool.description.clone(), parameters: tool.parameters.clone(), parallel_safe: false, risk: None, results })
        })
        .collect();
    ScenarioFile {
        name: name.to_owned(),
        description: "Skeleton written from a captured session: add tool fixtures and expectations.".into(),
        wire: skeleton.wire,
        model: skeleton.model.clone().unwrap_or_else(|| "gpt-4o".into()),
        context_window: 200_000,
        source: None,
        workspace_root: None,
        system: skeleton.system.clone(),
        task: skeleton.task.clone(),
        recording: recording.to_owned(),
        loop_settings: LoopOut { step_budget: exchanges as u64 + 1 },
        tools,
        follow_ups: Vec::new(),
        steering: Vec::new(),
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
            let scenario = skeleton_scenario(&skeleton, "n", "n.recording.yaml", 2);
            assert_eq!(scenario.loop_settings.step_budget, 3);
            assert!(scenario.tools["read"].results[0].error.is_some());
        }
        let plain = skeleton_of_request("/v1/responses", &json!({"input": "just text"}));
        assert_eq!(plain.task, "just text");
    }
}
