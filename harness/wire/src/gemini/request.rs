//! The `generateContent` request: `contents` of `parts`, `systemInstruction`,
//! `tools.functionDeclarations`, `toolConfig` and `generationConfig`, to and
//! from the neutral [`Prompt`].
//!
//! What a [`Prompt`] cannot say is dropped on reading (images, files, code
//! execution, sampling settings). Gemini has no field for reasoning other
//! than its own thought parts: a thought travels as a `thought: true` text
//! part, its `thoughtSignature` on that part; a signature without thought
//! text (what gemini-3 puts on a function call) is kept as an empty
//! [`Reasoning::Thinking`] and goes back on the message's first call.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::prompt::join_system;
use crate::{Message, Prompt, Reasoning, ToolCall, ToolChoice, ToolSpec};

/// A `generateContent` / `streamGenerateContent` / `countTokens` body. The
/// model and whether to stream are in the URL, not here.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentRequest {
    /// The conversation; required, as Google's API requires it (a body
    /// without it, `[]` or `{"model": 1}`, is a 400, not a turn).
    pub contents: Vec<Content>,
    /// The system prompt.
    #[serde(default, alias = "system_instruction", skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<Content>,
    /// How tools may be called.
    #[serde(default, alias = "tool_config", skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<ToolConfig>,
    /// Output limits and thinking.
    #[serde(default, alias = "generation_config", skip_serializing_if = "Option::is_none")]
    pub generation_config: Option<GenerationConfig>,
    /// The declared tools (last, so a client can splice frozen bytes here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
}

/// One turn of the conversation: `user` or `model`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Content {
    /// `user` or `model` (absent on a system instruction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The turn's parts, in order.
    #[serde(default)]
    pub parts: Vec<GeminiPart>,
}

/// One part of a content: text (a thought when `thought`), a function call
/// or a function response. Anything else (`inlineData`, `executableCode`…)
/// is kept in `other` and ignored by [`GenerateContentRequest::to_prompt`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeminiPart {
    /// A call of a declared function.
    #[serde(default, alias = "function_call", skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall>,
    /// The answer to a function call.
    #[serde(default, alias = "function_response", skip_serializing_if = "Option::is_none")]
    pub function_response: Option<FunctionResponse>,
    /// Text, or thought text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The text is the model's thinking.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub thought: bool,
    /// The opaque signature the client sends back with the part.
    #[serde(default, alias = "thought_signature", skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    /// Part kinds a [`Prompt`] cannot carry.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl GeminiPart {
    /// A plain text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: Some(text.into()), ..Self::default() }
    }
}

/// `functionCall`: the call's id (when the API or client set one), name and
/// arguments as an object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The function's name.
    pub name: String,
    /// The arguments.
    #[serde(default = "empty_object")]
    pub args: Value,
}

/// `functionResponse`: the result of a call, by id and name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionResponse {
    /// The id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The function's name.
    pub name: String,
    /// The result: `{"output": …}` or `{"error": …}` as reloop writes it; any
    /// object as other clients do.
    #[serde(default = "empty_object")]
    pub response: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// One `tools` entry; only function declarations are read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The functions the model may call.
    #[serde(default, alias = "function_declarations", skip_serializing_if = "Vec::is_empty")]
    pub function_declarations: Vec<FunctionDeclaration>,
    /// Built-in tools (`googleSearch`, `codeExecution`…), kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A declared function. reloop writes JSON Schema as `parametersJsonSchema`;
/// the OpenAPI-subset `parameters` is read too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionDeclaration {
    /// The function's name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its arguments as JSON Schema.
    #[serde(default, alias = "parameters_json_schema", skip_serializing_if = "Option::is_none")]
    pub parameters_json_schema: Option<Value>,
    /// Its arguments in Gemini's OpenAPI subset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

/// `toolConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfig {
    /// `functionCallingConfig`.
    #[serde(default, alias = "function_calling_config")]
    pub function_calling_config: FunctionCallingConfig,
}

/// `functionCallingConfig`: `AUTO`, `ANY` (must call, optionally one of
/// `allowedFunctionNames`) or `NONE`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionCallingConfig {
    /// The mode.
    #[serde(default)]
    pub mode: String,
    /// The functions an `ANY` call may pick from.
    #[serde(default, alias = "allowed_function_names", skip_serializing_if = "Vec::is_empty")]
    pub allowed_function_names: Vec<String>,
}

