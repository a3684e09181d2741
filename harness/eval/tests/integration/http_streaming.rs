//! The loop and the server talk real HTTP with real SSE over loopback.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reloop_agent::clock::BoxFuture;
use reloop_agent::{
    AgentLoop, AutoApprove, LoopDeps, LoopEvent, LoopSettings, ProviderClient, ProviderConfig, SharedClock, SystemPromptSource, ToolContext, ToolInvocation,
    ToolOutput, ToolRuntime, ToolSpec, ToolTraits, UserChannel, VirtualClock, WireFormat,
};
use reloop_mock::pacing::PaceFuture;
use reloop_mock::{MockServer, NoPacer, Pacer, Recording, Registry, Session, SessionConfig};
use tokio::sync::Semaphore;

fn recording(yaml: &str) -> Arc<Recording> {
    Arc::new(reloop_eval::yaml::parse(std::path::Path::new("r.yaml"), yaml).unwrap())
}

/// A pacer that lets one chunk through per permit, so the test decides
/// when the server may send the next one.
#[derive(Debug)]
struct Gate(Arc<Semaphore>);

impl Pacer for Gate {
    fn now_ms(&self) -> u64 {
        0
    }
    fn wait(&self, _: Duration) -> PaceFuture {
        let gate = Arc::clone(&self.0);
        Box::pin(async move { gate.acquire().await.expect("gate open").forget() })
    }
}

#[tokio::test]
async fn chunks_leave_the_server_one_by_one() {
    let gate = Arc::new(Semaphore::new(0));
    let registry = Arc::new(Registry::default());
    let server = MockServer::start(0, Arc::clone(&registry)).await.unwrap();
    let rec = recording("format: reloop.recording/v1\nexchanges:\n  - text: one two three four\n    timing: { first_byte_ms: 1, chunk_ms: 1 }\n");
    let pacer: Arc<dyn Pacer> = Arc::new(Gate(Arc::clone(&gate)));
    registry.insert("s", Arc::new(Session::new(SessionConfig { recording: rec, context_window: None, pacer, faults: vec![], provider_tokens: None }).unwrap()));

    let body = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}"#;
    reloop_agent::client::ensure_crypto_provider();
    let response = reqwest::Client::builder().no_proxy().build().unwrap().post(format!("{}/chat/completions", server.session_base_url("s"))).body(body).send();
    gate.add_permits(1); // headers are sent once the body's first frame is ready
    let response = response.await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream; charset=utf-8");
    let mut body = response.bytes_stream();
    let first = body.next().await.unwrap().unwrap();
    assert!(first.starts_with(b"data: {"), "{first:?}");
    // The server is now parked before its second frame: nothing more may arrive.
    let early = tokio::time::timeout(Duration::from_millis(200), body.next()).await;
    assert!(early.is_err(), "a second frame arrived before the server was allowed to send it");
    gate.add_permits(1000);
    let mut rest = Vec::new();
    while let Some(chunk) = body.next().await {
        rest.extend_from_slice(&chunk.unwrap());
    }
    assert!(String::from_utf8(rest).unwrap().ends_with("data: [DONE]\n\n"));
}

struct NoTools;

impl ToolRuntime for NoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec { name: "noop".into(), description: "does nothing".into(), parameters: serde_json::json!({"type": "object"}) }]
    }
    fn traits(&self, _: &str) -> ToolTraits {
        ToolTraits::default()
    }
    fn execute(&self, _: ToolInvocation, _: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async { ToolOutput::ok("done") })
    }
}

struct Prompt;

impl SystemPromptSource for Prompt {
    fn system_prompt(&self, _: u32) -> String {
        "be brief".into()
    }
}

struct Nobody;

impl UserChannel for Nobody {
    fn reply(&mut self, _: &str) -> Option<String> {
        None
    }
}

