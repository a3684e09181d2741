//! Real traffic kept as a recording: an observed request and response (what
//! `reloop record`'s proxy or a live call saw) turned into a v2 exchange,
//! the neutral parts and raw bytes through [`from_wire`](crate::from_wire),
//! plus the request for divergence matching and the scenario skeleton, with
//! the secrets [`Redaction`] names stripped first (and the keys reloop sends,
//! [`InjectedSecrets`]); [`url_shown`] and [`path_shown`] keep secrets in URLs
//! out of what is printed.

mod redact;
mod secrets;
mod shown;

use std::collections::BTreeMap;

use bytes::Bytes;
use reloop_wire::Format;
use serde_json::Value;

pub use redact::{Redaction, SECRET_HEADERS};
pub use secrets::{InjectedSecrets, REDACTED};
pub use shown::{path_shown, url_shown};

use crate::from_wire::{FromWireError, WireResponse, exchange_from_wire};
use crate::{Exchange, RecordedRequest};

/// One request and its complete answer, as they passed (not redacted).
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// The request's path and query.
    pub path: String,
    /// The request headers, in order.
    pub request_headers: Vec<(String, String)>,
    /// The request body.
    pub request_body: Bytes,
    /// The upstream's status.
    pub status: u16,
    /// The upstream's headers, in order.
    pub response_headers: Vec<(String, String)>,
    /// The upstream's body, every chunk joined.
    pub response_body: Vec<u8>,
}

/// Request headers kept in a recording (all others are left out, whatever
/// they are: an unknown header may be a credential).
const KEPT_REQUEST_HEADERS: [&str; 5] = ["content-type", "anthropic-version", "anthropic-beta", "openai-beta", "user-agent"];

/// The API a request path speaks, if it is a model call.
pub fn api_of(path: &str) -> Option<Format> {
    Format::of_path(path).filter(|_| !path.split('?').next().unwrap_or_default().ends_with(":countTokens"))
}

/// The exchange of a model call answered with success, redacted
/// ([`redacted_exchange`]); `None` for other requests (model lists, token
/// counts) and error answers.
pub fn exchange_of(observed: &Observed, redaction: &Redaction) -> Result<Option<Exchange>, FromWireError> {
    let Some(api) = api_of(&observed.path).filter(|_| (200..300).contains(&observed.status)) else { return Ok(None) };
    let response = WireResponse { status: observed.status, headers: &observed.response_headers, body: &observed.response_body };
    let mut exchange = redacted_exchange(api, response, &observed.response_body, redaction)?;
    let request_body = redaction.text(&String::from_utf8_lossy(&observed.request_body));
    let request_headers: BTreeMap<String, String> = observed
        .request_headers
        .iter()
        .filter(|(name, _)| KEPT_REQUEST_HEADERS.iter().any(|kept| kept.eq_ignore_ascii_case(name)) && !redaction.strips_header(name))
        .map(|(name, value)| (name.to_ascii_lowercase(), redaction.text(value)))
        .collect();
    let path = observed.path.split('?').next().unwrap_or_default().to_owned();
    let body = serde_json::from_str(&request_body).unwrap_or(Value::String(request_body));
    exchange.request = Some(RecordedRequest { path, headers: request_headers, body });
    Ok(Some(exchange))
}

