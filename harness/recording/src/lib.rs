//! Recording format v2 (`docs/recording-format.md`): the model's side of
//! each exchange as ordered [`Part`]s, provider-neutral, rendered into
//! whichever wire format the client speaks; optionally the recorded usage,
//! ids, raw bytes and request. v1 files load into the same model
//! ([`exchange_file`] turns v1's `text` and `tool_calls` into parts).

//!
//! Besides the model, this crate holds what reloop's files and its capture
//! share with the mock: the faults and provider-token fit a scenario names
//! ([`fault`], [`provider_tokens`]), real traffic turned into exchanges with
//! its secrets redacted ([`capture`]), and the session-path rules that name a
//! session in a URL and a file ([`session_path`]).
//!
//! Why a crate of its own, not `reloop-files`: the mock replays this model
//! and `reloop-files` depends on the agent crate for scenario settings, so the
//! model there would pull the agent into the mock; and in `reloop-mock` it
//! pulled axum, hyper and reqwest into every crate that only reads or
//! writes recordings (`files`, `import`, `fuzz`). Here it depends on the
//! wire model and serde alone, and each of them depends on it.

mod auxiliary_answer;
pub mod capture;
mod exchange_file;
pub mod fault;
pub mod from_wire;
pub mod mcp;
pub mod provider_tokens;
pub mod recorded;
pub mod session_path;
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod testing;
pub mod tool_side;
pub mod workspace;

use std::collections::BTreeMap;

use reloop_wire::{FinishReason, ModelTurn, Reasoning, ToolCall};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use auxiliary_answer::AuxiliaryAnswer;
pub use recorded::{RawBody, RawResponse, RecordedRequest, ReplayMode};
pub use reloop_wire::parts::{Arguments, Part, ToolCallPart};
pub use reloop_wire::parts::{ExtraFields, RecordedUsage, ResponseIds};

/// The format tag of v1 recordings, still read.
pub const FORMAT_V1: &str = "reloop.recording/v1";
/// The format tag every recording is written with.
pub const FORMAT_V2: &str = "reloop.recording/v2";

/// Whether `value` is its type's default: written files leave defaults out.
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// A whole recording.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// [`FORMAT_V2`] (or [`FORMAT_V1`], read into the same model).
    pub format: FormatTag,
    /// The model name to report in responses; defaults to the exchange's
    /// recorded model, then the request's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What was stripped before the file was written (header names and
    /// body patterns), so a reader knows the file is incomplete there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
    /// Which usage neutral replies report: the server's own count (default)
    /// or, where an exchange recorded it, the provider's usage as recorded.
    #[serde(default, skip_serializing_if = "is_default")]
    pub reply_usage: ReplyUsage,
    /// The exchanges, answered in order.
    pub exchanges: Vec<Exchange>,
    /// Answers for auxiliary requests (tool-less title or summary
    /// prompts), which never consume an exchange ([`crate::auxiliary`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auxiliary: Vec<AuxiliaryAnswer>,
    /// What a black-box agent's shell ran and answered, in order: a replay
    /// with `agent.tools: replay` answers each command from here instead of
    /// running it ([`tool_side`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_side: Vec<tool_side::ShellCommand>,
    /// What a black-box agent's MCP servers were asked and answered, per
    /// server: a replay with `agent.tools: replay` answers the agent's MCP
    /// client from here, the server's program absent ([`mcp`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<mcp::McpServer>,
    /// What a black-box agent's workspace held at the start and after each
    /// turn: a replay starts from the first snapshot and tells where it
    /// went another way ([`workspace`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<workspace::WorkspaceRecord>,
}

/// The usage a neutral reply reports to the client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplyUsage {
    /// The server's own count (reference tokenizer, simulated cache).
    #[default]
    Counted,
    /// The usage the provider reported when the exchange was recorded, its
    /// wire object sent as is to a client of the same API.
    Recorded,
}

/// The format tag, checked while parsing; always written as [`FORMAT_V2`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FormatTag;

impl<'de> Deserialize<'de> for FormatTag {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tag = String::deserialize(deserializer)?;
        if tag == FORMAT_V1 || tag == FORMAT_V2 {
            Ok(Self)
        } else {
            Err(serde::de::Error::custom(format!("unsupported recording format `{tag}`, expected `{FORMAT_V2}` or `{FORMAT_V1}`")))
        }
    }
}

impl Serialize for FormatTag {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(FORMAT_V2)
    }
}

/// The schema of the tag: one of the versions the parser accepts.
impl JsonSchema for FormatTag {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FormatTag".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "description": "The recording format and version.", "enum": [FORMAT_V2, FORMAT_V1] })
    }
}

