//! vcrpy cassettes (`version: 1` YAML): each interaction's recorded
//! response becomes a v2 exchange with its neutral parts and its raw bytes
//! (`reloop_recording::from_wire`), its request kept for divergence
//! matching; the first request gives the scenario skeleton. Bodies come as
//! plain or double-quoted scalars, or `!!binary` (base64 of the gzip bytes
//! when the response says `Content-Encoding: gzip`). Credentials a
//! cassette kept (`Set-Cookie`, `openai-organization`…) and the user's
//! `--redact-*` secrets are stripped as `reloop record` strips them.
//!
//! A model call the provider answered with an error (a 429 before its
//! retry, a 400, a 500 the client gave up on) is replayed as what it was:
//! an HTTP fault with the recorded status, headers and body on the exchange
//! the client tried next, or, when no call succeeded after it, on an
//! exchange standing for the call that failed, so the replay fails as the
//! recorded session did.

use std::io::Read as _;

use base64::Engine as _;
use reloop_recording::capture::api_of;
use reloop_recording::capture::{Redaction, redacted_exchange};
use reloop_recording::fault::FaultSpec;
use reloop_recording::fault::HttpFault;
use reloop_recording::from_wire::WireResponse;
use reloop_recording::{Exchange, RecordedRequest, Recording};
use serde::Deserialize;
use serde_json::Value;

use crate::skeleton::{Skeleton, skeleton_of_request};

#[derive(Deserialize)]
struct Cassette {
    interactions: Vec<Interaction>,
}

#[derive(Deserialize)]
struct Interaction {
    request: Request,
    response: Response,
}

#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    body: Option<String>,
    /// The body as a mapping, as cassettes written with vcrpy's
    /// `decode_compressed_response` helpers keep it (pydantic-ai's Gemini ones).
    #[serde(default)]
    parsed_body: Option<Value>,
    uri: String,
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    body: Option<Body>,
    /// A JSON body as a mapping (see [`Request::parsed_body`]).
    #[serde(default)]
    parsed_body: Option<Value>,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, Vec<String>>,
    status: Status,
}

/// A body: text, or the base64 text of a `!!binary` scalar.
#[derive(Deserialize)]
struct Body {
    string: String,
}

#[derive(Deserialize)]
struct Status {
    code: u16,
}

/// A cassette read into a recording and the skeleton of its first request.
#[derive(Debug, Clone)]
pub struct ImportedCassette {
    /// The v2 recording: one exchange per interaction, neutral and raw.
    pub recording: Recording,
    /// What the first request says about the session.
    pub skeleton: Skeleton,
    /// The interactions left out, each with why: calls that are not model
    /// calls of a known API (`/v1/models`, a tool's own HTTP).
    pub skipped: Vec<String>,
    /// The failed model calls, as the faults that replay them.
    pub faults: Vec<FaultSpec>,
    /// What became of each failed call, for the import's summary.
    pub failed: Vec<String>,
}

/// Failed calls in a row, waiting for the exchange whose attempts they were.
#[derive(Default)]
struct Failures {
    pending: Vec<HttpFault>,
    faults: Vec<FaultSpec>,
    failed: Vec<String>,
}

impl Failures {
    /// The failed calls so far become faults on `exchange`, in order, one
    /// per run of equal answers; `last_times` raises the last run's count
    /// (the session ended failing: every retry of the replay fails too).
    fn answer_with(&mut self, exchange: usize, last_times: u32) {
        let mut runs: Vec<(HttpFault, u32)> = Vec::new();
        for fault in self.pending.drain(..) {
            match runs.last_mut() {
                Some((same, times)) if *same == fault => *times += 1,
                _ => runs.push((fault, 1)),
            }
        }
        if let Some((_, times)) = runs.last_mut() {
            *times = (*times).max(last_times);
        }
        self.faults.extend(runs.into_iter().map(|(http, times)| FaultSpec {
            exchange,
            times,
            http: Some(http),
            cut_after_events: None,
            stall: None,
            garble_after_events: None,
            truncate_arguments: false,
            context_length_exceeded: false,
            stream_error: None,
        }));
    }
}

