//! The recording's `auxiliary:` list: answers to the requests an agent
//! sends besides its loop (titles, summaries), matched and served by
//! `crate::auxiliary`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One answer of the recording's `auxiliary:` list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuxiliaryAnswer {
    /// Text the request's system prompt or messages must contain (case
    /// sensitive; for a request declaring tools, its system prompt or last
    /// message); such a request is auxiliary whatever the next exchange
    /// is, and gets this answer each time. Absent: the answer is
    /// used once, in list order, by an auxiliary request no `when` matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// The text sent back.
    pub text: String,
}
