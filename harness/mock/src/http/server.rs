//! The HTTP front: real TCP on loopback, the routes of the three provider
//! APIs, and chunk-by-chunk SSE. Sessions are addressed by path prefix
//! (`/s/{session}/v1/...`); `/v1/...` is the session named `default`, for
//! clients that cannot add a prefix. Any API key is accepted (as
//! `Authorization: Bearer` or `x-api-key`) and never stored.
//!
//! Bounded for outside clients: connections by [`ConnectionLimits`]
//! (`crate::http::connections`), sessions made on demand by [`SessionLimits`]
//! (idle ones released, a cap on live ones; `DELETE /s/{session}` ends one),
//! and every error the server raises itself in the API's JSON shape
//! (`crate::http::api_errors`).

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use reloop_wire::codec::ErrorReply;
use reloop_wire::gemini::Action;
use reloop_wire::reply::{CREATED, ReplyMeta};
use reloop_wire::{Format, Prompt, codec};

use reloop_recording::session_path::{self, DEFAULT_SESSION, run_session};

use crate::http::api_errors::{self, error_format, error_response, escape_control};
use crate::http::connections::{self, ConnectionLimits};
use crate::http::json_log::JsonLog;
use crate::http::raw_reply;
use crate::replay::pacing::Pacer;
use crate::replay::provider_context::{self, ServerSide};
use crate::replay::session::{Caching, Managed, Reply, RequestRecord, Session, SessionConfig};
use crate::replay::stream_plan::StreamPlan;
use reloop_recording::Recording;

/// The one model `GET /v1/models` lists.
const REPLAY_MODEL: &str = "reloop-replay";

/// Makes a session for a name on first use (for `reloop serve`).
pub type SessionFactory = Box<dyn Fn(&str) -> Option<SessionConfig> + Send + Sync>;

/// How long sessions made on demand live, and how many at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// A session unused this long is released (its next request starts a
    /// fresh replay).
    pub idle_ttl: Duration,
    /// Live sessions at most; a new name beyond it gets 503.
    pub max_sessions: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self { idle_ttl: Duration::from_secs(300), max_sessions: 4096 }
    }
}

/// Why a session cannot be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRefusal {
    /// No session, and no recording, by that name.
    Unknown,
    /// The cap on live sessions is reached.
    Full,
}

/// A session and when it was last asked for.
struct Live {
    session: Arc<Session>,
    last_used: Instant,
}

/// Sessions by name.
#[derive(Default)]
pub struct Registry {
    sessions: Mutex<HashMap<String, Live>>,
    factory: Option<SessionFactory>,
    /// Limits on factory-made sessions; `None` keeps every session (runs).
    limits: Option<SessionLimits>,
    log_requests: bool,
    /// `serve --log-json`: a JSON-lines file per session besides stderr.
    json_log: Option<JsonLog>,
    /// `run --upstream`: where calls that go live are sent (`crate::http::live`).
    live: Option<Arc<crate::http::live::Upstream>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").field("log_requests", &self.log_requests).finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry that creates unknown sessions with `factory` and logs
    /// every request to standard error.
    pub fn serving(factory: SessionFactory, limits: SessionLimits) -> Self {
        Self { sessions: Mutex::default(), factory: Some(factory), limits: Some(limits), log_requests: true, json_log: None, live: None }
    }

    /// This registry, also logging each session's requests as JSON lines.
    pub fn with_json_log(self, log: JsonLog) -> Self {
        Self { json_log: Some(log), ..self }
    }

    /// This registry, sending the calls its sessions take live to `upstream`.
    pub fn with_live(self, upstream: crate::http::live::Upstream) -> Self {
        Self { live: Some(Arc::new(upstream)), ..self }
    }

    /// Where live calls go, if anywhere.
    pub(crate) fn live(&self) -> Option<&Arc<crate::http::live::Upstream>> {
        self.live.as_ref()
    }

    /// Adds or replaces a session.
    pub fn insert(&self, name: impl Into<String>, session: Arc<Session>) {
        self.lock().insert(name.into(), Live { session, last_used: Instant::now() });
    }

