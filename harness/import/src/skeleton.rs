//! The scenario skeleton of a captured session: the tools from the first
//! request's declarations, the task from its first user message, the system
//! prompt from the request, the tools' fixtures from the recorded results.
//! `reloop record`, `serve --capture` and the cassette import write it
//! beside the recording they produce; any API's request body is read, by
//! its codec.

use std::collections::BTreeMap;

use reloop_agent::LoopSettings;
use reloop_files::presets::PresetTool;
use reloop_files::scenario::spec::{ScenarioSpec, ToolFixture, WireChoice};
use reloop_recording::Recording;
use reloop_wire::{Format, Message, Prompt, codec};
use serde_json::Value;

use crate::fixture_answers::{declared, push_recorded, push_unmatched};
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

/// Reads the skeleton of a request body sent to `path` (any API's endpoint,
/// any prefix) through the API's codec; a body that is not the API's
/// request gives an empty skeleton of that API.
pub fn skeleton_of_request(path: &str, body: &Value) -> Skeleton {
    let decoded = serde_json::to_vec(body).ok().and_then(|bytes| codec::decode_request_at(path, &bytes));
    let (format, prompt) = match decoded {
        Some((format, request)) => (format, request.map(|request| request.prompt).unwrap_or_default()),
        None => (Format::OpenaiChat, Prompt::default()),
    };
    let task = prompt.messages.iter().find_map(|message| if let Message::User { text } = message { Some(text.to_string()) } else { None });
    let tools = prompt
        .tools
        .into_iter()
        .map(|spec| PresetTool {
            parameters: if spec.parameters.is_null() { serde_json::json!({ "type": "object", "properties": {} }) } else { spec.parameters },
            name: spec.name,
            description: spec.description,
            ..PresetTool::default()
        })
        .collect();
    Skeleton {
        wire: format.as_str(),
        model: (!prompt.model.is_empty()).then_some(prompt.model),
        system: prompt.system.unwrap_or_default(),
        task: task.unwrap_or_default(),
        tools,
    }
}

/// A scenario for `skeleton` replaying `recording`, written as
/// `recording_file` (relative to the scenario). Each tool answers the
/// recorded calls with the recorded results (by exact arguments, in order;
/// `recorded_calls`), and any other call with an error. A tool the model
/// called without the first request declaring it gets a permissive
/// declaration.
pub fn skeleton_scenario(skeleton: &Skeleton, name: &str, recording_file: &str, recording: &Recording) -> ScenarioSpec {
    let mut tools: BTreeMap<String, ToolFixture> = skeleton.tools.iter().map(|tool| (tool.name.clone(), declared(tool.clone()))).collect();
    for call in recorded_calls(recording) {
        let tool = tools.entry(call.name.clone()).or_insert_with(|| {
            let description = format!("{} (declaration generated from the recorded calls)", call.name);
            declared(PresetTool { name: call.name.clone(), description, parameters: serde_json::json!({ "type": "object" }), ..PresetTool::default() })
        });
        push_recorded(tool, &call.arguments, call.result);
    }
    tools.values_mut().for_each(push_unmatched);
    let wire = Format::ALL.into_iter().find(|format| format.as_str() == skeleton.wire).unwrap_or(Format::OpenaiChat);
    ScenarioSpec {
        name: Some(name.to_owned()),
        description: Some("Skeleton written from a captured session: tools answer with the recorded results; add expectations.".into()),
        wire: WireChoice::One(wire),
        model: skeleton.model.clone().unwrap_or_else(|| "gpt-4o".into()),
        context_window: 200_000,
        system: skeleton.system.clone(),
        task: skeleton.task.clone(),
        recording: recording_file.into(),
        loop_settings: LoopSettings { step_budget: u32::try_from(recording.exchanges.len() + 1).unwrap_or(u32::MAX), ..LoopSettings::default() },
        tools,
        ..ScenarioSpec::default()
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
        let anthropic = json!({"model": "claude", "max_tokens": 1024, "system": [{"type": "text", "text": "S"}], "messages": [{"role": "user", "content": "T"}],
            "tools": [{"name": "read", "description": "r", "input_schema": {"type": "object"}}]});
        for (path, body, wire) in
            [("/v1/chat/completions", chat, "openai-chat"), ("/v1/responses", responses, "openai-responses"), ("/s/x/v1/messages", anthropic, "anthropic")]
        {
            let skeleton = skeleton_of_request(path, &body);
            assert_eq!((skeleton.wire, skeleton.system.as_str(), skeleton.task.as_str()), (wire, "S", "T"), "{path}");
            assert_eq!(skeleton.tools[0].name, "read");
            assert_eq!(skeleton.tools[0].parameters, json!({"type": "object"}));
            let scenario = skeleton_scenario(&skeleton, "n", "n.recording.yaml", &Recording::default());
            assert_eq!(scenario.loop_settings.step_budget, 1);
            assert!(scenario.tools["read"].results[0].error.is_some());
        }
        let plain = skeleton_of_request("/v1/responses", &json!({"model": "gpt-5", "input": "just text"}));
        assert_eq!(plain.task, "just text");
        let gemini = json!({"systemInstruction": {"parts": [{"text": "S"}]}, "contents": [{"role": "user", "parts": [{"text": "T"}]}],
            "tools": [{"functionDeclarations": [{"name": "read", "description": "r", "parameters": {"type": "OBJECT"}}]}]});
        let skeleton = skeleton_of_request("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", &gemini);
        assert_eq!(
            (skeleton.wire, skeleton.model.as_deref(), skeleton.system.as_str(), skeleton.task.as_str()),
            ("gemini", Some("gemini-2.5-flash"), "S", "T")
        );
        assert_eq!(skeleton.tools[0].parameters, json!({"type": "OBJECT"}));
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
        let declared =
            json!({ "model": "m", "messages": [], "tools": [{ "type": "function", "function": { "name": "read", "parameters": { "type": "object" } } }] });
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
