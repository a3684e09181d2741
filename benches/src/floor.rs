//! The floor: the least any harness must do to replay the workload over
//! real HTTP. Per conversation, an axum server on a loopback port and a
//! reqwest client on one single-threaded runtime (as reloop runs each
//! scenario); per step, the client serializes the whole conversation as an
//! OpenAI Chat request, the server parses it and streams a tool call back
//! over SSE chunk by chunk, and the client parses every event and appends
//! the call and its result. No agent logic, no token counting, no report.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use axum::routing::post;
use futures_util::StreamExt as _;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::workload::{ANSWER, SYSTEM, TASK, TOOL, Workload};

/// An OpenAI Chat request, as much of it as the conversation uses.
#[derive(Debug, Serialize, Deserialize)]
struct ChatRequest {
    model: String,
    stream: bool,
    messages: Vec<ChatMessage>,
    tools: Vec<serde_json::Value>,
}

/// One message of the conversation.
#[derive(Debug, Serialize, Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
}

/// A tool call of an assistant message.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ToolCall {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    function: FunctionCall,
}

/// The function a tool call names.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FunctionCall {
    name: String,
    arguments: String,
}

/// Replays `workload` on a pool of `jobs` threads; returns the wall time.
/// Panics if a conversation does not end with the answer after its steps
/// (the floor must do the whole work to count).
pub fn run(workload: &Workload, jobs: usize) -> Duration {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs.max(1)).build().expect("a thread pool starts");
    let output = workload.tool_output();
    let start = Instant::now();
    pool.install(|| {
        (0..workload.scenarios).into_par_iter().for_each(|_| {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().expect("a runtime starts");
            let steps = runtime.block_on(conversation(workload.steps, &output));
            assert_eq!(steps, workload.steps, "the floor conversation ran every step");
        });
    });
    start.elapsed()
}

/// One conversation against its own server; returns the model decisions made.
async fn conversation(steps: u32, output: &str) -> u32 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binds loopback");
    let url = format!("http://{}/v1/chat/completions", listener.local_addr().expect("bound"));
    let app = Router::new().route("/v1/chat/completions", post(move |body: Bytes| async move { answer(&body, steps) }));
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    // reqwest's rustls has no provider of its own and panics without one;
    // the same ring provider reloop installs (an installed one is kept).
    let _ = rustls::crypto::ring::default_provider().install_default();
    // No TLS roots, as reloop's client for a plain-http endpoint: loading
    // the system's certificates is no part of replaying over loopback.
    let client = reqwest::Client::builder().tls_certs_only([]).build().expect("a client builds");
    let tools = vec![json!({ "type": "function", "function": { "name": TOOL, "description": "Read a file", "parameters": { "type": "object" } } })];
    let mut request = ChatRequest { model: "gpt-4o".to_owned(), stream: true, messages: vec![message("system", SYSTEM), message("user", TASK)], tools };
    let mut made = 0;
    loop {
        let body = serde_json::to_vec(&request).expect("the request serializes");
        let response = client.post(&url).header(header::CONTENT_TYPE, "application/json").body(body).send().await.expect("the floor server answers");
        let (text, calls) = read_stream(response).await;
        made += 1;
        if calls.is_empty() {
            assert_eq!(text, ANSWER);
            break;
        }
        let results: Vec<ChatMessage> = calls
            .iter()
            .map(|call| ChatMessage { role: "tool".to_owned(), content: Some(output.to_owned()), tool_calls: Vec::new(), tool_call_id: Some(call.id.clone()) })
            .collect();
        request.messages.push(ChatMessage { role: "assistant".to_owned(), content: None, tool_calls: calls, tool_call_id: None });
        request.messages.extend(results);
    }
    server.abort();
    made
}

fn message(role: &str, content: &str) -> ChatMessage {
    ChatMessage { role: role.to_owned(), content: Some(content.to_owned()), tool_calls: Vec::new(), tool_call_id: None }
}

