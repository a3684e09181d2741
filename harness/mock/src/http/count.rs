//! Token counting endpoints (Anthropic's `count_tokens`, Gemini's
//! `countTokens`): the prompt counted by the session's tokenizer, as the
//! server counts every request; nothing is replayed or consumed.

use axum::http::StatusCode;
use axum::response::Response;
use reloop_wire::{Format, codec};

use crate::http::api_errors::{error_response, escape_control};
use crate::http::registry::Registry;
use crate::http::respond::json_response;

/// `POST .../v1/messages/count_tokens` (Anthropic): the prompt counted by
/// the session's tokenizer, as the server counts every request; nothing is
/// replayed or consumed.
pub(crate) fn count_tokens(registry: &Registry, name: &str, body: &[u8]) -> Response {
    count_prompt(registry, name, Format::Anthropic, body, "", |tokens| serde_json::json!({ "input_tokens": tokens }))
}

/// Counts the prompt of `body` (a `format` count request) with the session's
/// tokenizer and answers `reply(tokens)`.
pub(crate) fn count_prompt(registry: &Registry, name: &str, format: Format, body: &[u8], model: &str, reply: impl Fn(u64) -> serde_json::Value) -> Response {
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
