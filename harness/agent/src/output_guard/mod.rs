//! Guards on tool output before it enters the context (ZeroClaw, Codex):
//! credential scrubbing ([`scrub`]) and head-and-tail truncation
//! ([`truncate`]). Both run on every real tool result, in that order, so a
//! secret is masked even in the part truncation keeps.

pub mod scrub;
pub mod truncate;

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use scrub::scrub_credentials;
pub use truncate::{Truncated, Truncation, TruncationUnit, truncate_middle};

/// The scenario's `loop.output_guards`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OutputGuards {
    /// Mask credentials in tool output (default on, as in ZeroClaw).
    pub scrub_credentials: bool,
    /// Cut long tool output to head and tail (default off).
    pub truncate: Option<Truncation>,
}

impl Default for OutputGuards {
    fn default() -> Self {
        Self { scrub_credentials: true, truncate: None }
    }
}

/// What the guards did to one result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Guarded {
    /// The content to put in the context.
    pub content: String,
    /// Secrets masked.
    pub redactions: usize,
    /// Bytes or tokens cut, when truncated.
    pub omitted: Option<u64>,
}

impl OutputGuards {
    /// Applies the guards to `content`.
    pub fn apply(&self, content: String) -> Guarded {
        let scrubbed = match self.scrub_credentials.then(|| scrub_credentials(&content)) {
            Some((Cow::Owned(scrubbed), redactions)) => Some((scrubbed, redactions)),
            _ => None,
        };
        let (content, redactions) = scrubbed.unwrap_or((content, 0));
        match self.truncate.and_then(|budget| truncate_middle(&content, budget)) {
            Some(cut) => Guarded { content: cut.text, redactions, omitted: Some(cut.omitted) },
            None => Guarded { content, redactions, omitted: None },
        }
    }
}
