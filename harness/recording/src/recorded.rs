//! What a v2 exchange keeps of the real response beside its parts: the
//! usage the provider reported, the raw bytes (served byte for byte in raw
//! mode) and the request it answered.

use std::collections::BTreeMap;

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether an exchange is answered from its parts or its raw bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplayMode {
    /// Rendered from the parts in the client's API (default).
    #[default]
    Neutral,
    /// The recorded bytes, byte for byte (the client must speak the recorded API).
    Raw,
}

/// The recorded HTTP response, enough to send it again byte for byte.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawResponse {
    /// The API it was recorded from: `openai_chat`, `openai_responses` or `anthropic`.
    pub api: String,
    /// HTTP status.
    #[serde(default = "ok_status", skip_serializing_if = "is_ok_status")]
    pub status: u16,
    /// Response headers in order (secrets stripped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// A whole (not streamed) body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<RawBody>,
    /// A stream: each SSE event's bytes, its blank-line boundary included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
}

fn ok_status() -> u16 {
    200
}

fn is_ok_status(status: &u16) -> bool {
    *status == 200
}

/// A response body: text as is, other bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawBody {
    /// UTF-8 text, sent as is.
    Text(String),
    /// Bytes that are not UTF-8 (a gzip body, say).
    Base64 {
        /// The bytes in standard base64.
        base64: String,
    },
}

impl RawBody {
    /// The body of `bytes`: text when they are UTF-8, else base64.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::Text(text.to_owned()),
            Err(_) => Self::Base64 { base64: base64::engine::general_purpose::STANDARD.encode(bytes) },
        }
    }

    /// The bytes to send; `Err` names bad base64.
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Self::Text(text) => Ok(text.clone().into_bytes()),
            Self::Base64 { base64 } => base64::engine::general_purpose::STANDARD.decode(base64).map_err(|e| format!("raw.body.base64: {e}")),
        }
    }
}

/// The request an exchange answered, as recorded (secrets stripped): the
/// source of divergence checks and of a scenario skeleton.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedRequest {
    /// The request path (`/v1/chat/completions`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// Selected request headers (secrets stripped).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The JSON body.
    #[serde(default)]
    pub body: serde_json::Value,
}