/// `generationConfig`: the fields a [`Prompt`] has, every other one kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationConfig {
    /// The output-token limit.
    #[serde(default, alias = "max_output_tokens", skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// `thinkingConfig` (`includeThoughts`, `thinkingBudget`, `thinkingLevel`), as sent.
    #[serde(default, alias = "thinking_config", skip_serializing_if = "Option::is_none")]
    pub thinking_config: Option<Value>,
    /// Sampling and other settings, as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The role of the model's turns.
const MODEL: &str = "model";
/// The role of the user's turns and of function responses.
const USER: &str = "user";

impl GenerateContentRequest {
    /// The request for `prompt`. The model and streaming go in the URL
    /// ([`super::action_path`]).
    pub fn from_prompt(prompt: &Prompt) -> Self {
        let mut contents: Vec<Content> = Vec::new();
        for message in &prompt.messages {
            let (role, parts) = match message {
                Message::User { text } => (USER, vec![GeminiPart::text(text.clone())]),
                Message::Assistant { text, tool_calls, reasoning } => (MODEL, model_parts(text, tool_calls, reasoning)),
                Message::ToolResult { call_id, tool_name, content, is_error } => {
                    let key = if *is_error { "error" } else { "output" };
                    let response = FunctionResponse { id: Some(call_id.to_string()), name: tool_name.to_string(), response: json!({ key: content }) };
                    (USER, vec![GeminiPart { function_response: Some(response), ..GeminiPart::default() }])
                }
            };
            // Results of one turn's calls travel together in one user content.
            let joins = matches!(message, Message::ToolResult { .. })
                && contents.last().is_some_and(|last| last.parts.iter().all(|part| part.function_response.is_some()));
            match contents.last_mut() {
                Some(last) if joins => last.parts.extend(parts),
                _ => contents.push(Content { role: Some(role.to_owned()), parts }),
            }
        }
        let tool_config = match &prompt.tool_choice {
            ToolChoice::Auto => None,
            ToolChoice::None => Some(("NONE", Vec::new())),
            ToolChoice::Required => Some(("ANY", Vec::new())),
            ToolChoice::Named(name) => Some(("ANY", vec![name.clone()])),
        }
        .map(|(mode, allowed_function_names)| ToolConfig { function_calling_config: FunctionCallingConfig { mode: mode.to_owned(), allowed_function_names } });
        Self {
            contents,
            system_instruction: prompt.system.as_ref().map(|system| Content { role: None, parts: vec![GeminiPart::text(system.clone())] }),
            tool_config,
            generation_config: prompt.max_output_tokens.map(|max| GenerationConfig { max_output_tokens: Some(max), ..GenerationConfig::default() }),
            tools: tools(&prompt.tools),
        }
    }

    /// The neutral prompt of this request for `model`, streamed or not (both
    /// from the URL). Gemini always reports usage.
    pub fn to_prompt(&self, model: &str, stream: bool) -> Prompt {
        let mut messages = Vec::with_capacity(self.contents.len());
        let mut calls = CallIds::default();
        for content in &self.contents {
            if content.role.as_deref() == Some(MODEL) {
                messages.push(assistant(&content.parts, &mut calls));
            } else {
                user_messages(&content.parts, &mut calls, &mut messages);
            }
        }
        let texts = self.system_instruction.iter().flat_map(|system| &system.parts).filter_map(|part| part.text.clone()).collect();
        let tool_choice = match self.tool_config.as_ref().map(|config| &config.function_calling_config) {
            Some(config) if config.mode == "NONE" => ToolChoice::None,
            Some(config) if config.mode == "ANY" => match config.allowed_function_names.as_slice() {
                [one] => ToolChoice::Named(one.clone()),
                _ => ToolChoice::Required,
            },
            _ => ToolChoice::Auto,
        };
        Prompt {
            model: model.to_owned(),
            system: join_system(texts),
            messages,
            tools: self
                .tools
                .iter()
                .flat_map(|tool| &tool.function_declarations)
                .map(|declaration| ToolSpec {
                    name: declaration.name.clone(),
                    description: declaration.description.clone(),
                    parameters: declaration.parameters_json_schema.clone().or_else(|| declaration.parameters.clone()).unwrap_or(Value::Null),
                })
                .collect(),
            tool_choice,
            max_output_tokens: self.generation_config.as_ref().and_then(|config| config.max_output_tokens),
            stream,
            include_usage: true,
            context_management: None,
        }
    }
}

