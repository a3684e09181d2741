//! Errors the server raises on its own (no route, wrong method, a body or
//! headers too large, too many sessions), each in the body shape of the API
//! the client speaks, so the official SDKs raise their typed errors: OpenAI's
//! `{"error":{...}}`, Anthropic's `{"type":"error","error":{...}}` or
//! Google's `{"error":{"code","message","status"}}`, as `application/json`. Also: control characters escaped for log lines.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use reloop_wire::Format;
use reloop_wire::anthropic::AnthropicErrorBody;
use reloop_wire::gemini::GoogleErrorBody;
use reloop_wire::openai_chat::{ApiError, ApiErrorBody};

/// Headers a request may carry, all together, before 431.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// Headers a request may carry, by count, before 431.
pub const MAX_HEADER_COUNT: usize = 100;

/// The API family whose error shape a client expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorShape {
    /// `{"error":{"message","type","param","code"}}`.
    Openai,
    /// `{"type":"error","error":{"type","message"}}`.
    Anthropic,
    /// `{"error":{"code","message","status"}}`.
    Google,
}

impl ErrorShape {
    /// Anthropic for its route (`/messages`) or its headers
    /// (`anthropic-version`), Google for a Gemini route or key header,
    /// OpenAI otherwise.
    pub fn of(uri: &Uri, headers: &HeaderMap) -> Self {
        if headers.contains_key("anthropic-version") || uri.path().trim_end_matches('/').ends_with("/messages") {
            Self::Anthropic
        } else if headers.contains_key(reloop_wire::gemini::API_KEY_HEADER) || uri.path().contains("/v1beta/") {
            Self::Google
        } else {
            Self::Openai
        }
    }

    /// The shape of `format`'s errors.
    pub fn of_format(format: Format) -> Self {
        match format {
            Format::OpenaiChat | Format::OpenaiResponses => Self::Openai,
            Format::Anthropic => Self::Anthropic,
            Format::Gemini => Self::Google,
        }
    }

    /// A JSON error response with `status` and `message`.
    pub fn response(self, status: StatusCode, message: &str) -> Response {
        let body = match self {
            Self::Openai => {
                let error = ApiError { message: message.to_owned(), kind: openai_type(status).to_owned(), param: None, code: None };
                serde_json::to_string(&ApiErrorBody { error })
            }
            Self::Anthropic => serde_json::to_string(&AnthropicErrorBody::new(anthropic_type(status), message)),
            Self::Google => serde_json::to_string(&GoogleErrorBody::with_code(status.as_u16(), message)),
        };
        let body = body.unwrap_or_default();
        (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

fn openai_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    }
}

fn anthropic_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        503 | 529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

/// 404 for a path no route serves.
pub async fn not_found(uri: Uri, headers: HeaderMap) -> Response {
    let path = escape_control(uri.path());
    ErrorShape::of(&uri, &headers).response(StatusCode::NOT_FOUND, &format!("reloop: no route for `{path}`; see `reloop serve` for the base URLs"))
}

/// 405 for a route asked with the wrong method.
pub async fn method_not_allowed(uri: Uri, headers: HeaderMap) -> Response {
    let path = escape_control(uri.path());
    ErrorShape::of(&uri, &headers).response(StatusCode::METHOD_NOT_ALLOWED, &format!("reloop: wrong method for `{path}`"))
}

/// 431 for requests with too many or too large headers, before any handler.
pub async fn limit_headers(request: Request<Body>, next: Next) -> Response {
    let headers = request.headers();
    let bytes: usize = headers.iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if headers.len() > MAX_HEADER_COUNT || bytes > MAX_HEADER_BYTES {
        let message = format!("reloop: request headers too large ({} headers, {bytes} bytes; the limits are {MAX_HEADER_COUNT} and {MAX_HEADER_BYTES})", headers.len());
        return ErrorShape::of(request.uri(), headers).response(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, &message);
    }
    next.run(request).await
}

/// `text` with control characters escaped (`\n`, `\u{1b}`), so a request
/// path cannot forge or colour log lines.
pub fn escape_control(text: &str) -> String {
    text.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_control("a\nb\u{1b}[31mc\r"), "a\\nb\\u{1b}[31mc\\r");
        assert_eq!(escape_control("plain-name.1"), "plain-name.1");
    }

    #[test]
    fn the_shape_follows_the_api() {
        let messages: Uri = "/s/x/v1/messages".parse().unwrap();
        let chat: Uri = "/v1/chat/completions".parse().unwrap();
        assert_eq!(ErrorShape::of(&messages, &HeaderMap::new()), ErrorShape::Anthropic);
        assert_eq!(ErrorShape::of(&chat, &HeaderMap::new()), ErrorShape::Openai);
        let mut anthropic = HeaderMap::new();
        anthropic.insert("anthropic-version", "2023-06-01".parse().unwrap());
        assert_eq!(ErrorShape::of(&chat, &anthropic), ErrorShape::Anthropic);
        let gemini: Uri = "/s/x/v1beta/models/g:generateContent".parse().unwrap();
        assert_eq!(ErrorShape::of(&gemini, &HeaderMap::new()), ErrorShape::Google);
    }
}