/// Reads a cassette into exchanges that replay neutral (set `replay` on
/// them for the byte-for-byte recording); `redaction` is what is stripped.
pub fn import_cassette(text: &str, redaction: &Redaction) -> Result<ImportedCassette, String> {
    // `!!binary` bodies arrive as their base64 text, decoded below.
    let options = serde_saphyr::options! { ignore_binary_tag_for_string: true };
    let cassette: Cassette = serde_saphyr::from_str_with_options(text, options).map_err(|e| format!("not a vcrpy cassette: {e}"))?;
    let mut exchanges = Vec::new();
    let mut skeleton = None;
    let mut skipped = Vec::new();
    let mut failures = Failures::default();
    for (index, interaction) in cassette.interactions.iter().enumerate() {
        let at = |e: String| format!("interaction {index}: {e}");
        let path = uri_path(&interaction.request.uri);
        let Some(api) = api_of(&path) else {
            skipped.push(at(format!("`{path}` is not a model call of a known API")));
            continue;
        };
        let status = interaction.response.status.code;
        let parsed = interaction.request.parsed_body.as_ref().map(Value::to_string);
        let request_text = parsed.map(Ok).or_else(|| interaction.request.body.as_deref().map(request_text)).transpose().map_err(at)?;
        let body: Value = request_text
            .map(|text| redaction.text(&text))
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| at(format!("request body: {e}")))?
            .unwrap_or(Value::Null);
        skeleton.get_or_insert_with(|| skeleton_of_request(&path, &body));
        let headers: Vec<(String, String)> =
            interaction.response.headers.iter().flat_map(|(name, values)| values.iter().map(move |v| (name.clone(), v.clone()))).collect();
        let bytes = match (&interaction.response.body, &interaction.response.parsed_body) {
            (Some(body), _) => body_bytes(&body.string).map_err(at)?,
            (None, Some(parsed)) => parsed.to_string().into_bytes(),
            (None, None) => return Err(at("response without `body` or `parsed_body`".into())),
        };
        let gzip = headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("content-encoding") && v.eq_ignore_ascii_case("gzip"));
        let decoded = if gzip { gunzip(&bytes).map_err(at)? } else { bytes.clone() };
        if !(200..300).contains(&status) {
            failures.failed.push(at(format!("status {status}: a failed call, replayed as a fault")));
            failures.pending.push(failed_call(status, &headers, &decoded, redaction));
            continue;
        }
        failures.answer_with(exchanges.len(), 0);
        let response = WireResponse { status: interaction.response.status.code, headers: &headers, body: &bytes };
        let mut exchange: Exchange = redacted_exchange(api, response, &decoded, redaction).map_err(|e| at(e.to_string()))?;
        exchange.request = Some(RecordedRequest { path, headers: Default::default(), body });
        exchanges.push(exchange);
    }
    let skeleton = skeleton.ok_or_else(|| match skipped.is_empty() {
        true => "the cassette has no interactions".to_owned(),
        false => format!("the cassette has no model call of a known API: {}", skipped.join("; ")),
    })?;
    if !failures.pending.is_empty() {
        // The session ended failing: an exchange stands for the call, and
        // its fault answers every attempt the replay's retries make.
        failures.answer_with(exchanges.len(), crate::convert::RETRYABLE_ATTEMPTS);
        let status = failures.faults.last().and_then(|fault| fault.http.as_ref()).map_or(0, |http| http.status);
        exchanges.push(Exchange {
            parts: vec![crate::convert::text_part(format!("{} (status {status})", crate::convert::FAILED_CALL_TEXT))],
            ..Exchange::default()
        });
    }
    let Failures { faults, failed, .. } = failures;
    Ok(ImportedCassette { recording: Recording { exchanges, ..Recording::default() }, skeleton, skipped, faults, failed })
}

/// A failed call's answer as a fault: its status, the headers a client
/// acts on (`retry-after` and the rate-limit ones, redacted as recorded
/// headers are) and its body, redacted.
fn failed_call(status: u16, headers: &[(String, String)], body: &[u8], redaction: &Redaction) -> HttpFault {
    let headers = redaction
        .headers(headers)
        .into_iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value))
        .filter(|(name, _)| name == "retry-after" || name == "retry-after-ms" || name.contains("ratelimit") || name == "x-should-retry")
        .collect();
    let body = String::from_utf8_lossy(&redaction.bytes(body)).into_owned();
    HttpFault { status, headers, body: (!body.is_empty()).then_some(body) }
}

/// Whether `text` looks like a vcrpy cassette.
pub fn is_cassette(text: &str) -> bool {
    text.lines().any(|line| line.starts_with("interactions:"))
}

fn uri_path(uri: &str) -> String {
    let after_scheme = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    let path = after_scheme.find('/').map_or("/", |at| &after_scheme[at..]);
    path.split('?').next().unwrap_or(path).to_owned()
}

/// A request body as text: JSON as recorded, or a `!!binary` body (base64,
/// gzip-compressed or not) decoded.
fn request_text(body: &str) -> Result<String, String> {
    if serde_json::from_str::<serde::de::IgnoredAny>(body).is_ok() {
        return Ok(body.to_owned());
    }
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(body.split_whitespace().collect::<String>()) else {
        return Ok(body.to_owned());
    };
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) { gunzip(&bytes)? } else { bytes };
    String::from_utf8(bytes).map_err(|e| format!("request body: binary, not UTF-8 text: {e}"))
}

fn body_bytes(text: &str) -> Result<Vec<u8>, String> {
    if looks_base64_gzip(text) {
        base64::engine::general_purpose::STANDARD.decode(text.split_whitespace().collect::<String>()).map_err(|e| format!("binary body: {e}"))
    } else {
        Ok(text.as_bytes().to_vec())
    }
}

/// Base64 of gzip starts with `H4sI` (bytes 1f 8b 08).
fn looks_base64_gzip(text: &str) -> bool {
    text.trim_start().starts_with("H4sI")
}

fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut out).map_err(|e| format!("gzip body: {e}"))?;
    Ok(out)
}