/// One recorded model response. Read through [`exchange_file`], which also
/// accepts v1's `text` and `tool_calls`; written with `parts` only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "exchange_file::ExchangeFile")]
pub struct Exchange {
    /// Which requests it answers.
    #[serde(skip_serializing_if = "is_default")]
    pub purpose: Purpose,
    /// For a compaction exchange: it also answers every later compaction
    /// request once the others are used up.
    #[serde(skip_serializing_if = "is_default")]
    pub reusable: bool,
    /// It answers a sub-agent's request (depth 1), not the main loop's.
    #[serde(skip_serializing_if = "is_default")]
    pub sub_agent: bool,
    /// What the request must carry for this answer to apply.
    #[serde(skip_serializing_if = "is_default")]
    pub expect: RequestExpectations,
    /// What the model produced, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// Why the model stopped; by default `tool_calls` when there are calls,
    /// else `stop`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// The model the provider named in this response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The response's own ids.
    #[serde(skip_serializing_if = "is_default")]
    pub ids: ResponseIds,
    /// Usage as originally recorded, kept beside the server's own count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<RecordedUsage>,
    /// What the response carried around its parts that reloop does not
    /// model (the parts keep their own), sent back to a client of its API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<ExtraFields>,
    /// Selected response headers as recorded (`request-id`, rate limits…).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Simulated latency.
    #[serde(skip_serializing_if = "is_default")]
    pub timing: Timing,
    /// Parts or raw bytes (`reloop serve --raw` forces raw wherever recorded).
    #[serde(skip_serializing_if = "is_default")]
    pub replay: ReplayMode,
    /// The recorded response bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawResponse>,
    /// The recorded request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<RecordedRequest>,
}

/// The kind of request an exchange answers. Each purpose replays in its
/// own order: a compaction request (one declaring no tools, once the
/// recording has compaction exchanges) takes the next compaction exchange
/// whenever it comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// The agent loop's own decisions.
    #[default]
    Main,
    /// Summaries for context compaction.
    Compaction,
}

impl Purpose {
    /// The purpose's slot in per-purpose tables.
    pub fn index(self) -> usize {
        match self {
            Self::Main => 0,
            Self::Compaction => 1,
        }
    }
}

/// Checks on the request an exchange answers; a failed one is a divergence
/// naming the check. Every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestExpectations {
    /// The model the request must ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tools the request must declare.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Texts that must each appear in some message (system included).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_contains: Vec<String>,
    /// Texts that must each appear in some tool result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_result_contains: Vec<String>,
}

/// Simulated latency of one exchange.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Timing {
    /// Wait before the first byte, ms.
    #[serde(skip_serializing_if = "is_default")]
    pub first_byte_ms: u64,
    /// Wait between chunks, ms.
    #[serde(skip_serializing_if = "is_default")]
    pub chunk_ms: u64,
}

impl Recording {
    /// Indices of the exchanges of each purpose, in order.
    pub fn by_purpose(&self) -> [Vec<usize>; 2] {
        let mut lists = [Vec::new(), Vec::new()];
        for (index, exchange) in self.exchanges.iter().enumerate() {
            lists[exchange.purpose.index()].push(index);
        }
        lists
    }
}

