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
use reloop_wire::codec::{self, ErrorReply};

/// Headers a request may carry, all together, before 431.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// Headers a request may carry, by count, before 431.
pub const MAX_HEADER_COUNT: usize = 100;

/// The format whose errors a request to `uri` with `headers` expects, by
/// its route or its headers ([`codec::error_format`]).
pub fn error_format(uri: &Uri, headers: &HeaderMap) -> Format {
    codec::error_format(uri.path(), |name| headers.contains_key(name))
}

/// A JSON error response of `format` with `status` and `message`.
pub fn error_response(format: Format, status: StatusCode, message: &str) -> Response {
    let body = codec::error_body(format, ErrorReply::Server { status: status.as_u16(), message });
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// 404 for a path no route serves.
pub async fn not_found(uri: Uri, headers: HeaderMap) -> Response {
    let path = escape_control(uri.path());
    error_response(error_format(&uri, &headers), StatusCode::NOT_FOUND, &format!("reloop: no route for `{path}`; see `reloop serve` for the base URLs"))
}

/// 405 for a route asked with the wrong method.
pub async fn method_not_allowed(uri: Uri, headers: HeaderMap) -> Response {
    let path = escape_control(uri.path());
    error_response(error_format(&uri, &headers), StatusCode::METHOD_NOT_ALLOWED, &format!("reloop: wrong method for `{path}`"))
}

/// 431 for requests with too many or too large headers, before any handler.
pub async fn limit_headers(request: Request<Body>, next: Next) -> Response {
    let headers = request.headers();
    let bytes: usize = headers.iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if headers.len() > MAX_HEADER_COUNT || bytes > MAX_HEADER_BYTES {
        let message =
            format!("reloop: request headers too large ({} headers, {bytes} bytes; the limits are {MAX_HEADER_COUNT} and {MAX_HEADER_BYTES})", headers.len());
        return error_response(error_format(request.uri(), headers), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, &message);
    }
    next.run(request).await
}

/// `text` with control characters and bidi overrides escaped (`\n`,
/// `\x1b`, `\u{202e}`), so a request path can neither forge, colour nor
/// reorder log lines: the report's rule for names, from its one home.
pub use reloop_text::escape_control;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_control("a\nb\u{1b}[31mc\r"), "a\\nb\\x1b[31mc\\r");
        assert_eq!(escape_control("plain-name.1"), "plain-name.1");
    }

    /// A right-to-left override in a path reordered the rest of its log
    /// line on screen (`/s/evil\u{202e}txt.exe` read as `exe.txt`): the
    /// mock escaped C0 and C1 controls only.
    #[test]
    fn bidi_overrides_and_isolates_are_escaped() {
        assert_eq!(escape_control("/s/evil\u{202e}txt.exe"), "/s/evil\\u{202e}txt.exe");
        assert_eq!(escape_control("a\u{2066}b\u{2069}"), "a\\u{2066}b\\u{2069}");
    }

    #[test]
    fn the_error_format_follows_the_api() {
        let messages: Uri = "/s/x/v1/messages".parse().unwrap();
        let chat: Uri = "/v1/chat/completions".parse().unwrap();
        assert_eq!(error_format(&messages, &HeaderMap::new()), Format::Anthropic);
        assert_eq!(error_format(&chat, &HeaderMap::new()), Format::OpenaiChat);
        let mut anthropic = HeaderMap::new();
        anthropic.insert("anthropic-version", "2023-06-01".parse().unwrap());
        assert_eq!(error_format(&chat, &anthropic), Format::Anthropic);
        let gemini: Uri = "/s/x/v1beta/models/g:generateContent".parse().unwrap();
        assert_eq!(error_format(&gemini, &HeaderMap::new()), Format::Gemini);
    }
}