#[tokio::test]
async fn the_loop_streams_from_the_server_over_loopback() {
    let registry = Arc::new(Registry::default());
    let server = MockServer::start(0, Arc::clone(&registry)).await.unwrap();
    let rec = recording("format: reloop.recording/v1\nexchanges:\n  - tool_calls: [{ name: noop, arguments: {} }]\n  - text: All done, nothing was needed.\n");
    let session = Arc::new(
        Session::new(SessionConfig { recording: rec, context_window: None, pacer: Arc::new(NoPacer), faults: vec![], provider_tokens: None }).unwrap(),
    );
    registry.insert("run", Arc::clone(&session));
    let clock: SharedClock = Arc::new(VirtualClock::new());
    let client = ProviderClient::new(
        ProviderConfig {
            base_url: server.session_base_url("run"),
            api_key: "k".into(),
            wire: WireFormat::OpenaiChat,
            model: "gpt-4o".into(),
            cache_breakpoints: Default::default(),
            context_management: None,
        },
        Arc::clone(&clock),
    )
    .unwrap();
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let state = AgentLoop::new(LoopDeps {
        client,
        settings: LoopSettings::default(),
        system_prompt: &Prompt,
        tools: &NoTools,
        user: &mut Nobody,
        approvals: &mut AutoApprove,
        clock,
        events,
    })
    .run("do nothing")
    .await;

    assert_eq!(state.final_answer.as_deref(), Some("All done, nothing was needed."));
    let log = session.log();
    assert_eq!(log.len(), 2, "two requests reached the server");
    assert!(log.iter().all(|r| r.stream && r.result == "ok"));
    assert_eq!(log[1].messages, 4, "system, user, assistant tool call, tool result");
    assert_eq!(state.usage.input_tokens, log[0].input_tokens + log[1].input_tokens, "usage came from the server");
    let mut deltas = Vec::new();
    while let Ok(event) = received.try_recv() {
        if let LoopEvent::LlmTextDelta { text } = event.event {
            deltas.push(text);
        }
    }
    assert!(deltas.len() > 1, "text arrived as several streamed deltas: {deltas:?}");
    assert_eq!(deltas.concat(), "All done, nothing was needed.");
}

/// Faults apply on top of raw bytes: a cut leaves exactly the first recorded
/// events (their own bytes), and the retry gets the whole recorded stream.
#[tokio::test]
async fn a_cut_raw_stream_sends_the_recorded_events_it_got_to() {
    let events = [
        "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
        "event: ping\ndata: {\"type\": \"ping\"}\r\n\r\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    ];
    let yaml = format!(
        "format: reloop.recording/v2\nexchanges:\n  - text: hi\n    replay: raw\n    raw:\n      api: anthropic\n      headers: [[content-type, text/event-stream]]\n      events: {}\n",
        serde_json::to_string(&events).unwrap()
    );
    let registry = Arc::new(Registry::default());
    let server = MockServer::start(0, Arc::clone(&registry)).await.unwrap();
    let faults = vec![serde_json::from_value(serde_json::json!({ "exchange": 0, "cut_after_events": 2 })).unwrap()];
    let config = SessionConfig { recording: recording(&yaml), context_window: None, pacer: Arc::new(NoPacer), faults, provider_tokens: None };
    registry.insert("s", Arc::new(Session::new(config).unwrap()));
    let url = format!("{}/messages", server.session_base_url("s"));
    let body = r#"{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"go"}]}"#;
    reloop_agent::client::ensure_crypto_provider();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut received = Vec::new();
    let mut stream = client.post(&url).body(body).send().await.unwrap().bytes_stream();
    while let Some(Ok(bytes)) = stream.next().await {
        received.extend_from_slice(&bytes);
    }
    assert_eq!(String::from_utf8(received).unwrap(), events[..2].concat(), "cut after two recorded events");
    let retry = client.post(&url).body(body).send().await.unwrap().text().await.unwrap();
    assert_eq!(retry, events.concat());
}

/// Regression: a Responses tool result that names the call by its `fc_`
/// item id (as some clients do) answers the call; it was a divergence.
#[tokio::test]
async fn a_responses_result_may_name_the_call_by_its_item_id() {
    let yaml = "format: reloop.recording/v2\nexchanges:\n  - tool_calls: [{ name: noop }]\n  - text: Done.\n";
    let registry = Arc::new(Registry::default());
    let server = MockServer::start(0, Arc::clone(&registry)).await.unwrap();
    let config = SessionConfig { recording: recording(yaml), context_window: None, pacer: Arc::new(NoPacer), faults: vec![], provider_tokens: None };
    registry.insert("s", Arc::new(Session::new(config).unwrap()));
    let url = format!("{}/responses", server.session_base_url("s"));
    reloop_agent::client::ensure_crypto_provider();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let tools = serde_json::json!([{ "type": "function", "name": "noop", "parameters": { "type": "object" } }]);
    let post = |body: serde_json::Value| client.post(&url).body(body.to_string()).send();
    let first = post(serde_json::json!({ "model": "m", "input": "go", "tools": tools })).await.unwrap().text().await.unwrap();
    let first: serde_json::Value = serde_json::from_str(&first).unwrap();
    let call = &first["output"][0];
    let item_id = call["id"].as_str().unwrap();
    assert!(item_id.starts_with("fc_"), "{first}");
    let input = serde_json::json!([
        { "role": "user", "content": "go" },
        call,
        { "type": "function_call_output", "call_id": item_id, "output": "ok" }
    ]);
    let second = post(serde_json::json!({ "model": "m", "input": input, "tools": tools })).await.unwrap();
    assert_eq!(second.status(), 200, "{}", second.text().await.unwrap());
}