    /// The session called `name`, made by the factory on first use (after
    /// releasing idle sessions, within the cap).
    pub fn get(&self, name: &str) -> Result<Arc<Session>, SessionRefusal> {
        let mut sessions = self.lock();
        let now = Instant::now();
        if let Some(live) = sessions.get_mut(name) {
            live.last_used = now;
            return Ok(Arc::clone(&live.session));
        }
        if let Some(limits) = self.limits {
            sessions.retain(|_, live| now.duration_since(live.last_used) < limits.idle_ttl);
            if sessions.len() >= limits.max_sessions {
                return Err(SessionRefusal::Full);
            }
        }
        let config = self.factory.as_ref().and_then(|make| make(name)).ok_or(SessionRefusal::Unknown)?;
        let session = Arc::new(Session::new(config).map_err(|_| SessionRefusal::Unknown)?);
        sessions.insert(name.to_owned(), Live { session: Arc::clone(&session), last_used: now });
        Ok(session)
    }

    /// Ends session `name`, releasing its state; whether it was live.
    pub fn end(&self, name: &str) -> bool {
        self.lock().remove(name).is_some()
    }

    /// How many sessions are live.
    pub fn live_sessions(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.sessions.lock().expect("session registry poisoned")
    }
}

/// A running server.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    registry: Arc<Registry>,
    task: tokio::task::JoinHandle<()>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl MockServer {
    /// Binds 127.0.0.1:`port` (0 for an ephemeral port) and serves on the
    /// current tokio runtime with the default connection limits. Loopback
    /// only, by design.
    pub async fn start(port: u16, registry: Arc<Registry>) -> std::io::Result<Self> {
        Self::start_with(port, registry, ConnectionLimits::default()).await
    }

    /// As [`MockServer::start`], within `limits`.
    pub async fn start_with(port: u16, registry: Arc<Registry>, limits: ConnectionLimits) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let app = router(Arc::clone(&registry));
        let (stop, stopped) = tokio::sync::watch::channel(false);
        // Serving ends with the server or [`MockServer::stop`]; errors are per connection.
        let task = tokio::spawn(connections::serve(listener, app, limits, stopped));
        Ok(Self { addr, registry, task, stop })
    }

    /// Stops accepting connections at once, then lets the exchanges under
    /// way finish for at most `grace`; the connections still open then are
    /// dropped. `true` when every exchange finished in time.
    pub async fn stop(mut self, grace: std::time::Duration) -> bool {
        let _ = self.stop.send(true);
        tokio::time::timeout(grace, &mut self.task).await.is_ok()
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
        Self::base_url_at(self.addr, name)
    }

    /// The OpenAI base URL of session `name` on a server (or a proxy in
    /// front of one, as `serve --capture` puts) at `addr`.
    pub fn base_url_at(addr: SocketAddr, name: &str) -> String {
        session_path::base_url(addr, name)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn router(registry: Arc<Registry>) -> Router {
    let mut router =
        Router::new().route("/v1/models", get(models)).route("/s/{session}/v1/models", get(models)).route("/s/{session}/r/{run}/v1/models", get(models));
    for format in Format::ALL.into_iter().filter(|format| *format != Format::Gemini) {
        let path = format.path();
        let call = move |headers: HeaderMap, body| Call { format, model: None, stream: false, beta: anthropic_beta(&headers), body };
        router = router
            .route(
                &format!("/v1{path}"),
                post(move |State(r): State<Arc<Registry>>, headers: HeaderMap, body: Result<Bytes, BytesRejection>| async move {
                    answer(&r, DEFAULT_SESSION, call(headers, body))
                }),
            )
            .route(
                &format!("/s/{{session}}/v1{path}"),
                post(move |State(r): State<Arc<Registry>>, Path(session): Path<String>, headers: HeaderMap, body: Result<Bytes, BytesRejection>| async move {
                    answer(&r, &session, call(headers, body))
                }),
            )
            .route(
                &format!("/s/{{session}}/r/{{run}}/v1{path}"),
                post(
                    move |State(r): State<Arc<Registry>>,
                          Path((session, run)): Path<(String, String)>,
                          headers: HeaderMap,
                          body: Result<Bytes, BytesRejection>| async move { answer(&r, &run_session(&session, &run), call(headers, body)) },
                ),
            );
    }
    // OpenAI's standalone compaction (`crate::replay::provider_context::responses`).
    router = router
        .route(
            "/v1/responses/compact",
            post(|State(r): State<Arc<Registry>>, body: Result<Bytes, BytesRejection>| async move { compact(&r, DEFAULT_SESSION, body) }),
        )
        .route(
            "/s/{session}/v1/responses/compact",
            post(|State(r): State<Arc<Registry>>, Path(session): Path<String>, body: Result<Bytes, BytesRejection>| async move { compact(&r, &session, body) }),
        )
        .route(
            "/s/{session}/r/{run}/v1/responses/compact",
            post(|State(r): State<Arc<Registry>>, Path((session, run)): Path<(String, String)>, body: Result<Bytes, BytesRejection>| async move {
                compact(&r, &run_session(&session, &run), body)
            }),
        );
    // Gemini: `models/{model}:{method}`, under `/v1beta` (the SDKs' default)
    // and `/v1`; the method says whether to stream or to count.
    for version in ["v1", "v1beta"] {
        let path = Format::Gemini.path();
        router = router
            .route(&format!("/{version}{path}"), post(|State(r): State<Arc<Registry>>, Path(action): Path<String>, body: Result<Bytes, BytesRejection>| async move {
                gemini(&r, DEFAULT_SESSION, &action, body)
            }))
            .route(&format!("/s/{{session}}/{version}{path}"), post(|State(r): State<Arc<Registry>>, Path((session, action)): Path<(String, String)>, body: Result<Bytes, BytesRejection>| async move {
                gemini(&r, &session, &action, body)
            }))
            .route(&format!("/s/{{session}}/r/{{run}}/{version}{path}"), post(|State(r): State<Arc<Registry>>, Path((session, run, action)): Path<(String, String, String)>, body: Result<Bytes, BytesRejection>| async move {
                gemini(&r, &run_session(&session, &run), &action, body)
            }));
    }
    router
        .route("/v1/messages/count_tokens", post(|State(r): State<Arc<Registry>>, body: Bytes| async move { count_tokens(&r, DEFAULT_SESSION, &body) }))
        .route(
            "/s/{session}/v1/messages/count_tokens",
            post(|State(r): State<Arc<Registry>>, Path(session): Path<String>, body: Bytes| async move { count_tokens(&r, &session, &body) }),
        )
        .route(
            "/s/{session}/r/{run}/v1/messages/count_tokens",
            post(|State(r): State<Arc<Registry>>, Path((session, run)): Path<(String, String)>, body: Bytes| async move {
                count_tokens(&r, &run_session(&session, &run), &body)
            }),
        )
        .route("/s/{session}", delete(end_session))
        .fallback(not_found)
        .method_not_allowed_fallback(api_errors::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&registry), crate::http::live::intercept))
        .layer(axum::middleware::from_fn(api_errors::limit_headers))
        .with_state(registry)
}

