//! `reloop serve` to the `async-openai` crate, a real OpenAI client: its
//! typed (serde) decoding of Chat Completions, streamed and whole, must give
//! exactly the recorded turns of `tests/data/async-openai/`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessageArgs, ChatCompletionRequestToolMessageArgs, ChatCompletionRequestUserMessageArgs,
    ChatCompletionStreamOptions, ChatCompletionTool, ChatCompletionTools, CompletionUsage, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
    FinishReason, FunctionObjectArgs,
};
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::util::Serve;

const MODEL: &str = "gpt-4o-2024-08-06";
/// What `tests/data/async-openai/*.yaml` hold.
const TEXT: &str = "The capital of France is Paris. It has been the seat of government since 987, with brief interruptions.";
const PREAMBLE: &str = "Let me check the forecast.";

fn recorded_arguments() -> Value {
    json!({
        "location": { "city": "Zürich", "country": "CH" },
        "days": 3,
        "units": "celsius",
        "include": ["temperature", "precipitation"],
        "hourly": false,
    })
}

fn serve() -> Serve {
    Serve::start(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/async-openai"))
}

fn client(server: &Serve, session: &str) -> Client<OpenAIConfig> {
    // async-openai builds its own reqwest client, which needs the process's
    // TLS provider like every reqwest client here.
    reloop_agent::client::ensure_crypto_provider();
    Client::with_config(OpenAIConfig::new().with_api_base(server.openai_base(session)).with_api_key("sk-async-openai"))
}

fn request(prompt: &str, tools: bool, stream: bool) -> CreateChatCompletionRequest {
    let mut args = CreateChatCompletionRequestArgs::default();
    args.model(MODEL).messages([ChatCompletionRequestUserMessageArgs::default().content(prompt).build().unwrap().into()]);
    if tools {
        let function = FunctionObjectArgs::default()
            .name("get_weather")
            .description("Weather forecast for a city.")
            .parameters(json!({
                "type": "object",
                "properties": {
                    "location": { "type": "object", "properties": { "city": { "type": "string" }, "country": { "type": "string" } } },
                    "days": { "type": "integer" },
                    "units": { "type": "string", "enum": ["celsius", "fahrenheit"] },
                    "include": { "type": "array", "items": { "type": "string" } },
                    "hourly": { "type": "boolean" },
                },
                "required": ["location"],
            }))
            .build()
            .unwrap();
        args.tools(vec![ChatCompletionTools::Function(ChatCompletionTool { function })]);
    }
    if stream {
        args.stream_options(ChatCompletionStreamOptions { include_usage: Some(true), include_obfuscation: None });
    }
    args.build().unwrap()
}

/// A streamed turn as a client accumulates it.
#[derive(Debug, Default)]
struct Streamed {
    chunks: usize,
    text: String,
    /// By the chunk's `index`: id, name, arguments joined.
    calls: BTreeMap<u32, (String, String, String)>,
    finish_reason: Option<FinishReason>,
    usage: Option<CompletionUsage>,
    models: Vec<String>,
}

async fn stream(client: &Client<OpenAIConfig>, request: CreateChatCompletionRequest) -> Streamed {
    let mut stream = client.chat().create_stream(request).await.expect("the stream starts");
    let mut turn = Streamed::default();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.expect("every chunk decodes");
        turn.chunks += 1;
        turn.models.push(chunk.model);
        if let Some(usage) = chunk.usage {
            assert!(turn.usage.replace(usage).is_none(), "usage comes once");
        }
        for choice in chunk.choices {
            assert_eq!(choice.index, 0);
            turn.text.push_str(choice.delta.content.as_deref().unwrap_or_default());
            for call in choice.delta.tool_calls.unwrap_or_default() {
                let entry = turn.calls.entry(call.index).or_default();
                entry.0.push_str(call.id.as_deref().unwrap_or_default());
                if let Some(function) = call.function {
                    entry.1.push_str(function.name.as_deref().unwrap_or_default());
                    entry.2.push_str(function.arguments.as_deref().unwrap_or_default());
                }
            }
            if let Some(reason) = choice.finish_reason {
                assert!(turn.finish_reason.replace(reason).is_none(), "one finish reason");
            }
        }
    }
    turn
}

