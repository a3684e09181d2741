//! The HTTP front: real TCP on loopback, routes of the real APIs, and
//! chunk-by-chunk SSE. Sessions are addressed by path prefix
//! (`/s/{session}/v1/...`); `/v1/...` is the session named `default`, for
//! clients that cannot add a prefix.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use reloop_wire::openai_chat::{ApiErrorBody, ChatCompletion, ChatRequest, ChunkMeta, encode_stream};

use crate::pacing::Pacer;
use crate::session::{Reply, Session};

/// The session `/v1/...` routes use.
pub const DEFAULT_SESSION: &str = "default";

/// A fixed `created` stamp: replies must be the same bytes run after run.
const CREATED: u64 = 1_767_225_600;

/// Sessions by name.
#[derive(Debug, Default)]
pub struct Registry {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

impl Registry {
    /// Adds or replaces a session.
    pub fn insert(&self, name: impl Into<String>, session: Arc<Session>) {
        self.lock().insert(name.into(), session);
    }

    /// The session called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<Session>> {
        self.lock().get(name).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().expect("session registry poisoned")
    }
}

/// A running server.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    registry: Arc<Registry>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Binds 127.0.0.1:`port` (0 for an ephemeral port) and serves on the
    /// current tokio runtime. Loopback only, by design.
    pub async fn start(port: u16, registry: Arc<Registry>) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let app = router(Arc::clone(&registry));
        let task = tokio::spawn(async move {
            // Serving ends only with the runtime; errors are per connection.
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, registry, task })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The registry, to add sessions.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The base URL (up to `/v1`) of session `name`.
    pub fn session_base_url(&self, name: &str) -> String {
        if name == DEFAULT_SESSION {
            format!("http://{}/v1", self.addr)
        } else {
            format!("http://{}/s/{name}/v1", self.addr)
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn router(registry: Arc<Registry>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_default))
        .route("/s/{session}/v1/chat/completions", post(chat_in_session))
        .route("/v1/models", get(models))
        .route("/s/{session}/v1/models", get(models))
        .with_state(registry)
}

async fn chat_default(State(registry): State<Arc<Registry>>, body: Bytes) -> Response {
    chat(&registry, DEFAULT_SESSION, &body)
}

async fn chat_in_session(
    State(registry): State<Arc<Registry>>,
    Path(session): Path<String>,
    body: Bytes,
) -> Response {
    chat(&registry, &session, &body)
}

async fn models(State(_): State<Arc<Registry>>) -> Response {
    let body = serde_json::json!({
        "object": "list",
        "data": [{ "id": "reloop-replay", "object": "model", "created": CREATED, "owned_by": "reloop" }],
    });
    json_response(StatusCode::OK, body.to_string())
}

fn chat(registry: &Registry, session: &str, body: &[u8]) -> Response {
    let Some(session) = registry.get(session) else {
        let error = ApiErrorBody::invalid_request(format!("reloop: no replay session named `{session}`"), None);
        return error_response(404, &error);
    };
    let request: ChatRequest = match serde_json::from_slice(body) {
        Ok(request) => request,
        Err(e) => {
            let error = ApiErrorBody::invalid_request(format!("could not parse the JSON body of your request: {e}"), None);
            return error_response(400, &error);
        }
    };
    match session.handle_chat(&request) {
        Reply::Error { status, body } => error_response(status, &body),
        Reply::Turn { turn, timing, model, request_index } => {
            let meta = ChunkMeta {
                id: format!("chatcmpl-reloop{request_index:05}"),
                model,
                created: CREATED,
                include_usage: request.stream_options.as_ref().is_some_and(|o| o.include_usage),
            };
            if request.stream {
                stream_response(encode_stream(&turn, &meta), timing, session.pacer())
            } else {
                let body = serde_json::to_string(&ChatCompletion::from_turn(&turn, &meta)).expect("plain JSON");
                json_response(StatusCode::OK, body)
            }
        }
    }
}

/// Sends `frames` one by one, waiting the recorded latency before each.
fn stream_response(frames: Vec<String>, timing: crate::recording::Timing, pacer: Arc<dyn Pacer>) -> Response {
    let waits = std::iter::once(timing.first_byte_ms).chain(std::iter::repeat(timing.chunk_ms));
    let paced = frames.into_iter().zip(waits);
    let body = futures_util::stream::unfold((paced, pacer), |(mut paced, pacer)| async move {
        let (frame, wait_ms) = paced.next()?;
        if wait_ms > 0 {
            pacer.wait(Duration::from_millis(wait_ms)).await;
        }
        Some((Ok::<_, Infallible>(Bytes::from(frame)), (paced, pacer)))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .expect("static headers are valid")
}

fn json_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn error_response(status: u16, body: &ApiErrorBody) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, serde_json::to_string(body).expect("plain JSON"))
}
