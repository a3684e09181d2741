//! Going live in the middle of a replay (`reloop run --upstream`,
//! `docs/rerecord.md`): a layer in front of the routes asks the session
//! whether a model call goes live
//! ([`crate::replay::session::Session::goes_live`]); if it does, the
//! call is forwarded to the upstream (an OpenAI-, Anthropic- or
//! Gemini-compatible server), its complete answer becomes a redacted
//! exchange exactly as `reloop record` keeps one
//! ([`reloop_recording::capture::exchange_of`]), and the session serves that exchange
//! as if it were recorded
//! ([`crate::replay::session::Session::handle`], with the live exchange): counted, cached and
//! rendered the same way, so a replay of the re-recording serves the same.
//!
//! The client's credentials never travel on: the key comes from the
//! environment ([`InjectedSecrets`], read once) and is added to the
//! upstream request only. The upstream's answer is scrubbed of every
//! spelling of that key the moment it arrives ([`upstream`]), before it is
//! parsed, recorded, served or logged, so it is in nothing the session
//! keeps and in no file a run writes. No redirect is followed, and every
//! wait on the upstream is bounded in real time ([`bounds`]).

mod bounds;
pub(crate) mod upstream;

pub use bounds::LiveBounds;
pub use upstream::Upstream;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use reloop_recording::capture::{Observed, SECRET_HEADERS, api_of, exchange_of};
use reloop_recording::session_path::session_named;
use reloop_wire::Format;
use reloop_wire::gemini::Action;

pub use crate::replay::trigger::{RecordMode, Trigger};

use crate::http::api_errors::error_response;
use crate::http::call::{Call, anthropic_beta, parse};
use crate::http::record::proxy::forwarded;
use crate::http::registry::Registry;
use crate::http::respond::respond;
use crate::replay::provider_context::ServerSide;
use crate::replay::session::{Managed, ReplayRequest};
use upstream::{Failed, forward};

/// The largest request body a live call may have (as `reloop record`'s).
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// The layer in front of the routes: a model call its session sends live
/// is forwarded and served from the upstream's answer; everything else
/// passes to the routes unchanged.
pub async fn intercept(State(registry): State<Arc<Registry>>, request: Request, next: Next) -> Response {
    let Some(upstream) = registry.live().cloned() else { return next.run(request).await };
    let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let Some(format) = api_of(&path).filter(|_| request.method() == axum::http::Method::POST) else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_REQUEST_BYTES).await else {
        return error_response(format, StatusCode::PAYLOAD_TOO_LARGE, &format!("reloop: request body over {MAX_REQUEST_BYTES} bytes"));
    };
    let session_name = session_named(&path);
    let call = call_of(format, &path, anthropic_beta(&parts.headers), body.clone());
    let live = registry.get(&session_name).ok().and_then(|session| {
        let (prompt, caching) = parse(&call, &body).ok()?;
        session.goes_live(&prompt, &caching, upstream.trigger()).then_some((session, prompt, caching))
    });
    let Some((session, prompt, caching)) = live else { return next.run(Request::from_parts(parts, Body::from(body))).await };
    let observed = match forward(&upstream, format, &path, &parts.headers, body).await {
        Ok(observed) => observed,
        Err(Failed { status, message, unreachable }) => {
            if unreachable {
                session.note_upstream_unreachable(&message);
            }
            return error_response(format, status, &message);
        }
    };
    match exchange_of(&observed, upstream.redaction()) {
        Ok(Some(exchange)) => {
            let reply = session.handle(ReplayRequest { prompt: &prompt, caching: &caching, managed: Managed::default(), live: Some(exchange) });
            registry.went_live(&session_name, &session).await;
            respond(reply, prompt, format, session.pacer(), &ServerSide::default())
        }
        Ok(None) => passed_on(&observed),
        Err(error) => error_response(format, StatusCode::BAD_GATEWAY, &format!("reloop: the upstream's answer could not be read: {error}")),
    }
}

/// The call a route would make of `path`: Gemini's model and streaming
/// come from the path, the others' from the body.
fn call_of(format: Format, path: &str, beta: Option<String>, body: Bytes) -> Call {
    let action = path.split('?').next().unwrap_or_default().rsplit('/').next().and_then(Action::parse);
    let (model, stream) = match action {
        Some(Action::Generate { model, stream }) => (Some(model), stream),
        _ => (None, false),
    };
    Call { format, model, stream, beta, body: Ok(body) }
}

/// An answer that is not a model turn (an error status): passed to the
/// client as the upstream gave it (already scrubbed of the key it was
/// sent: an error may quote it, and an agent may print it into the
/// report), without its credentials headers; the session keeps nothing of it.
fn passed_on(observed: &Observed) -> Response {
    let body = String::from_utf8_lossy(&observed.response_body).into_owned();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::from_u16(observed.status).unwrap_or(StatusCode::BAD_GATEWAY);
    for (name, value) in &observed.response_headers {
        let name = name.to_ascii_lowercase();
        if forwarded(&name)
            && !SECRET_HEADERS.contains(&name.as_str())
            && let (Ok(name), Ok(value)) = (axum::http::HeaderName::try_from(name), axum::http::HeaderValue::try_from(value.as_str()))
        {
            response.headers_mut().append(name, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_answer_passes_on_without_credential_headers() {
        let observed = Observed {
            path: "/v1/chat/completions".into(),
            request_headers: Vec::new(),
            request_body: Bytes::new(),
            status: 401,
            response_headers: vec![("set-cookie".into(), "s=1".into()), ("x-request-id".into(), "r".into())],
            response_body: br#"{"error":"bad key"}"#.to_vec(),
        };
        let response = passed_on(&observed);
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert!(response.headers().get("set-cookie").is_none() && response.headers().contains_key("x-request-id"));
    }
}
