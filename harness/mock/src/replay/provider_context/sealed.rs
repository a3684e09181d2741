//! The mock's `encrypted_content` of a Responses compaction item. The API's
//! is opaque and only its server reads it; the mock's is opaque to clients
//! too (base64 of JSON behind a version prefix) but carries what the mock
//! needs when the item comes back: the summary the model reads in its place
//! and the items it replaced, so the history can be expanded again (to
//! explain a break, or to check a replay against the full conversation).
//! Nothing is kept server-side, so any session, and any later `serve`, reads it.

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What every sealed compaction starts with.
const PREFIX: &str = "reloop-compaction-v1.";

/// What a compaction item carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sealed {
    /// The mechanical summary the model reads.
    pub summary: String,
    /// The input items it replaced, verbatim.
    pub replaced: Vec<Value>,
}

impl Sealed {
    /// The `encrypted_content` string.
    pub fn seal(&self) -> String {
        let json = serde_json::to_vec(self).expect("plain JSON");
        format!("{PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json))
    }

    /// Reads an `encrypted_content` back.
    ///
    /// # Errors
    ///
    /// The content was not made by this mock (the real API's, or edited),
    /// which the provider would refuse as it refuses another's.
    pub fn open(content: &str) -> Result<Self, String> {
        let refuse = |why: String| format!("compaction item: encrypted_content was not made by this server ({why})");
        let body = content.strip_prefix(PREFIX).ok_or_else(|| refuse(format!("it does not start with `{PREFIX}`")))?;
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(body).map_err(|e| refuse(e.to_string()))?;
        serde_json::from_slice(&json).map_err(|e| refuse(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sealed_compaction_opens_to_what_it_replaced_and_a_foreign_one_is_refused() {
        let sealed = Sealed { summary: "- user: hi".into(), replaced: vec![json!({"role": "user", "content": "hi"})] };
        let content = sealed.seal();
        assert!(!content.contains("hi"), "opaque: {content}");
        assert_eq!(Sealed::open(&content).unwrap(), sealed);
        let error = Sealed::open("gAAAAABo-real-openai-blob").unwrap_err();
        assert!(error.contains("was not made by this server"), "{error}");
    }
}