/// 404 for a path no route serves, logged by `reloop serve`.
async fn not_found(State(registry): State<Arc<Registry>>, method: axum::http::Method, uri: Uri, headers: HeaderMap) -> Response {
    if registry.log_requests {
        eprintln!("[-] 404 {method} {} (no such route)", escape_control(uri.path()));
    }
    api_errors::not_found(uri, headers).await
}

/// `POST .../v1/messages/count_tokens` (Anthropic): the prompt counted by
/// the session's tokenizer, as the server counts every request; nothing is
/// replayed or consumed.
fn count_tokens(registry: &Registry, name: &str, body: &[u8]) -> Response {
    count_prompt(registry, name, Format::Anthropic, body, "", |tokens| serde_json::json!({ "input_tokens": tokens }))
}

/// Counts the prompt of `body` (a `format` count request) with the session's
/// tokenizer and answers `reply(tokens)`.
fn count_prompt(registry: &Registry, name: &str, format: Format, body: &[u8], model: &str, reply: impl Fn(u64) -> serde_json::Value) -> Response {
    let session = match registry.get(name) {
        Ok(session) => session,
        Err(_) => return error_response(format, StatusCode::NOT_FOUND, &format!("reloop: no replay session named `{}`", escape_control(name))),
    };
    let prompt = match codec::decode_count_request(format, body, model) {
        Ok(prompt) => prompt,
        Err(e) => return error_response(format, StatusCode::BAD_REQUEST, &format!("could not parse the JSON body of your request: {e}")),
    };
    let tokens = session.counter().count_prompt(&prompt).total;
    if registry.log_requests {
        eprintln!("[{}] count_tokens 200 in={tokens}", escape_control(name));
    }
    if let Some(log) = &registry.json_log {
        log.count_tokens(name, tokens);
    }
    json_response(StatusCode::OK, reply(tokens).to_string())
}