/// `specs` as Gemini's `tools` array: one entry of function declarations
/// (none when there are no specs).
pub fn tools(specs: &[ToolSpec]) -> Vec<Tool> {
    if specs.is_empty() {
        return Vec::new();
    }
    let declarations = specs
        .iter()
        .map(|spec| FunctionDeclaration {
            name: spec.name.clone(),
            description: spec.description.clone(),
            parameters_json_schema: (!spec.parameters.is_null()).then(|| spec.parameters.clone()),
            parameters: None,
        })
        .collect();
    vec![Tool { function_declarations: declarations, other: Map::new() }]
}

/// A model turn's parts: thoughts first, then the text, then the calls; a
/// bare signature goes on the first call (else on the text).
fn model_parts(text: &str, tool_calls: &[ToolCall], reasoning: &[Reasoning]) -> Vec<GeminiPart> {
    let mut parts = Vec::new();
    let mut bare_signature = None;
    for item in reasoning {
        let (thinking, signature) = match item {
            Reasoning::Thinking { thinking, signature } => (thinking.clone(), signature.clone()),
            Reasoning::ReasoningContent { text } => (text.clone(), None),
            Reasoning::ResponsesItem { summary, .. } => (summary.join("\n\n"), None),
            Reasoning::RedactedThinking { .. } | Reasoning::ResponsesCompaction { .. } => continue,
        };
        if thinking.is_empty() {
            bare_signature = bare_signature.or(signature);
        } else {
            parts.push(GeminiPart { text: Some(thinking), thought: true, thought_signature: signature, ..GeminiPart::default() });
        }
    }
    if !text.is_empty() {
        parts.push(GeminiPart::text(text));
    }
    parts.extend(tool_calls.iter().map(|call| GeminiPart {
        function_call: Some(FunctionCall { id: Some(call.id.to_string()), name: call.name.to_string(), args: super::args_object(&call.arguments) }),
        ..GeminiPart::default()
    }));
    if let Some(signature) = bare_signature {
        let carrier = parts.iter().position(|part| part.function_call.is_some()).or_else(|| parts.iter().position(|part| !part.thought));
        match carrier {
            Some(at) => parts[at].thought_signature = Some(signature),
            None => parts.push(GeminiPart { text: Some(String::new()), thought_signature: Some(signature), ..GeminiPart::default() }),
        }
    }
    parts
}

/// The ids of a conversation's calls: the recorded one, else one made up
/// from the call's position, so a response without an id finds its call
/// by name.
#[derive(Default)]
struct CallIds {
    made: usize,
    open: Vec<(String, String)>,
}

impl CallIds {
    fn call(&mut self, call: &FunctionCall) -> String {
        let id = call.id.clone().unwrap_or_else(|| {
            self.made += 1;
            format!("call_{}_{}", call.name, self.made)
        });
        self.open.push((call.name.clone(), id.clone()));
        id
    }

    fn answer(&mut self, response: &FunctionResponse) -> String {
        let found = match &response.id {
            Some(id) => self.open.iter().position(|(_, open)| open == id),
            None => self.open.iter().position(|(name, _)| *name == response.name),
        };
        match found {
            Some(at) => self.open.remove(at).1,
            None => response.id.clone().unwrap_or_default(),
        }
    }
}

fn assistant(parts: &[GeminiPart], calls: &mut CallIds) -> Message {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    for part in parts {
        if part.thought {
            reasoning.push(Reasoning::Thinking { thinking: part.text.clone().unwrap_or_default(), signature: part.thought_signature.clone() });
            continue;
        }
        if let Some(signature) = &part.thought_signature {
            reasoning.push(Reasoning::Thinking { thinking: String::new(), signature: Some(signature.clone()) });
        }
        if let Some(call) = &part.function_call {
            tool_calls.push(ToolCall { id: calls.call(call).into(), name: call.name.as_str().into(), arguments: call.args.to_string().into() });
        } else if let Some(piece) = &part.text {
            text.push_str(piece);
        }
    }
    Message::Assistant { text: text.into(), tool_calls, reasoning }
}

