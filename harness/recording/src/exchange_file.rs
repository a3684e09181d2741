//! An exchange as written in a file: v2's fields plus v1's `text` and
//! `tool_calls`, a shorthand for a text part followed by tool-call parts.
//! Loading turns it into the one in-memory [`Exchange`].

use std::collections::BTreeMap;

use reloop_wire::FinishReason;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    Exchange, ExtraFields, Part, Purpose, RawResponse, RecordedRequest, RecordedUsage, ReplayMode, RequestExpectations, ResponseIds, Timing, ToolCallPart,
};

/// One recorded model response.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Exchange")]
pub struct ExchangeFile {
    /// Which requests it answers: `main` (default) or `compaction`.
    #[serde(default)]
    purpose: Purpose,
    /// For a compaction exchange: it also answers every later compaction
    /// request once the others are used up (strategies differ in how often
    /// they compact, while the main trajectory stays the same).
    #[serde(default)]
    reusable: bool,
    /// It answers a sub-agent's request (depth 1): the request answers the
    /// calls of the previous sub-agent exchange of the same delegation, and
    /// the parent's next request those of the parent's last exchange.
    #[serde(default)]
    sub_agent: bool,
    /// What the request must carry for this answer to apply.
    #[serde(default)]
    expect: RequestExpectations,
    /// Shorthand (v1): the text the model produced, before any tool call.
    #[serde(default)]
    text: String,
    /// Shorthand (v1): the tool calls the model made, after the text.
    #[serde(default)]
    tool_calls: Vec<ToolCallPart>,
    /// What the model produced, in order (v2); not together with `text` or `tool_calls`.
    #[serde(default)]
    parts: Vec<Part>,
    /// Why the model stopped; by default `tool_calls` when there are calls,
    /// else `stop`.
    #[serde(default)]
    finish_reason: Option<FinishReason>,
    /// The model the provider named in this response.
    #[serde(default)]
    model: Option<String>,
    /// The response's own ids; generated in each API's shape when absent.
    #[serde(default)]
    ids: ResponseIds,
    /// Usage as originally recorded, kept beside the server's own count.
    #[serde(default)]
    usage: Option<RecordedUsage>,
    /// What the response carried that reloop does not model, sent back to
    /// a client of the API it came from.
    #[serde(default)]
    extra: Option<ExtraFields>,
    /// Selected response headers as recorded.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Simulated latency.
    #[serde(default)]
    timing: Timing,
    /// `neutral` (default): rendered from the parts; `raw`: the recorded bytes.
    #[serde(default)]
    replay: ReplayMode,
    /// The recorded response bytes.
    #[serde(default)]
    raw: Option<RawResponse>,
    /// The recorded request.
    #[serde(default)]
    request: Option<RecordedRequest>,
}

impl TryFrom<ExchangeFile> for Exchange {
    type Error = String;

    fn try_from(file: ExchangeFile) -> Result<Self, String> {
        let shorthand = !file.text.is_empty() || !file.tool_calls.is_empty();
        if shorthand && !file.parts.is_empty() {
            return Err("`text` and `tool_calls` are shorthand for `parts`: give one or the other".into());
        }
        if file.replay == ReplayMode::Raw && file.raw.is_none() {
            return Err("`replay: raw` needs the recorded bytes in `raw`".into());
        }
        let parts = if shorthand {
            let text = Some(file.text).filter(|t| !t.is_empty()).map(Part::text);
            text.into_iter().chain(file.tool_calls.into_iter().map(Part::ToolCall)).collect()
        } else {
            file.parts
        };
        Ok(Self {
            purpose: file.purpose,
            reusable: file.reusable,
            sub_agent: file.sub_agent,
            expect: file.expect,
            parts,
            finish_reason: file.finish_reason,
            model: file.model,
            ids: file.ids,
            usage: file.usage,
            extra: file.extra,
            headers: file.headers,
            timing: file.timing,
            replay: file.replay,
            raw: file.raw,
            request: file.request,
        })
    }
}