/// `POST .../models/{model}:{method}` (Gemini): a call, streamed or not, or
/// `countTokens` (whose body is the request's `contents`, or the whole
/// request under `generateContentRequest`).
fn gemini(registry: &Registry, name: &str, action: &str, body: Result<Bytes, BytesRejection>) -> Response {
    match Action::parse(action) {
        Some(Action::Generate { model, stream }) => answer(registry, name, Call { format: Format::Gemini, model: Some(model), stream, beta: None, body }),
        Some(Action::CountTokens { model }) => {
            let body = match body {
                Ok(body) => body,
                Err(rejection) => return error_response(Format::Gemini, rejection.status(), &format!("reloop: {}", rejection.body_text())),
            };
            count_prompt(registry, name, Format::Gemini, &body, &model, |tokens| serde_json::json!({ "totalTokens": tokens }))
        }
        None => error_response(
            Format::Gemini,
            StatusCode::NOT_FOUND,
            &format!("reloop: no method `{}`; Gemini's are generateContent, streamGenerateContent and countTokens", escape_control(action)),
        ),
    }
}

/// `DELETE /s/{session}`: the client is done; its state is released.
async fn end_session(State(registry): State<Arc<Registry>>, Path(session): Path<String>, uri: Uri, headers: HeaderMap) -> Response {
    if registry.end(&session) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        let message = format!("reloop: no live session named `{}`", escape_control(&session));
        error_response(error_format(&uri, &headers), StatusCode::NOT_FOUND, &message)
    }
}

/// The model list, in the shape of whichever SDK asks: Anthropic's when
/// the request carries `anthropic-version`, OpenAI's otherwise.
async fn models(headers: HeaderMap) -> Response {
    let body = if headers.contains_key("anthropic-version") {
        serde_json::json!({
            "data": [{ "type": "model", "id": REPLAY_MODEL, "display_name": "reloop replay", "created_at": "2026-01-01T00:00:00Z", "lifecycle": "active", "deprecated_at": null }],
            "has_more": false,
            "first_id": REPLAY_MODEL,
            "last_id": REPLAY_MODEL,
        })
    } else {
        serde_json::json!({
            "object": "list",
            "data": [{ "id": REPLAY_MODEL, "object": "model", "created": CREATED, "owned_by": "reloop" }],
        })
    };
    json_response(StatusCode::OK, body.to_string())
}

/// One call as its route gives it: the format, the model and streaming
/// when the URL names them (Gemini), and the body.
pub(crate) struct Call {
    pub(crate) format: Format,
    pub(crate) model: Option<String>,
    pub(crate) stream: bool,
    /// The `anthropic-beta` header, which context management needs.
    pub(crate) beta: Option<String>,
    pub(crate) body: Result<Bytes, BytesRejection>,
}

/// The `anthropic-beta` header of a request, when it has one.
pub(crate) fn anthropic_beta(headers: &HeaderMap) -> Option<String> {
    headers.get("anthropic-beta").and_then(|value| value.to_str().ok()).map(str::to_owned)
}

/// Parses a request body of `format` into the neutral prompt and the cache
/// model its format implies: OpenAI's automatic caching, Gemini's implicit
/// one, or the Anthropic request's own breakpoints.
pub(crate) fn parse(call: &Call, body: &[u8]) -> Result<(Prompt, Caching), serde_json::Error> {
    let request = codec::decode_request(call.format, body, call.model.as_deref().unwrap_or_default(), call.stream)?;
    let caching = Caching::of(call.format, &request.prompt.model, request.breakpoints);
    Ok((request.prompt, caching))
}

/// The session `name` names, or the API's error for a `format` client.
fn session_for(registry: &Registry, name: &str, format: Format) -> Result<Arc<Session>, Response> {
    if let Some(message) = crate::http::dot_segments::refusal(name) {
        return Err(json_response(StatusCode::BAD_REQUEST, codec::error_body(format, ErrorReply::InvalidRequest(&message))));
    }
    registry.get(name).map_err(|refusal| match refusal {
        SessionRefusal::Unknown => {
            let message = format!("reloop: no replay session named `{}`", escape_control(name));
            json_response(StatusCode::NOT_FOUND, codec::error_body(format, ErrorReply::InvalidRequest(&message)))
        }
        SessionRefusal::Full => {
            error_response(format, StatusCode::SERVICE_UNAVAILABLE, "reloop: too many live sessions; end some (DELETE /s/NAME) or wait for idle ones to expire")
        }
    })
}