/// A user content: its function responses as tool results and its text as
/// a user message, in order.
fn user_messages(parts: &[GeminiPart], calls: &mut CallIds, messages: &mut Vec<Message>) {
    let mut text: Option<String> = None;
    for part in parts {
        if let Some(response) = &part.function_response {
            if let Some(text) = text.take() {
                messages.push(Message::User { text: text.into() });
            }
            let (content, is_error) = result_content(&response.response);
            messages.push(Message::ToolResult {
                call_id: calls.answer(response).into(),
                tool_name: response.name.as_str().into(),
                content: content.into(),
                is_error,
            });
        } else if let Some(piece) = &part.text {
            text.get_or_insert_default().push_str(piece);
        }
    }
    messages.extend(text.map(|text| Message::User { text: text.into() }));
}

/// A function response's content: the `output` or `error` text reloop
/// writes, else the whole object as JSON.
fn result_content(response: &Value) -> (String, bool) {
    let only = |key: &str| match response.as_object() {
        Some(object) if object.len() == 1 => object.get(key).map(|value| value.as_str().map_or_else(|| value.to_string(), str::to_owned)),
        _ => None,
    };
    if let Some(error) = only("error") { (error, true) } else { (only("output").unwrap_or_else(|| response.to_string()), false) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::tests::rich_prompt;

    #[test]
    fn the_rich_prompt_round_trips() {
        let prompt = rich_prompt();
        let request = GenerateContentRequest::from_prompt(&prompt);
        let json = serde_json::to_string(&request).unwrap();
        let back: GenerateContentRequest = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_prompt(&prompt.model, prompt.stream), Prompt { include_usage: true, ..prompt });
    }

    #[test]
    fn a_signature_travels_on_the_first_call_and_comes_back() {
        let call = ToolCall { id: "c1".into(), name: "get".into(), arguments: "{}".into() };
        let reasoning = vec![Reasoning::Thinking { thinking: String::new(), signature: Some("sig".into()) }];
        let prompt = Prompt {
            messages: vec![Message::user("go"), Message::Assistant { text: crate::Text::default(), tool_calls: vec![call], reasoning }],
            ..Prompt::default()
        };
        let request = serde_json::to_value(GenerateContentRequest::from_prompt(&prompt)).unwrap();
        assert_eq!(request["contents"][1]["parts"][0], json!({ "functionCall": { "id": "c1", "name": "get", "args": {} }, "thoughtSignature": "sig" }));
        let back: GenerateContentRequest = serde_json::from_value(request).unwrap();
        assert_eq!(back.to_prompt("", false).messages, prompt.messages);
    }

    #[test]
    fn calls_without_ids_are_answered_by_name() {
        let body = json!({
            "systemInstruction": { "parts": [{ "text": "Be brief." }], "role": "user" },
            "contents": [
                { "role": "user", "parts": [{ "text": "weather?" }] },
                { "role": "model", "parts": [{ "text": "thinking", "thought": true }, { "functionCall": { "name": "weather", "args": { "city": "Paris" } } }] },
                { "role": "user", "parts": [{ "functionResponse": { "name": "weather", "response": { "temp": 20 } } }] }
            ],
            "tools": [{ "functionDeclarations": [{ "name": "weather", "description": "", "parameters": { "type": "OBJECT" } }] }],
            "toolConfig": { "functionCallingConfig": { "mode": "ANY", "allowedFunctionNames": ["weather"] } },
            "generationConfig": { "maxOutputTokens": 100, "temperature": 0.0, "thinkingConfig": { "includeThoughts": true } }
        });
        let prompt = serde_json::from_value::<GenerateContentRequest>(body).unwrap().to_prompt("gemini-2.5-flash", true);
        assert_eq!(prompt.system.as_deref(), Some("Be brief."));
        let Message::Assistant { tool_calls, reasoning, .. } = &prompt.messages[1] else { panic!("{:?}", prompt.messages) };
        assert_eq!(tool_calls[0].arguments, r#"{"city":"Paris"}"#);
        assert_eq!(reasoning.len(), 1);
        assert_eq!(
            prompt.messages[2],
            Message::ToolResult { call_id: tool_calls[0].id.clone(), tool_name: "weather".into(), content: r#"{"temp":20}"#.into(), is_error: false }
        );
        assert_eq!(
            (prompt.tool_choice, prompt.max_output_tokens, prompt.tools[0].parameters.clone()),
            (ToolChoice::Named("weather".into()), Some(100), json!({ "type": "OBJECT" }))
        );
    }
}
