//! Provider-side context management, done by the mock as the provider does
//! it: before a request is counted, matched, cached and priced, the edits it
//! asks for are applied and the compactions it carries are expanded, so
//! every figure follows the prompt the provider would have sent to the model,
//! not the one the client sent (`docs/provider-context.md`).
//!
//! - Anthropic ([`anthropic`]): `context_management.edits`
//!   (`clear_tool_uses_20250919`, `clear_thinking_20251015`, `compact_20260112`),
//!   reported back as `context_management.applied_edits`, and `compaction`
//!   blocks sent back, after which the API reads nothing before them.
//! - OpenAI Responses ([`responses`]): `context_management` compaction past
//!   `compact_threshold`, the `compaction` item it returns, and
//!   `POST /v1/responses/compact`; the item's opaque `encrypted_content` is
//!   the mock's own ([`sealed`]), so it expands back to the history it replaced.
//!
//! The summary a compaction carries is mechanical ([`summary`]): the mock
//! never writes prose, it lists what was said and done, so the tokens it
//! saves are those of a faithful, if terse, digest.

pub mod anthropic;
pub mod responses;
pub mod sealed;
pub mod summary;

use bytes::Bytes;
use reloop_wire::anthropic::CacheBreakpoint;
use reloop_wire::context_management::{AppliedContext, AppliedEdit};
use reloop_wire::{Format, Prompt};

use crate::replay::session::Session;

/// A request as the provider would have sent it to the model, and what the
/// provider did to get there.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The prompt the model sees.
    pub prompt: Prompt,
    /// Anthropic's `cache_control` breakpoints, of the edited request.
    pub breakpoints: Option<Vec<CacheBreakpoint>>,
    /// What was done.
    pub side: ServerSide,
    /// The conversation with the compactions it carries expanded to the
    /// items they replaced (Responses): what a replay is matched against,
    /// since the recording was made of the whole conversation. `None`: the
    /// prompt itself.
    pub history: Option<Prompt>,
}

/// What the provider did to one request before the model saw it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerSide {
    /// Anthropic: the `applied_edits` of the reply, when the request asked
    /// for `context_management` (empty when no edit fired).
    pub applied_edits: Option<Vec<AppliedEdit>>,
    /// A compaction made by this request, to return before the answer.
    pub compaction: Option<Compaction>,
    /// What changed the prompt, for the request's log and its cache-break
    /// explanation: `clear_tool_uses_20250919 cleared 3 tool uses (1204 tokens)`.
    pub note: Option<String>,
}

/// A compaction the provider made.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The mechanical summary the model reads in place of the history.
    pub summary: String,
    /// What the reply returns to the client, which the wire's codec encodes as Anthropic's
    /// block or Responses' item: the summary, or the item's id and sealed content, and
    /// whether the reply is the compaction alone.
    pub returned: reloop_wire::context_management::Compaction,
}

impl ServerSide {
    /// What the reply reports the provider did, as the wire's codecs encode it.
    pub fn applied(&self) -> AppliedContext {
        AppliedContext { applied_edits: self.applied_edits.clone(), compaction: self.compaction.as_ref().map(|compaction| compaction.returned.clone()) }
    }
}

/// Why a request is refused before any exchange: the API's 400 message.
pub type Refusal = String;

/// Reads a model call's body as the provider would: the edits and
/// compactions it asks for applied (Anthropic, Responses), the other formats
/// as they are. `beta` is the request's `anthropic-beta` header; `session`
/// counts tokens and keeps the previous request's parse ([`Session::decode`]).
///
/// # Errors
///
/// The body is not the format's request, or asks for context management
/// the provider would refuse (an unknown edit, a missing beta header, a
/// trigger below the minimum, a compaction item the mock did not make).
pub fn prepare(format: Format, body: &Bytes, beta: Option<&str>, session: &Session, model: &str, stream: bool) -> Result<Prepared, Refusal> {
    let parse = |e: serde_json::Error| format!("could not parse the JSON body of your request: {e}");
    let counter = session.counter();
    match format {
        Format::Anthropic => anthropic::prepare(serde_json::from_slice(body).map_err(parse)?, beta, counter),
        Format::OpenaiResponses => responses::prepare(serde_json::from_slice(body).map_err(parse)?, counter),
        Format::OpenaiChat | Format::Gemini => {
            let request = session.decode(format, body, model, stream).map_err(parse)?;
            Ok(Prepared { prompt: request.prompt, breakpoints: request.breakpoints, side: ServerSide::default(), history: None })
        }
    }
}