fn assert_usage(usage: Option<&CompletionUsage>) {
    let usage = usage.expect("usage is reported");
    assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0, "{usage:?}");
    assert_eq!(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens, "{usage:?}");
}

#[tokio::test]
async fn async_openai_streams_a_recorded_text_turn() {
    let server = serve();
    let turn = stream(&client(&server, "text.stream"), request("What is the capital of France?", false, true)).await;
    assert!(turn.chunks > 3, "streamed in pieces: {turn:?}");
    assert_eq!(turn.text, TEXT);
    assert!(turn.calls.is_empty(), "{turn:?}");
    assert_eq!(turn.finish_reason, Some(FinishReason::Stop));
    assert!(turn.models.iter().all(|model| model == MODEL), "{:?}", turn.models);
    assert_usage(turn.usage.as_ref());
}

#[tokio::test]
async fn async_openai_streams_a_recorded_tool_call() {
    let server = serve();
    let turn = stream(&client(&server, "tool.stream"), request("Will it rain in Zürich in the next three days?", true, true)).await;
    assert_eq!(turn.text, PREAMBLE);
    assert_eq!(turn.calls.len(), 1, "{turn:?}");
    let (id, name, arguments) = &turn.calls[&0];
    assert_eq!((id.as_str(), name.as_str()), ("call_weather_1", "get_weather"));
    assert_eq!(serde_json::from_str::<Value>(arguments).expect("the joined arguments are JSON"), recorded_arguments());
    assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
    assert_usage(turn.usage.as_ref());
}

#[tokio::test]
async fn async_openai_decodes_a_whole_recorded_tool_call() {
    let server = serve();
    let client = client(&server, "tool.whole");
    let completion = client.chat().create(request("Will it rain in Zürich in the next three days?", true, false)).await.expect("decodes");
    assert_eq!(completion.model, MODEL);
    assert_eq!(completion.object, "chat.completion");
    let [choice] = completion.choices.as_slice() else { panic!("one choice: {completion:?}") };
    assert_eq!(choice.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(choice.message.content.as_deref(), Some(PREAMBLE));
    let Some([ChatCompletionMessageToolCalls::Function(call)]) = choice.message.tool_calls.as_deref() else {
        panic!("one function call: {:?}", choice.message.tool_calls)
    };
    assert_eq!((call.id.as_str(), call.function.name.as_str()), ("call_weather_1", "get_weather"));
    assert_eq!(serde_json::from_str::<Value>(&call.function.arguments).unwrap(), recorded_arguments());
    assert_usage(completion.usage.as_ref());

    // The loop's next request answers the call; the recording has no
    // exchange left, a divergence that async-openai surfaces as the API error
    // the server sent. (An identical repeat would be a retry, answered again.)
    let mut next = request("Will it rain in Zürich in the next three days?", true, false);
    next.messages.push(
        ChatCompletionRequestAssistantMessageArgs::default()
            .content(PREAMBLE)
            .tool_calls(vec![ChatCompletionMessageToolCalls::Function(call.clone())])
            .build()
            .unwrap()
            .into(),
    );
    next.messages.push(
        ChatCompletionRequestToolMessageArgs::default()
            .tool_call_id(&call.id)
            .content(r#"{"daily":[{"rain_mm":0.0},{"rain_mm":4.2},{"rain_mm":11.5}]}"#)
            .build()
            .unwrap()
            .into(),
    );
    let error = client.chat().create(next).await.unwrap_err();
    let async_openai::error::OpenAIError::ApiError(error) = error else { panic!("an API error: {error:?}") };
    assert_eq!(error.status_code.as_u16(), 400, "{error:?}");
    assert_eq!(error.api_error.r#type.as_deref(), Some("reloop_divergence"), "{error:?}");
    assert_eq!(error.api_error.code.as_deref(), Some("recording_exhausted"), "{error:?}");
    assert!(error.api_error.message.starts_with("reloop: divergence"), "{error:?}");
}
