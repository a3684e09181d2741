//! The routes, declared once and nested under each session prefix
//! (`reloop_recording::session_path`): `/v1/...` is the session named
//! `default`, for clients that cannot add a prefix, `/s/{session}/v1/...` a
//! named one and `/s/{session}/r/{run}/v1/...` a fresh run of a recording.
//! Each API's model calls, token counts and model list; `DELETE
//! /s/{session}` ends a session; anything else gets the API's error. Any
//! API key is accepted (as `Authorization: Bearer` or `x-api-key`) and
//! never stored.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use reloop_recording::session_path::{DEFAULT_SESSION, RUN_ROUTE, SESSION_ROUTE, run_session};
use reloop_wire::Format;
use reloop_wire::gemini::Action;
use reloop_wire::reply::CREATED;

use crate::http::answer::{answer, compact};
use crate::http::api_errors::{self, error_format, error_response, escape_control};
use crate::http::call::{Call, anthropic_beta};
use crate::http::count::{count_prompt, count_tokens};
use crate::http::registry::Registry;
use crate::http::respond::json_response;

/// The whole router: the API at the root and under each session prefix.
pub(crate) fn router(registry: Arc<Registry>) -> Router {
    ROUTES
        .clone()
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&registry), crate::http::live::intercept))
        .layer(axum::middleware::from_fn(api_errors::limit_headers))
        .with_state(registry)
}

/// The routes without their state, declared once per process: a replay
/// starts a server per run, and declaring them again each time was 1 % of
/// a short run. A clone shares them.
static ROUTES: LazyLock<Router<Arc<Registry>>> = LazyLock::new(|| {
    let api = api();
    Router::new()
        .merge(api.clone())
        .nest(SESSION_ROUTE, api.clone())
        .nest(RUN_ROUTE, api)
        .route(SESSION_ROUTE, delete(end_session))
        .fallback(not_found)
        .method_not_allowed_fallback(api_errors::method_not_allowed)
});

/// The routes of one session, below its prefix.
fn api() -> Router<Arc<Registry>> {
    let mut api = Router::new().route("/v1/models", get(models));
    for format in Format::ALL.into_iter().filter(|format| *format != Format::Gemini) {
        let call = move |State(registry): State<Arc<Registry>>, SessionName(name): SessionName, headers: HeaderMap, body| async move {
            answer(&registry, &name, Call { format, model: None, stream: false, beta: anthropic_beta(&headers), body })
        };
        api = api.route(&format!("/v1{}", format.path()), post(call));
    }
    // OpenAI's standalone compaction (`crate::replay::provider_context::responses`).
    let compaction = |State(registry): State<Arc<Registry>>, SessionName(name): SessionName, body| async move { compact(&registry, &name, body) };
    api = api.route("/v1/responses/compact", post(compaction));
    // Gemini: `models/{model}:{method}`, under `/v1beta` (the SDKs' default)
    // and `/v1`; the method says whether to stream or to count.
    for version in ["v1", "v1beta"] {
        api = api.route(&format!("/{version}{}", Format::Gemini.path()), post(gemini));
    }
    let count = |State(registry): State<Arc<Registry>>, SessionName(name): SessionName, body: Bytes| async move { count_tokens(&registry, &name, &body) };
    api.route("/v1/messages/count_tokens", post(count))
}

/// The session a route's path names: `{session}`, `{session}/r/{run}`
/// (its parameters percent-decoded once), or the default one.
struct SessionName(String);

impl<S: Send + Sync> FromRequestParts<S> for SessionName {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let params = Option::<Path<HashMap<String, String>>>::from_request_parts(parts, state).await.map_err(IntoResponse::into_response)?;
        let name = match params.as_ref().map(|Path(params)| (params.get("session"), params.get("run"))) {
            Some((Some(session), Some(run))) => run_session(session, run),
            Some((Some(session), None)) => session.clone(),
            _ => DEFAULT_SESSION.to_owned(),
        };
        Ok(Self(name))
    }
}