/// Logs the request `session` just handled, for `reloop serve`.
fn log_request(registry: &Registry, name: &str, format: Format, session: &Session) -> Option<RequestRecord> {
    let record = session.last_record();
    if let Some(record) = record.as_ref().filter(|_| registry.log_requests || registry.json_log.is_some()) {
        let reason = (record.result == "divergence").then(|| session.divergences().last().map(|d| d.render())).flatten();
        if registry.log_requests {
            eprintln!("{}", log_line(name, format, record, reason.as_deref()));
        }
        if let Some(log) = &registry.json_log {
            log.request(name, format, record, reason.as_deref());
        }
    }
    record
}

fn answer(registry: &Registry, name: &str, call: Call) -> Response {
    let format = call.format;
    let body = match &call.body {
        Ok(body) => body,
        Err(rejection) => return error_response(format, rejection.status(), &format!("reloop: {}", rejection.body_text())),
    };
    let session = match session_for(registry, name, format) {
        Ok(session) => session,
        Err(response) => return response,
    };
    // The prompt the provider would send to the model: its context
    // management applied, so counting, matching, caching and cost follow it.
    let model = call.model.as_deref().unwrap_or_default();
    let prepared = match provider_context::prepare(format, body, call.beta.as_deref(), &session, model, call.stream) {
        Ok(prepared) => prepared,
        Err(message) => return json_response(StatusCode::BAD_REQUEST, codec::error_body(format, ErrorReply::InvalidRequest(&message))),
    };
    let (prompt, side) = (prepared.prompt, prepared.side);
    let caching = Caching::of(format, &prompt.model, prepared.breakpoints);
    let paused = side.compaction.as_ref().filter(|c| c.pause).map(|c| c.summary.as_str());
    let managed = Managed { note: side.note.as_deref(), compaction: paused, history: prepared.history.as_ref() };
    let reply = session.handle_managed(&prompt, &caching, managed);
    let record = log_request(registry, name, format, &session);
    let mut response = respond(reply, prompt, format, session.pacer(), &side);
    // Both SDKs surface these as the request id; deterministic per session
    // (a raw reply keeps the recorded ones).
    if let Some(id) = record.and_then(|r| HeaderValue::try_from(format!("req_reloop_{name}_{:05}", r.index)).ok()) {
        for header in ["x-request-id", "request-id"] {
            if !response.headers().contains_key(header) {
                response.headers_mut().insert(header, id.clone());
            }
        }
    }
    response
}

/// One line per request for `reloop serve`'s log; a divergence ends with
/// its reason.
fn log_line(session: &str, format: Format, record: &RequestRecord, reason: Option<&str>) -> String {
    let exchange = record.exchange.map_or("-".to_owned(), |e| e.to_string());
    let reason = reason.map_or(String::new(), |reason| format!(": {}", escape_control(reason)));
    format!(
        "[{}] #{} {} {} exchange {exchange} {} in={} out={} cached={}{reason}",
        escape_control(session),
        record.index,
        format.as_str(),
        record.status,
        record.result,
        record.input_tokens,
        record.output_tokens,
        record.cached_tokens,
    )
}

/// `POST .../v1/responses/compact`: the compacted window of the input
/// (`crate::replay::provider_context::responses`), counted, cached and priced as
/// the request it is, without consuming an exchange.
fn compact(registry: &Registry, name: &str, body: Result<Bytes, BytesRejection>) -> Response {
    let format = Format::OpenaiResponses;
    let invalid = |message: &str| json_response(StatusCode::BAD_REQUEST, codec::error_body(format, ErrorReply::InvalidRequest(message)));
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return error_response(format, rejection.status(), &format!("reloop: {}", rejection.body_text())),
    };
    let session = match session_for(registry, name, format) {
        Ok(session) => session,
        Err(response) => return response,
    };
    let compacted =
        serde_json::from_slice(&body).map_err(|e| format!("could not parse the JSON body of your request: {e}")).and_then(provider_context::responses::compact);
    let (prompt, output, summary) = match compacted {
        Ok(compacted) => compacted,
        Err(message) => return invalid(&message),
    };
    let note = format!("/responses/compact: {} items compacted", prompt.messages.len());
    let reply = session.handle_managed(&prompt, &Caching::Automatic, Managed { note: Some(&note), compaction: Some(&summary), history: None });
    match (reply, log_request(registry, name, format, &session)) {
        (Reply::Turn { .. }, Some(record)) => json_response(StatusCode::OK, provider_context::responses::compact_body(&output, &record).to_string()),
        (reply, _) => respond(reply, prompt, format, session.pacer(), &ServerSide::default()),
    }
}