impl Exchange {
    /// The text parts, joined: what an API without text blocks sends.
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(|part| if let Part::Text { text, .. } = part { Some(text.as_str()) } else { None }).collect()
    }

    /// The client-side tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallPart> {
        self.parts.iter().filter_map(|part| if let Part::ToolCall(call) = part { Some(call) } else { None })
    }

    /// The turn to render; `index` makes generated call ids unique.
    pub fn to_turn(&self, index: usize) -> ModelTurn {
        let tool_calls: Vec<ToolCall> = self
            .tool_calls()
            .enumerate()
            .map(|(i, call)| ToolCall {
                id: call.id.clone().unwrap_or_else(|| format!("call_{index:03}_{i}")).into(),
                name: call.name.as_str().into(),
                arguments: call.arguments.to_wire().into(),
            })
            .collect();
        let finish_reason = self.finish_reason.clone().unwrap_or(if tool_calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls });
        ModelTurn { text: self.text(), tool_calls, reasoning: self.reasoning(), finish_reason, ..ModelTurn::default() }
    }

    /// The reasoning parts as the loop keeps them: thinking (with its
    /// signature), redacted thinking, Responses items, Chat-compatible text.
    pub fn reasoning(&self) -> Vec<Reasoning> {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Thinking { thinking, signature, .. } => Some(Reasoning::Thinking { thinking: thinking.clone(), signature: signature.clone() }),
                Part::RedactedThinking { data } => Some(Reasoning::RedactedThinking { data: data.clone() }),
                Part::Reasoning { text, id: None, encrypted_content: None, .. } if !text.is_empty() => Some(Reasoning::ReasoningContent { text: text.clone() }),
                Part::Reasoning { id, summary, encrypted_content, .. } => {
                    Some(Reasoning::ResponsesItem { id: id.clone(), summary: summary.clone(), encrypted_content: encrypted_content.clone() })
                }
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exchange(json: serde_json::Value) -> Exchange {
        serde_json::from_value(json).unwrap()
    }

    /// One exchange with every part kind and every optional field.
    fn every_part() -> serde_json::Value {
        json!({
            "parts": [
                { "type": "reasoning", "id": "rs_1", "summary": ["Look first."], "encrypted_content": "gAAA" },
                { "type": "thinking", "thinking": "The test fails at the end.", "signature": "EqQB", "chunks": [4, 22] },
                { "type": "redacted_thinking", "data": "EmwKAhgB" },
                { "type": "text", "text": "Reading it.", "id": "msg_1", "annotations": [{ "type": "url_citation" }] },
                { "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": { "query": "slice" } },
                { "type": "server_tool_result", "tool_use_id": "srvtoolu_1", "kind": "web_search_tool_result", "content": [] },
                { "type": "tool_call", "id": "call_1", "item_id": "fc_1", "name": "read", "arguments": { "path": "a" } },
                { "type": "refusal", "refusal": "No." }
            ],
            "finish_reason": "tool_calls",
            "model": "m-1",
            "ids": { "response": "resp_1", "created": 7 },
            "usage": { "input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 4, "reasoning_tokens": 2, "wire": { "x": 1 } },
            "headers": { "request-id": "req_1" },
            "replay": "raw",
            "raw": { "api": "openai_responses", "headers": [["content-type", "text/event-stream"]], "events": ["event: a\ndata: {}\n\n"] },
            "request": { "path": "/v1/responses", "body": { "model": "m-1" } }
        })
    }

    #[test]
    fn finish_reason_follows_the_content() {
        let text = exchange(json!({ "text": "hi" }));
        assert_eq!(text.to_turn(0).finish_reason, FinishReason::Stop);
        let call = exchange(json!({ "tool_calls": [{ "name": "read", "arguments": { "path": "a" } }] }));
        let turn = call.to_turn(4);
        assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
        assert_eq!(turn.tool_calls[0].id, "call_004_0");
        assert_eq!(turn.tool_calls[0].arguments, r#"{"path":"a"}"#);
    }

    #[test]
    fn raw_arguments_are_sent_verbatim() {
        let call = exchange(json!({ "tool_calls": [{ "name": "x", "arguments": "{\"a\": 1" }] }));
        assert_eq!(call.to_turn(0).tool_calls[0].arguments, "{\"a\": 1");
    }

    #[test]
    fn v1_shorthand_becomes_a_text_part_then_the_calls() {
        let v1 = exchange(json!({ "text": "hi", "tool_calls": [{ "name": "read" }] }));
        let v2 = exchange(json!({ "parts": [{ "type": "text", "text": "hi" }, { "type": "tool_call", "name": "read" }] }));
        assert_eq!(v1, v2);
        assert_eq!(serde_json::to_value(&v1).unwrap(), json!({ "parts": [{ "type": "text", "text": "hi" }, { "type": "tool_call", "name": "read" }] }));
    }

    #[test]
    fn shorthand_and_parts_together_are_refused() {
        let error = serde_json::from_value::<Exchange>(json!({ "text": "hi", "parts": [{ "type": "text", "text": "x" }] })).unwrap_err();
        assert!(error.to_string().contains("shorthand"), "{error}");
        let error = serde_json::from_value::<Exchange>(json!({ "replay": "raw" })).unwrap_err();
        assert!(error.to_string().contains("raw"), "{error}");
    }

    #[test]
    fn v2_round_trips_and_writes_no_defaults() {
        let original = exchange(every_part());
        let written = serde_json::to_value(&original).unwrap();
        assert_eq!(written, every_part(), "every field written back, nothing added");
        assert_eq!(exchange(written), original);
        assert_eq!(serde_json::to_value(exchange(json!({ "text": "hi" }))).unwrap(), json!({ "parts": [{ "type": "text", "text": "hi" }] }));
    }

    #[test]
    fn text_joins_text_parts_and_skips_the_rest() {
        let turn = exchange(every_part()).to_turn(0);
        assert_eq!(turn.text, "Reading it.");
        assert_eq!(turn.tool_calls.len(), 1);
        assert_eq!(turn.tool_calls[0].id, "call_1");
    }

    #[test]
    fn a_v1_recording_is_written_back_as_v2() {
        let recording: Recording = serde_json::from_value(json!({ "format": FORMAT_V1, "exchanges": [{ "text": "hi" }] })).unwrap();
        assert_eq!(serde_json::to_value(&recording).unwrap()["format"], FORMAT_V2);
        assert!(serde_json::from_value::<Recording>(json!({ "format": "reloop.recording/v3", "exchanges": [] })).is_err());
    }
}