/// The exchange of `response` (an answer of `api`, `decoded` its body
/// after any `Content-Encoding`) with the stripped headers gone and every
/// body-pattern match redacted, in the bytes and in the parts joined from
/// them ([`Redaction::exchange`]). Its `raw` is `None` when the bytes
/// cannot be redacted faithfully: an encoded body that matched, or a
/// stream whose output matched (a stream cuts its output into deltas that
/// patterns run per event cannot see whole).
pub fn redacted_exchange(api: Format, response: WireResponse<'_>, decoded: &[u8], redaction: &Redaction) -> Result<Exchange, FromWireError> {
    let headers = redaction.headers(response.headers);
    let redacted = redaction.bytes(decoded);
    let encoded = response.body != decoded;
    let sent = WireResponse { status: response.status, headers: &headers, body: if encoded { response.body } else { &redacted } };
    let mut exchange = redaction.exchange(exchange_from_wire(api, sent, &redacted)?);
    let streamed = exchange.raw.as_ref().is_some_and(|raw| !raw.events.is_empty());
    let unfaithful = (encoded && redacted != decoded)
        || (streamed
            && redaction.redacts_bodies()
            && redaction.finds_in_parts(&exchange_from_wire(api, WireResponse { headers: &headers, ..response }, decoded)?));
    if unfaithful {
        exchange.raw = None;
    }
    Ok(exchange)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(path: &str, status: u16) -> Observed {
        with_response(
            path,
            status,
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"key sk-live1\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
        )
    }

    fn with_response(path: &str, status: u16, body: &str) -> Observed {
        Observed {
            path: path.into(),
            request_headers: vec![
                ("x-api-key".into(), "sk-ant-secret".into()),
                ("anthropic-version".into(), "2023-06-01".into()),
                ("x-trace".into(), "t".into()),
            ],
            request_body: br#"{"model":"m","messages":[{"role":"user","content":"use sk-live1"}]}"#.to_vec().into(),
            status,
            response_headers: vec![("content-type".into(), "text/event-stream".into()), ("anthropic-organization-id".into(), "org".into())],
            response_body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_model_call_becomes_a_redacted_exchange() {
        let redaction = Redaction::new(&[], &["sk-live[0-9]+".into()]).unwrap();
        let exchange = exchange_of(&observed("/s/a/v1/messages", 200), &redaction).unwrap().unwrap();
        assert_eq!(exchange.text(), "key [REDACTED]");
        let request = exchange.request.as_ref().unwrap();
        assert_eq!(request.path, "/s/a/v1/messages");
        assert_eq!(request.headers.keys().collect::<Vec<_>>(), ["anthropic-version"]);
        let written = serde_json::to_string(&exchange).unwrap();
        for secret in ["sk-ant-secret", "sk-live1", "anthropic-organization-id"] {
            assert!(!written.contains(secret), "{secret} kept");
        }
    }

    /// An Anthropic stream whose text and tool arguments each carry
    /// `sk-live1234` split over three deltas.
    fn split_secret_stream() -> String {
        let event = |kind: &str, data: serde_json::Value| format!("event: {kind}\ndata: {data}\n\n");
        let delta = |index: u32, delta: serde_json::Value| {
            event("content_block_delta", serde_json::json!({ "type": "content_block_delta", "index": index, "delta": delta }))
        };
        let text = |t: &str| delta(0, serde_json::json!({ "type": "text_delta", "text": t }));
        let json = |j: &str| delta(1, serde_json::json!({ "type": "input_json_delta", "partial_json": j }));
        [
            event("message_start", serde_json::json!({ "type": "message_start", "message": { "id": "msg_1", "model": "m", "content": [], "usage": { "input_tokens": 3, "output_tokens": 1 } } })),
            event("content_block_start", serde_json::json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } })),
            text("my key is sk-"),
            text("live"),
            text("1234"),
            event("content_block_start", serde_json::json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "tool_use", "id": "toolu_1", "name": "write", "input": {} } })),
            json(r#"{"key": "sk-"#),
            json("live"),
            json(r#"1234"}"#),
            event("message_delta", serde_json::json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" }, "usage": { "output_tokens": 9 } })),
        ]
        .concat()
    }

    #[test]
    fn a_secret_split_across_deltas_is_redacted_in_the_parts_and_the_raw_bytes_dropped() {
        let redaction = Redaction::new(&[], &["sk-live[0-9]+".into()]).unwrap();
        let exchange = exchange_of(&with_response("/v1/messages", 200, &split_secret_stream()), &redaction).unwrap().unwrap();
        let written = serde_json::to_string(&exchange).unwrap();
        assert!(!written.contains("sk-live1234"), "{written}");
        assert!(written.contains("my key is [REDACTED]") && written.contains(r#"[REDACTED]"#), "{written}");
        assert!(exchange.raw.is_none(), "raw bytes kept a secret that only the joined parts show");
        assert!(!redaction.finds(&written));
    }

    #[test]
    fn raw_bytes_stay_when_the_output_carried_no_secret() {
        let redaction = Redaction::new(&[], &["use sk-live[0-9]+".into()]).unwrap();
        let exchange = exchange_of(&observed("/v1/messages", 200), &redaction).unwrap().unwrap();
        assert!(exchange.raw.is_some());
        assert!(!serde_json::to_string(&exchange).unwrap().contains("use sk-live1"));
    }

    /// What `reloop record` keeps of fields it does not model: a block's
    /// `caller` and the message's `container`, redacted like the rest (a
    /// body pattern inside them is replaced), never a key or header.
    #[test]
    fn a_recorded_exchange_keeps_what_reloop_does_not_model_redacted() {
        let body = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"content\":[],\"container\":{\"id\":\"sk-live9\"},\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{},\"caller\":{\"type\":\"direct\"}}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":2}}\n\n",
        );
        let redaction = Redaction::new(&[], &["sk-live[0-9]+".into()]).unwrap();
        let exchange = exchange_of(&with_response("/v1/messages", 200, body), &redaction).unwrap().unwrap();
        let extra = exchange.extra.as_ref().unwrap();
        assert_eq!((extra.api.as_str(), &extra.response["container"]), ("anthropic", &serde_json::json!({ "id": "[REDACTED]" })));
        assert_eq!(exchange.tool_calls().next().unwrap().extra["caller"], serde_json::json!({ "type": "direct" }));
        let written = serde_json::to_string(&exchange).unwrap();
        for secret in ["sk-live9", "sk-ant-secret", "x-api-key"] {
            assert!(!written.contains(secret), "{secret} kept: {written}");
        }
    }

    #[test]
    fn other_requests_and_errors_are_not_exchanges() {
        let redaction = Redaction::new(&[], &[]).unwrap();
        assert!(exchange_of(&observed("/v1/models", 200), &redaction).unwrap().is_none());
        assert!(exchange_of(&observed("/v1/messages", 429), &redaction).unwrap().is_none());
    }
}