/// The server: parses the request, and streams the next decision (a tool
/// call, or the answer once `steps - 1` calls were made) as Chat chunks.
fn answer(body: &[u8], steps: u32) -> Response {
    let request: ChatRequest = serde_json::from_slice(body).expect("the floor client sends valid JSON");
    let step = 1 + request.messages.iter().filter(|m| m.role == "assistant").count() as u32;
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let chunk = json!({ "id": "chatcmpl-floor", "object": "chat.completion.chunk", "created": 0, "model": request.model, "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
        format!("data: {chunk}\n\n")
    };
    let mut frames = vec![chunk(json!({ "role": "assistant", "content": null }), None)];
    if step < steps {
        let id = format!("call_{step}");
        frames.push(chunk(json!({ "tool_calls": [{ "index": 0, "id": id, "type": "function", "function": { "name": TOOL, "arguments": "" } }] }), None));
        frames.push(chunk(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": Workload::arguments(step) } }] }), None));
        frames.push(chunk(json!({}), Some("tool_calls")));
    } else {
        frames.push(chunk(json!({ "content": ANSWER }), None));
        frames.push(chunk(json!({}), Some("stop")));
    }
    frames.push("data: [DONE]\n\n".to_owned());
    let stream = futures_util::stream::iter(frames.into_iter().map(|frame| Ok::<_, Infallible>(Bytes::from(frame))));
    Response::builder().header(header::CONTENT_TYPE, "text/event-stream").body(Body::from_stream(stream)).expect("static headers are valid")
}

/// The client: reads the SSE body event by event, parses each one, and
/// joins the text and the tool calls.
async fn read_stream(response: reqwest::Response) -> (String, Vec<ToolCall>) {
    let mut body = response.bytes_stream();
    let mut buffer = Vec::new();
    let (mut text, mut calls) = (String::new(), Vec::<ToolCall>::new());
    while let Some(bytes) = body.next().await {
        buffer.extend_from_slice(&bytes.expect("the stream reads"));
        while let Some(event) = next_event(&mut buffer) {
            let Some(data) = chunk_data(&event) else { continue };
            let chunk: serde_json::Value = serde_json::from_slice(data).expect("each event is JSON");
            let delta = &chunk["choices"][0]["delta"];
            if let Some(content) = delta["content"].as_str() {
                text.push_str(content);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let arguments = call["function"]["arguments"].as_str().unwrap_or_default();
                match call["id"].as_str() {
                    Some(id) => calls.push(ToolCall {
                        id: id.to_owned(),
                        kind: "function".to_owned(),
                        function: FunctionCall { name: call["function"]["name"].as_str().unwrap_or_default().to_owned(), arguments: arguments.to_owned() },
                    }),
                    None => calls.last_mut().expect("arguments follow their call").function.arguments.push_str(arguments),
                }
            }
        }
    }
    (text, calls)
}

/// The next whole SSE event (through its blank line) taken off the front
/// of `buffer`, or `None` until one has arrived.
pub(crate) fn next_event(buffer: &mut Vec<u8>) -> Option<Vec<u8>> {
    let end = buffer.windows(2).position(|w| w == b"\n\n")?;
    Some(buffer.drain(..end + 2).collect())
}

/// The JSON of a Chat stream's `data:` event, `None` for another event and `[DONE]`.
pub(crate) fn chunk_data(event: &[u8]) -> Option<&[u8]> {
    let data = event.strip_prefix(b"data: ")?;
    let data = &data[..data.len() - 2];
    (data != b"[DONE]").then_some(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_runs_every_step_of_every_conversation() {
        let workload = Workload { scenarios: 3, steps: 4, result_chars: 100, context_window: Workload::UNBOUNDED };
        // `run` asserts each conversation's step count itself.
        assert!(run(&workload, 2) > Duration::ZERO);
    }
}
