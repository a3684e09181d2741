//! An OTLP/HTTP request body (`POST /v1/traces`, OTLP spec "OTLP/HTTP"):
//! `application/json` or `application/x-protobuf`, gzip-compressed when
//! `Content-Encoding: gzip` says (the collector's `otlphttp` exporter
//! compresses by default), into the request's JSON document. The receiver
//! of `reloop import --otlp-listen` calls it; the HTTP is the CLI's.

use std::io::Read as _;

use serde_json::Value;

/// How a body failed, and which HTTP status says it.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    /// A content type OTLP/HTTP does not define (415).
    UnsupportedType(String),
    /// A body that does not decode (400).
    Bad(String),
}

/// The `ExportTraceServiceRequest` in `body`, at most `limit` bytes once decompressed.
pub fn decode(content_type: Option<&str>, content_encoding: Option<&str>, body: &[u8], limit: usize) -> Result<Value, BodyError> {
    let inflated;
    let body = match content_encoding.map(str::trim) {
        None | Some("" | "identity") => body,
        Some("gzip") => {
            let mut out = Vec::new();
            let read = flate2::read::GzDecoder::new(body).take(limit as u64 + 1).read_to_end(&mut out);
            read.map_err(|error| BodyError::Bad(format!("gzip body does not decompress: {error}")))?;
            if out.len() > limit {
                return Err(BodyError::Bad(format!("body is over {limit} bytes once decompressed")));
            }
            inflated = out;
            &inflated
        }
        Some(other) => return Err(BodyError::UnsupportedType(format!("Content-Encoding {other}: OTLP/HTTP bodies are identity or gzip"))),
    };
    let media = content_type.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match media.as_str() {
        "application/json" => serde_json::from_slice(body).map_err(|error| BodyError::Bad(format!("not JSON: {error}"))),
        "application/x-protobuf" | "application/protobuf" => super::protobuf::request(body).map_err(BodyError::Bad),
        other => Err(BodyError::UnsupportedType(format!("Content-Type {other:?}: OTLP/HTTP bodies are application/json or application/x-protobuf"))),
    }
}

/// The traces whose root span (one without a parent) `request` holds: a
/// trace's root span ends last, so exporters send it last.
pub fn finished_traces(request: &Value) -> Vec<String> {
    let mut unit = 0;
    super::spans::spans_of(request, &mut unit).unwrap_or_default().into_iter().filter(|span| span.parent.is_none()).map(|span| span.trace_id).collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn json_protobuf_and_gzip_bodies_decode_and_other_types_are_refused() {
        let json = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"01","name":"chat"}]}]}]}"#;
        let document = decode(Some("application/json; charset=utf-8"), None, json, 1 << 20).unwrap();
        assert_eq!(finished_traces(&document), ["ab"]);
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gzip.write_all(json).unwrap();
        assert_eq!(decode(Some("application/json"), Some("gzip"), &gzip.finish().unwrap(), 1 << 20).unwrap(), document);
        assert!(matches!(decode(Some("application/json"), Some("gzip"), json, 1 << 20), Err(BodyError::Bad(_))));
        assert!(matches!(decode(Some("text/plain"), None, json, 1 << 20), Err(BodyError::UnsupportedType(_))));
        assert!(matches!(decode(Some("application/x-protobuf"), None, b"\x0a\x05", 1 << 20), Err(BodyError::Bad(_))));
        let protobuf = super::super::protobuf::tests::bytes_field(1, &[]);
        assert_eq!(decode(Some("application/x-protobuf"), None, &protobuf, 1 << 20).unwrap()["resourceSpans"].as_array().map(Vec::len), Some(1));
    }
}
