//! The HTTP front: real TCP on loopback, routes of the real APIs, and
//! chunk-by-chunk SSE. Sessions are addressed by path prefix
//! (`/s/{session}/v1/...`); `/v1/...` is the session named `default`, for
//! clients that cannot add a prefix.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use reloop_wire::openai_chat::{ApiErrorBody, ChatRequest};

use crate::pacing::Pacer;
use crate::render::{CREATED, OpenaiChat, Render, ReplyMeta};
use crate::session::{Reply, Session};
use crate::stream_plan::StreamPlan;

/// The session `/v1/...` routes use.
pub const DEFAULT_SESSION: &str = "default";

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
    let render = OpenaiChat;
    match session.handle(&request.to_prompt()) {
        Reply::Error { status, body } => error_response(status, &body),
        Reply::Http(fault) => {
            let body = fault.body.clone().unwrap_or_else(|| render.http_error_body(fault.status));
            let mut response = json_response(StatusCode::from_u16(fault.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), body);
            for (name, value) in &fault.headers {
                if let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::try_from(value.as_str())) {
                    response.headers_mut().insert(name, value);
                }
            }
            response
        }
        Reply::Turn { turn, fault, timing, model, request_index } => {
            let meta = ReplyMeta {
                id: format!("chatcmpl-reloop{request_index:05}"),
                model,
                include_usage: request.stream_options.as_ref().is_some_and(|o| o.include_usage),
            };
            if request.stream {
                let plan = StreamPlan::new(render.stream(&turn, &meta), timing, fault.as_ref(), &render);
                stream_response(plan, session.pacer())
            } else {
                json_response(StatusCode::OK, render.complete(&turn, &meta))
            }
        }
    }
}

/// Plays `plan`: each frame after its wait; a planned break aborts the
/// connection mid-body, as a dropped upstream would.
fn stream_response(plan: StreamPlan, pacer: Arc<dyn Pacer>) -> Response {
    let abort = plan.abort;
    let frames = plan.frames.into_iter().map(Some).chain(std::iter::once(None));
    let body = futures_util::stream::unfold((frames, pacer), move |(mut frames, pacer)| async move {
        match frames.next()? {
            Some((wait, frame)) => {
                if !wait.is_zero() {
                    pacer.wait(wait).await;
                }
                Some((Ok(Bytes::from(frame)), (frames, pacer)))
            }
            None if abort => {
                // Let hyper flush what was sent before breaking the
                // connection, so the client sees the events, then the cut.
                tokio::task::yield_now().await;
                Some((Err(std::io::Error::other("reloop fault: stream cut")), (frames, pacer)))
            }
            None => None,
        }
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
