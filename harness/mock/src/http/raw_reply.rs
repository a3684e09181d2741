//! Raw replay: an exchange's recorded bytes sent again byte for byte, with
//! its recorded status and headers. Stream faults still apply (the events
//! are the frames a fault cuts, stalls or garbles), and the request went
//! through the same matching and divergence checks as a neutral one.

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use reloop_wire::Format;

use reloop_recording::RawResponse;

/// Headers that describe one connection, not the response: hyper sets its own.
const HOP_BY_HOP: [&str; 5] = ["connection", "content-length", "keep-alive", "transfer-encoding", "date"];

/// Whether `raw` can answer a request in `format` (streamed or not): the
/// bytes speak one API in one mode, anything else is rendered from the parts.
pub fn fits(raw: &RawResponse, format: Format, stream: bool) -> bool {
    raw.api == format.recorded_name() && stream == is_stream(raw)
}

/// Whether the bytes are a stream: split into events, or kept whole as an
/// encoded (gzip) event stream, which is sent whole, still encoded.
fn is_stream(raw: &RawResponse) -> bool {
    let event_stream = raw.headers.iter().any(|(name, value)| name.eq_ignore_ascii_case("content-type") && value.starts_with("text/event-stream"));
    !raw.events.is_empty() || event_stream
}

/// Gives `response` the recorded status and headers (hop-by-hop ones aside).
pub fn with_recorded_head(mut response: Response, raw: &RawResponse) -> Response {
    *response.status_mut() = StatusCode::from_u16(raw.status).unwrap_or(StatusCode::OK);
    let recorded: Vec<(HeaderName, HeaderValue)> = raw
        .headers
        .iter()
        .filter(|(name, _)| !HOP_BY_HOP.contains(&name.to_ascii_lowercase().as_str()))
        .filter_map(|(name, value)| Some((HeaderName::try_from(name.as_str()).ok()?, HeaderValue::try_from(value.as_str()).ok()?)))
        .collect();
    let headers = response.headers_mut();
    for (name, _) in &recorded {
        headers.remove(name);
    }
    for (name, value) in recorded {
        headers.append(name, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_recording::RawBody;

    fn raw(events: Vec<String>, body: Option<RawBody>) -> RawResponse {
        RawResponse {
            api: "anthropic".into(),
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/event-stream".into()),
                ("Transfer-Encoding".into(), "chunked".into()),
                ("set-cookie".into(), "a".into()),
                ("set-cookie".into(), "b".into()),
            ],
            body,
            events,
        }
    }

    #[test]
    fn only_the_recorded_api_and_mode_fit() {
        let stream = raw(vec!["data: {}\n\n".into()], None);
        assert!(fits(&stream, Format::Anthropic, true));
        assert!(!fits(&stream, Format::Anthropic, false));
        assert!(!fits(&stream, Format::OpenaiChat, true));
        let mut whole = raw(Vec::new(), Some(RawBody::Text("{}".into())));
        whole.headers.retain(|(name, _)| name != "Content-Type");
        assert!(fits(&whole, Format::Anthropic, false));
        assert!(!fits(&whole, Format::Anthropic, true));
    }

    /// A gzip-encoded stream is kept as one base64 body; it was rendered
    /// from its parts instead of sent as recorded.
    #[test]
    fn an_encoded_stream_kept_whole_fits_a_stream() {
        let gzip = raw(Vec::new(), Some(RawBody::Base64 { base64: "H4sI".into() }));
        assert!(fits(&gzip, Format::Anthropic, true));
        assert!(!fits(&gzip, Format::Anthropic, false));
    }

    #[test]
    fn recorded_headers_replace_ours_except_hop_by_hop() {
        let mut response = Response::new(axum::body::Body::empty());
        response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
        let response = with_recorded_head(response, &raw(Vec::new(), None));
        let headers = response.headers();
        assert_eq!(headers.get_all("content-type").iter().collect::<Vec<_>>(), ["text/event-stream"]);
        assert_eq!(headers.get_all("set-cookie").iter().count(), 2);
        assert!(headers.get("transfer-encoding").is_none());
    }
}
