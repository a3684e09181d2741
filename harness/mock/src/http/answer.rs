//! A model call answered by its session: the session found (or the API's
//! error), the provider's context management applied, the reply sent and
//! the request logged for `reloop serve`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use reloop_wire::Format;
use reloop_wire::codec::{self, ErrorReply};

use crate::http::api_errors::{error_response, escape_control};
use crate::http::call::Call;
use crate::http::dot_segments::refusal;
use crate::http::registry::{Registry, SessionRefusal};
use crate::http::respond::{json_response, respond};
use crate::replay::provider_context::{self, ServerSide};
use crate::replay::session::{Caching, Managed, ReplayRequest, Reply, RequestRecord, Session};

/// The session `name` names, or the API's error for a `format` client.
fn session_for(registry: &Registry, name: &str, format: Format) -> Result<Arc<Session>, Box<Response>> {
    if let Some(message) = refusal(name) {
        return Err(Box::new(json_response(StatusCode::BAD_REQUEST, codec::error_body(format, ErrorReply::InvalidRequest(&message)))));
    }
    registry.get(name).map_err(|refusal| match refusal {
        SessionRefusal::Unknown => {
            let message = format!("reloop: no replay session named `{}`", escape_control(name));
            Box::new(json_response(StatusCode::NOT_FOUND, codec::error_body(format, ErrorReply::InvalidRequest(&message))))
        }
        SessionRefusal::Full => Box::new(error_response(
            format,
            StatusCode::SERVICE_UNAVAILABLE,
            "reloop: too many live sessions; end some (DELETE /s/NAME) or wait for idle ones to expire",
        )),
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

pub(crate) fn answer(registry: &Registry, name: &str, call: Call) -> Response {
    let format = call.format;
    let body = match &call.body {
        Ok(body) => body,
        Err(rejection) => return error_response(format, rejection.status(), &format!("reloop: {}", rejection.body_text())),
    };
    let session = match session_for(registry, name, format) {
        Ok(session) => session,
        Err(response) => return *response,
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
    let paused = side.compaction.as_ref().filter(|c| c.returned.pause).map(|c| c.summary.as_str());
    let managed = Managed { note: side.note.as_deref(), compaction: paused, history: prepared.history.as_ref() };
    let reply = session.handle(ReplayRequest { prompt: &prompt, caching: &caching, managed, live: None });
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
pub(crate) fn compact(registry: &Registry, name: &str, body: Result<Bytes, BytesRejection>) -> Response {
    let format = Format::OpenaiResponses;
    let invalid = |message: &str| json_response(StatusCode::BAD_REQUEST, codec::error_body(format, ErrorReply::InvalidRequest(message)));
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return error_response(format, rejection.status(), &format!("reloop: {}", rejection.body_text())),
    };
    let session = match session_for(registry, name, format) {
        Ok(session) => session,
        Err(response) => return *response,
    };
    let compacted =
        serde_json::from_slice(&body).map_err(|e| format!("could not parse the JSON body of your request: {e}")).and_then(provider_context::responses::compact);
    let (prompt, output, summary) = match compacted {
        Ok(compacted) => compacted,
        Err(message) => return invalid(&message),
    };
    let note = format!("/responses/compact: {} items compacted", prompt.messages.len());
    let managed = Managed { note: Some(&note), compaction: Some(&summary), history: None };
    let reply = session.handle(ReplayRequest { managed, ..ReplayRequest::new(&prompt) });
    match (reply, log_request(registry, name, format, &session)) {
        (Reply::Turn { .. }, Some(record)) => json_response(StatusCode::OK, provider_context::responses::compact_body(&output, &record).to_string()),
        (reply, _) => respond(reply, prompt, format, session.pacer(), &ServerSide::default()),
    }
}