/// Takes the request's `prompt` to move its tools into the reply's metadata (the Responses API
/// echoes them) instead of copying them on every request.
pub(crate) fn respond(reply: Reply, prompt: Prompt, format: Format, pacer: Arc<dyn Pacer>, side: &ServerSide) -> Response {
    let error = |error| codec::error_body(format, error);
    match reply {
        Reply::ContextExceeded { window, requested } => json_response(StatusCode::BAD_REQUEST, error(ErrorReply::ContextExceeded { window, requested })),
        Reply::Divergence(divergence) => {
            let message = format!("reloop: {}", divergence.render());
            json_response(StatusCode::BAD_REQUEST, error(ErrorReply::Divergence { message: &message, check: divergence.check }))
        }
        Reply::InvalidRequest(message) => json_response(StatusCode::BAD_REQUEST, error(ErrorReply::InvalidRequest(&message))),
        Reply::Http(fault) => {
            let body = fault.body.clone().unwrap_or_else(|| error(ErrorReply::Status(fault.status)));
            let status = StatusCode::from_u16(fault.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response = json_response(status, body);
            for (name, value) in &fault.headers {
                if let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::try_from(value.as_str())) {
                    response.headers_mut().insert(name, value);
                }
            }
            response
        }
        Reply::Turn { raw: Some(raw), fault, timing, .. } if raw_reply::fits(&raw, format, prompt.stream) => {
            let response = match &raw.body {
                Some(body) => match body.to_bytes() {
                    Ok(bytes) => Response::new(Body::from(bytes)),
                    Err(e) => return json_response(StatusCode::INTERNAL_SERVER_ERROR, error(ErrorReply::InvalidRequest(&format!("reloop: {e}")))),
                },
                None => stream_response(StreamPlan::new(raw.events.clone(), timing, fault.as_ref(), &format), pacer),
            };
            raw_reply::with_recorded_head(response, &raw)
        }
        Reply::Turn { answer, fault, timing, model, request_index, .. } => {
            let meta = ReplyMeta { request_index, model, include_usage: prompt.include_usage, tools: prompt.tools };
            let amend = provider_context::reply::amends(format, side);
            if prompt.stream {
                let mut frames = codec::encode_reply_stream(format, &answer, &meta);
                if amend {
                    frames = provider_context::reply::amend_frames(format, frames, side);
                }
                stream_response(StreamPlan::new(frames, timing, fault.as_ref(), &format), pacer)
            } else {
                let body = codec::encode_reply(format, &answer, &meta);
                json_response(StatusCode::OK, if amend { provider_context::reply::amend_body(format, &body, side) } else { body })
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

/// A session factory serving `recordings` by name: a session called `NAME`
/// or `NAME/r/RUN` (path `/s/NAME/r/RUN/v1`) replays recording `NAME` from
/// its start, so a client can open fresh sessions at will; `default`
/// replays the only recording when there is exactly one. The older
/// `NAME.RUN` still works when `NAME.RUN` is not itself a recording's name.
pub fn recording_factory(recordings: HashMap<String, Arc<Recording>>, pacer: Arc<dyn Pacer>, context_window: Option<u64>) -> SessionFactory {
    Box::new(move |name: &str| {
        let stem = session_path::recording_of(name);
        let dotted = || stem.char_indices().rev().filter(|(_, c)| *c == '.').find_map(|(i, _)| recordings.get(&stem[..i]));
        let recording = match recordings.get(stem).or_else(dotted) {
            Some(recording) => recording,
            None if stem == DEFAULT_SESSION && recordings.len() == 1 => recordings.values().next()?,
            None => return None,
        };
        Some(SessionConfig { recording: Arc::clone(recording), context_window, pacer: Arc::clone(&pacer), faults: Vec::new(), provider_tokens: None })
    })
}

/// A session factory for one scenario's recording (`reloop serve
/// --scenario`): every session name replays it from its start with the
/// scenario's faults, so each client run meets the same faults afresh.
pub fn scenario_factory(
    recording: Arc<Recording>,
    faults: Vec<reloop_recording::fault::FaultSpec>,
    pacer: Arc<dyn Pacer>,
    context_window: Option<u64>,
) -> SessionFactory {
    Box::new(move |_name: &str| {
        Some(SessionConfig { recording: Arc::clone(&recording), context_window, pacer: Arc::clone(&pacer), faults: faults.clone(), provider_tokens: None })
    })
}
