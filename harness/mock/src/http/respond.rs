//! A session's reply on the wire: the API's error bodies, an injected HTTP
//! fault as written, the recorded bytes of a raw reply, or the reply
//! encoded whole or as SSE frames played at their pace.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use reloop_wire::codec::{self, ErrorReply};
use reloop_wire::reply::ReplyMeta;
use reloop_wire::{Format, Prompt};

use crate::http::raw_reply;
use crate::replay::pacing::Pacer;
use crate::replay::provider_context::ServerSide;
use crate::replay::session::Reply;
use crate::replay::stream_plan::StreamPlan;

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
        Reply::Turn { mut answer, fault, timing, model, request_index, .. } => {
            let meta = ReplyMeta { request_index, model, include_usage: prompt.include_usage, tools: prompt.tools };
            answer.context = side.applied();
            if prompt.stream {
                let frames = codec::encode_reply_stream(format, &answer, &meta);
                stream_response(StreamPlan::new(frames, timing, fault.as_ref(), &format), pacer)
            } else {
                json_response(StatusCode::OK, codec::encode_reply(format, &answer, &meta))
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

/// A JSON body with `status`.
pub(crate) fn json_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
