//! vcrpy cassettes (`version: 1` YAML): each interaction's recorded
//! response becomes a v2 exchange with its neutral parts and its raw bytes
//! (`reloop_mock::recording::from_wire`), its request kept for divergence
//! matching; the first request gives the scenario skeleton. Bodies come as
//! plain or double-quoted scalars, or `!!binary` (base64 of the gzip bytes
//! when the response says `Content-Encoding: gzip`). Credentials a
//! cassette kept (`Set-Cookie`, `openai-organization`…) and the user's
//! `--redact-*` secrets are stripped as `reloop record` strips them.

use std::io::Read as _;

use base64::Engine as _;
use reloop_mock::record::capture::api_of;
use reloop_mock::record::{Redaction, redacted_exchange};
use reloop_mock::recording::from_wire::WireResponse;
use reloop_mock::recording::{Exchange, RecordedRequest, Recording};
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
    /// calls of a known API (`/v1/models`, a tool's own HTTP), and failed
    /// calls (a 429 before its retry), whose answers no replay should serve
    /// as the model's turn.
    pub skipped: Vec<String>,
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
    for (index, interaction) in cassette.interactions.iter().enumerate() {
        let at = |e: String| format!("interaction {index}: {e}");
        let path = uri_path(&interaction.request.uri);
        let Some(api) = api_of(&path) else {
            skipped.push(at(format!("`{path}` is not a model call of a known API")));
            continue;
        };
        let status = interaction.response.status.code;
        if !(200..300).contains(&status) {
            skipped.push(at(format!("status {status}: a failed call (the retry that follows, if any, is kept)")));
            continue;
        }
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
        let response = WireResponse { status: interaction.response.status.code, headers: &headers, body: &bytes };
        let mut exchange: Exchange = redacted_exchange(api, response, &decoded, redaction).map_err(|e| at(e.to_string()))?;
        exchange.request = Some(RecordedRequest { path, headers: Default::default(), body });
        exchanges.push(exchange);
    }
    let skeleton = skeleton.ok_or_else(|| match skipped.is_empty() {
        true => "the cassette has no interactions".to_owned(),
        false => format!("the cassette has no successful model call: {}", skipped.join("; ")),
    })?;
    Ok(ImportedCassette { recording: Recording { exchanges, ..Recording::default() }, skeleton, skipped })
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