/// 404 for a path no route serves, logged by `reloop serve`.
async fn not_found(State(registry): State<Arc<Registry>>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    if registry.log_requests {
        eprintln!("[-] 404 {method} {} (no such route)", escape_control(uri.path()));
    }
    api_errors::not_found(uri, headers).await
}

/// `POST .../models/{model}:{method}` (Gemini): a call, streamed or not, or
/// `countTokens` (whose body is the request's `contents`, or the whole
/// request under `generateContentRequest`).
async fn gemini(
    State(registry): State<Arc<Registry>>,
    SessionName(name): SessionName,
    Path(params): Path<HashMap<String, String>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let (registry, name, action) = (&*registry, name.as_str(), params.get("action").map_or("", String::as_str));
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

/// The one model `GET /v1/models` lists.
const REPLAY_MODEL: &str = "reloop-replay";

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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use crate::http::factories::recording_factory;
    use crate::http::mock_server::MockServer;
    use crate::http::registry::{Registry, SessionLimits};
    use crate::replay::pacing::NoPacer;

    /// A server whose sessions replay a one-answer recording named `a`.
    async fn server() -> MockServer {
        let recording =
            serde_json::from_value(serde_json::json!({ "format": "reloop.recording/v2", "exchanges": [{ "parts": [{ "type": "text", "text": "hi" }] }] }));
        let recordings = HashMap::from([("a".to_owned(), Arc::new(recording.unwrap()))]);
        let mut registry = Registry::serving(recording_factory(recordings, Arc::new(NoPacer), None), SessionLimits::default());
        registry.log_requests = false;
        MockServer::start(0, Arc::new(registry)).await.unwrap()
    }

    async fn send(server: &MockServer, method: reqwest::Method, path: &str) -> (u16, String) {
        let body = r#"{"model":"m","messages":[{"role":"user","content":"go"}]}"#;
        let url = format!("http://{}{path}", server.addr());
        let response = crate::http::record::proxy::upstream_client()
            .unwrap()
            .request(method, url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// The routes declared once serve the default session, a named one and
    /// a run of a recording, each its own session, as the path names it.
    #[test]
    fn one_route_table_serves_every_session_prefix() {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
            let server = server().await;
            for path in ["/v1/chat/completions", "/s/a/v1/chat/completions", "/s/a/r/1/v1/chat/completions", "/s/a%2Fb/r/2/v1/chat/completions"] {
                let (status, body) = send(&server, reqwest::Method::POST, path).await;
                let expected = if path.contains("%2F") { 404 } else { 200 };
                assert_eq!(status, expected, "{path}: {body}");
            }
            let mut names: Vec<_> = ["default", "a", "a/r/1"].into_iter().filter(|name| server.registry().get(name).is_ok()).collect();
            names.sort_unstable();
            assert_eq!(names, ["a", "a/r/1", "default"]);
            assert_eq!(server.registry().live_sessions(), 3, "`a/b/r/2` names no recording");
            assert_eq!(send(&server, reqwest::Method::GET, "/s/a/r/1/v1/models").await.0, 200);
        });
    }

    /// What no route serves gets the API's JSON error, under a prefix too:
    /// a wrong method (405), an unknown path (404); `DELETE /s/NAME` ends a
    /// live session once.
    #[test]
    fn errors_and_the_end_of_a_session_under_the_prefixes() {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
            let server = server().await;
            let (status, body) = send(&server, reqwest::Method::GET, "/s/a/r/1/v1/chat/completions").await;
            assert_eq!(status, 405);
            assert!(body.contains("wrong method"), "{body}");
            let (status, body) = send(&server, reqwest::Method::POST, "/s/a/v2/nothing").await;
            assert_eq!(status, 404);
            assert!(body.contains("no route"), "{body}");
            assert_eq!(send(&server, reqwest::Method::POST, "/s/a/v1/chat/completions").await.0, 200);
            assert_eq!(send(&server, reqwest::Method::DELETE, "/s/a").await.0, 204);
            assert_eq!(send(&server, reqwest::Method::DELETE, "/s/a").await.0, 404);
        });
    }
}
