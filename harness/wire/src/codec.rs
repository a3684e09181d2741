//! One codec per format, as a client and a server call it: authentication
//! headers, request bodies to and from the neutral [`Prompt`], replies
//! encoded from the neutral [`Reply`] (whole or streamed), a whole response
//! read into a [`ModelTurn`], error bodies written and read, and the frames
//! a stream fault sends. Callers dispatch on the [`Format`] value and never
//! on a format's shapes; each arm here is one format's own module.

use crate::anthropic::{AnthropicErrorBody, CacheBreakpoint, CachePoint, Message, MessagesRequest};
use crate::context_management::ContextEdit;
pub use crate::error_reply::{DIVERGENCE_ERROR_TYPE, ErrorReply, StreamErrorKind};
use crate::gemini::{GenerateContentRequest, GoogleErrorBody};
use crate::history_bytes::{HistoryArray, HistoryBytes};
use crate::history_prefix::{self, Previous};
use crate::openai_chat::{ApiErrorBody, ChatCompletion, ChatRequest};
use crate::openai_responses::{Response, ResponsesRequest};
use crate::reply::{DecodedReply, FromWireError, Reply, ReplyMeta};
use crate::{Format, ModelTurn, Prompt, WireError};

/// The `anthropic-version` header a client sends.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The headers that carry `api_key` (and the API version, for Anthropic).
/// Gemini's key goes in `x-goog-api-key`, never in the URL, so it cannot
/// end up in a logged or recorded path.
pub fn auth_headers(format: Format, api_key: &str) -> Vec<(&'static str, String)> {
    match format {
        Format::OpenaiChat | Format::OpenaiResponses => vec![("authorization", format!("Bearer {api_key}"))],
        Format::Anthropic => vec![("x-api-key", api_key.to_owned()), ("anthropic-version", ANTHROPIC_VERSION.to_owned())],
        Format::Gemini => vec![(crate::gemini::API_KEY_HEADER, api_key.to_owned())],
    }
}

/// The request body of `prompt`. `breakpoints` places Anthropic's
/// `cache_control` marks; it is asked only for Anthropic. The prompt is moved
/// into the Chat Completions request, whose texts are not copied.
///
/// # Errors
///
/// Serialization failed (it does not for plain prompts).
pub fn encode_request(format: Format, prompt: Prompt, breakpoints: impl FnOnce(&Prompt) -> Vec<CacheBreakpoint>) -> Result<Vec<u8>, serde_json::Error> {
    encode_request_into(Vec::new(), format, prompt, breakpoints)
}

/// [`encode_request`] written into `body`'s buffer (what it held is dropped).
fn encode_request_into(
    mut body: Vec<u8>,
    format: Format,
    prompt: Prompt,
    breakpoints: impl FnOnce(&Prompt) -> Vec<CacheBreakpoint>,
) -> Result<Vec<u8>, serde_json::Error> {
    body.clear();
    body.reserve(body_capacity(&prompt));
    match format {
        Format::OpenaiChat => serde_json::to_writer(&mut body, &ChatRequest::from_owned_prompt(prompt)),
        Format::OpenaiResponses => serde_json::to_writer(&mut body, &ResponsesRequest::from_prompt(&prompt)),
        Format::Anthropic => {
            let mut request = MessagesRequest::from_prompt(&prompt);
            request.place_cache_breakpoints(&breakpoints(&prompt));
            serde_json::to_writer(&mut body, &request)
        }
        Format::Gemini => serde_json::to_writer(&mut body, &GenerateContentRequest::from_prompt(&prompt)),
    }?;
    Ok(body)
}

/// Writes the request bodies of one conversation, one after another. On
/// the OpenAI wires it keeps the previous body's history serialized and
/// writes only what a request changes or adds ([`HistoryBytes`]): resending
/// the history otherwise costs as much as the rest of a replay together.
/// Anthropic and Gemini write the whole prompt each time: their messages
/// are not written one by one (both join consecutive tool results into
/// one turn, and Anthropic's breakpoints move with the last message).
#[derive(Debug)]
pub struct RequestWriter {
    format: Format,
    history: Option<HistoryBytes>,
}

impl RequestWriter {
    /// A writer of `format`'s request bodies.
    pub fn new(format: Format) -> Self {
        let array = match format {
            Format::OpenaiChat => Some(HistoryArray::ChatMessages),
            Format::OpenaiResponses => Some(HistoryArray::ResponsesInput),
            Format::Anthropic | Format::Gemini => None,
        };
        Self { format, history: array.map(HistoryBytes::new) }
    }

    /// The format written.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The body [`encode_request`] writes for `head` with `messages` as its conversation, in
    /// `buffer` (what it held is dropped, its room is used: a client hands back the previous
    /// body's buffer, so a long conversation's body is not allocated afresh each request).
    /// `frozen_tools`, a `tools` array as [`encode_tools`] wrote it, goes in verbatim as the
    /// body's last member in place of `head`'s own tools (which must be none): a client writes
    /// its tools once per tool set, so the prefix the provider caches stays byte-identical
    /// from request to request and a long tool list is not serialized again each time.
    ///
    /// # Errors
    ///
    /// Serialization failed (it does not for plain prompts).
    pub fn write(
        &mut self,
        buffer: Vec<u8>,
        head: Prompt,
        messages: &[crate::Message],
        frozen_tools: Option<&[u8]>,
        breakpoints: impl FnOnce(&Prompt) -> Vec<CacheBreakpoint>,
    ) -> Result<Vec<u8>, serde_json::Error> {
        debug_assert!(frozen_tools.is_none() || head.tools.is_empty(), "frozen tools stand for the head's");
        let reserve = frozen_tools.map_or(0, |tools| tools.len() + TOOLS_MEMBER.len() + 1);
        let mut body = match &mut self.history {
            Some(history) => history.body(buffer, head, messages, reserve)?,
            None => {
                let mut body = encode_request_into(buffer, self.format, Prompt { messages: messages.to_vec(), ..head }, breakpoints)?;
                body.reserve(reserve);
                body
            }
        };
        if let Some(tools) = frozen_tools {
            debug_assert_eq!(body.last(), Some(&b'}'), "a request body is an object with a model");
            body.pop();
            body.extend_from_slice(TOOLS_MEMBER);
            body.extend_from_slice(tools);
            body.push(b'}');
        }
        Ok(body)
    }
}

/// What precedes the frozen tools in a body.
const TOOLS_MEMBER: &[u8] = br#","tools":"#;

/// Whether `format`'s provider applies `edit` when a request asks for it: Anthropic every
/// edit, Responses the compaction (its `context_management`), Chat Completions and Gemini
/// none. A request carries the edits of [`Prompt::context_management`] its wire applies.
pub fn manages(format: Format, edit: &ContextEdit) -> bool {
    match format {
        Format::Anthropic => true,
        Format::OpenaiResponses => matches!(edit, ContextEdit::Compact(_)),
        Format::OpenaiChat | Format::Gemini => false,
    }
}

/// Whether the provider takes a client-set output-token limit as the output slot (Roku's
/// `supports_output_slot_cap`): the Responses API budgets output, reasoning included, itself.
pub fn honours_output_cap(format: Format) -> bool {
    !matches!(format, Format::OpenaiResponses)
}

/// The headers a request for `prompt` needs beside authentication: on Anthropic, the
/// `anthropic-beta` its context edits require (each beta once, in the edits' order); none
/// elsewhere.
pub fn request_headers(format: Format, prompt: &Prompt) -> Vec<(&'static str, String)> {
    let mut betas: Vec<&str> = Vec::new();
    for edit in prompt.context_management.iter().flat_map(|management| &management.edits).filter(|edit| format == Format::Anthropic && manages(format, edit)) {
        if !betas.contains(&edit.beta()) {
            betas.push(edit.beta());
        }
    }
    if betas.is_empty() { Vec::new() } else { vec![("anthropic-beta", betas.join(","))] }
}

/// Room for `prompt`'s body before it is written: its texts, an eighth more for escapes, and
/// some bytes a message for the JSON around them. `serde_json::to_vec` starts small and doubles,
/// which copied a long history's body about ten times over on every request.
fn body_capacity(prompt: &Prompt) -> usize {
    let texts = prompt.system.as_ref().map_or(0, String::len) + prompt.messages.iter().map(crate::Message::text_len).sum::<usize>();
    texts + texts / 8 + 128 * (prompt.messages.len() + 2)
}

/// `specs` as `format`'s `tools` array, as its request renders it; for
/// Anthropic with the tools breakpoint `breakpoints` places (if any).
pub fn encode_tools(format: Format, specs: &[crate::ToolSpec], breakpoints: impl FnOnce(&Prompt) -> Vec<CacheBreakpoint>) -> Vec<u8> {
    let prompt = Prompt { tools: specs.to_vec(), ..Prompt::default() };
    let json = match format {
        Format::OpenaiChat => serde_json::to_vec(&ChatRequest::from_prompt(&prompt).tools),
        Format::OpenaiResponses => serde_json::to_vec(&ResponsesRequest::from_prompt(&prompt).tools),
        Format::Anthropic => {
            let mut request = MessagesRequest::from_prompt(&prompt);
            let tools_only: Vec<CacheBreakpoint> = breakpoints(&prompt).into_iter().filter(|b| b.at == CachePoint::Tools).collect();
            request.place_cache_breakpoints(&tools_only);
            serde_json::to_vec(&request.tools)
        }
        Format::Gemini => serde_json::to_vec(&crate::gemini::tools(specs)),
    };
    json.expect("tool declarations are plain JSON")
}

/// A request read off the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRequest {
    /// The neutral prompt.
    pub prompt: Prompt,
    /// The `cache_control` breakpoints of an Anthropic request; `None` for
    /// the formats that cache without marks.
    pub breakpoints: Option<Vec<CacheBreakpoint>>,
}

/// A request body read into the neutral prompt. Gemini names the model and
/// streaming in the URL: `model` and `stream` give them (the other formats
/// carry both in the body and ignore these).
///
/// # Errors
///
/// The body is not the format's request.
pub fn decode_request(format: Format, body: &[u8], model: &str, stream: bool) -> Result<DecodedRequest, serde_json::Error> {
    let unmarked = |prompt| DecodedRequest { prompt, breakpoints: None };
    Ok(match format {
        Format::OpenaiChat => unmarked(serde_json::from_slice::<ChatRequest>(body)?.into_prompt()),
        Format::OpenaiResponses => unmarked(serde_json::from_slice::<ResponsesRequest>(body)?.to_prompt()),
        Format::Anthropic => {
            let request = serde_json::from_slice::<MessagesRequest>(body)?;
            DecodedRequest { prompt: request.to_prompt(), breakpoints: Some(request.cache_breakpoints()) }
        }
        Format::Gemini => unmarked(serde_json::from_slice::<GenerateContentRequest>(body)?.to_prompt(model, stream)),
    })
}

/// A decoded request's history kept for the next request of its conversation, which
/// [`decode_request_reusing`] then parses only past what the two share: OpenAI Chat's
/// `messages`, Gemini's `contents`. The formats the mock reads through its context management
/// (Responses, Anthropic) are parsed whole.
#[derive(Debug, Clone)]
pub enum Reusable<B> {
    /// An OpenAI Chat request's messages.
    Chat(Previous<B, ChatRequest, crate::openai_chat::ChatMessage>),
    /// A Gemini request's contents.
    Gemini(Previous<B, GenerateContentRequest, crate::gemini::Content>),
}

/// [`decode_request`] of a conversation's next `body`, parsing only what it adds to the
/// request `previous` was kept from ([`crate::history_prefix`]); equal to `decode_request` for
/// every body. Also what the conversation's next request may reuse.
///
/// # Errors
///
/// The body is not the format's request: `decode_request`'s error.
pub fn decode_request_reusing<B: AsRef<[u8]>>(
    format: Format,
    body: B,
    model: &str,
    stream: bool,
    previous: Option<Reusable<B>>,
) -> Result<(DecodedRequest, Option<Reusable<B>>), serde_json::Error> {
    let unmarked = |prompt| DecodedRequest { prompt, breakpoints: None };
    match format {
        Format::OpenaiChat => {
            let previous = previous.and_then(|kept| if let Reusable::Chat(kept) = kept { Some(kept) } else { None });
            let (request, kept) = history_prefix::read(body, "messages", previous, |request: &mut ChatRequest| &mut request.messages)?;
            Ok((unmarked(request.into_prompt()), kept.map(Reusable::Chat)))
        }
        Format::Gemini => {
            let previous = previous.and_then(|kept| if let Reusable::Gemini(kept) = kept { Some(kept) } else { None });
            let (request, kept) = history_prefix::read(body, "contents", previous, |request: &mut GenerateContentRequest| &mut request.contents)?;
            Ok((unmarked(request.to_prompt(model, stream)), kept.map(Reusable::Gemini)))
        }
        Format::OpenaiResponses | Format::Anthropic => Ok((decode_request(format, body.as_ref(), model, stream)?, None)),
    }
}

/// A token-count request read into the neutral prompt: Anthropic's
/// `count_tokens` body is a Messages request without `max_tokens`, and
/// Gemini's `countTokens` body holds either the request's `contents` or the
/// whole request under `generateContentRequest`. The other formats have no
/// count endpoint and are read as their requests.
///
/// # Errors
///
/// The body is not the format's JSON.
pub fn decode_count_request(format: Format, body: &[u8], model: &str) -> Result<Prompt, serde_json::Error> {
    let mut value = serde_json::from_slice::<serde_json::Value>(body)?;
    match format {
        Format::Anthropic => {
            if let Some(object) = value.as_object_mut() {
                object.entry("max_tokens").or_insert(serde_json::json!(1));
            }
        }
        Format::Gemini => {
            if let Some(inner) = value.get_mut("generateContentRequest") {
                value = inner.take();
            }
        }
        Format::OpenaiChat | Format::OpenaiResponses => {}
    }
    Ok(decode_request(format, &serde_json::to_vec(&value)?, model, false)?.prompt)
}

/// The format of a request sent to `path` (any prefix, any query), and its
/// body read as that format's request; Gemini's model and streaming come
/// from the path. `None` when the path is no model call.
pub fn decode_request_at(path: &str, body: &[u8]) -> Option<(Format, Result<DecodedRequest, serde_json::Error>)> {
    let format = Format::of_path(path)?;
    let action = path.split('?').next().and_then(|path| path.rsplit('/').next()).and_then(crate::gemini::Action::parse);
    let (model, stream) = match action {
        Some(crate::gemini::Action::Generate { model, stream }) => (model, stream),
        Some(crate::gemini::Action::CountTokens { model }) => (model, false),
        None => (String::new(), false),
    };
    Some((format, decode_request(format, body, &model, stream)))
}

/// A whole (non-streamed) response body read into the neutral turn.
///
/// # Errors
///
/// The body is not the format's response, or breaks its rules.
pub fn decode_response(format: Format, body: &[u8]) -> Result<ModelTurn, WireError> {
    let json = |source| WireError::Json { context: "response body", source };
    match format {
        Format::OpenaiChat => serde_json::from_slice::<ChatCompletion>(body).map_err(json)?.to_turn(),
        Format::OpenaiResponses => serde_json::from_slice::<Response>(body).map_err(json)?.to_turn(),
        Format::Anthropic => serde_json::from_slice::<Message>(body).map_err(json)?.to_turn(),
        Format::Gemini => Ok(crate::gemini::decode_body(&serde_json::from_slice(body).map_err(json)?)?.to_turn()),
    }
}

/// `reply` as one whole response body.
pub fn encode_reply(format: Format, reply: &Reply, meta: &ReplyMeta) -> String {
    match format {
        Format::OpenaiChat => crate::openai_chat::reply::completion(reply, meta),
        Format::OpenaiResponses => crate::openai_responses::reply::response(reply, meta),
        Format::Anthropic => crate::anthropic::reply::message(reply, meta),
        Format::Gemini => crate::gemini::reply::response(reply, meta),
    }
    .to_string()
}

/// `reply` as the SSE frames of a stream, each part in the API's event
/// order, cut into its recorded piece sizes.
pub fn encode_reply_stream(format: Format, reply: &Reply, meta: &ReplyMeta) -> Vec<String> {
    match format {
        Format::OpenaiChat => crate::openai_chat::reply::stream(reply, meta),
        Format::OpenaiResponses => crate::openai_responses::reply::stream(reply, meta),
        Format::Anthropic => crate::anthropic::reply::stream(reply, meta),
        Format::Gemini => crate::gemini::reply::stream(reply, meta),
    }
}

/// A response of `format` read into parts: `text` is the body after any
/// `Content-Encoding`, an event stream when `streamed` (its `[DONE]`
/// skipped), else one JSON body.
///
/// # Errors
///
/// A body or event is not JSON, or not the format's response.
pub fn decode_reply(format: Format, text: &str, streamed: bool) -> Result<DecodedReply, FromWireError> {
    if streamed {
        let events = crate::sse_events::split_events(text)
            .iter()
            .filter_map(|event| crate::sse_events::data(event))
            .filter(|data| *data != "[DONE]")
            .map(|data| serde_json::from_str(data).map_err(|e| FromWireError::NotJson(format!("event `{data}`: {e}"))))
            .collect::<Result<Vec<serde_json::Value>, _>>()?;
        match format {
            Format::OpenaiChat => crate::openai_chat::read_reply::from_events(&events),
            Format::OpenaiResponses => crate::openai_responses::read_reply::from_events(&events),
            Format::Anthropic => crate::anthropic::read_reply::from_events(&events),
            Format::Gemini => crate::gemini::reply::from_events(&events),
        }
    } else {
        let body: serde_json::Value = serde_json::from_str(text).map_err(|e| FromWireError::NotJson(format!("body: {e}")))?;
        let unstreamed = Default::default();
        match format {
            Format::OpenaiChat => crate::openai_chat::read_reply::from_body(&body, &unstreamed),
            Format::OpenaiResponses => crate::openai_responses::read_reply::from_body(&body, &unstreamed),
            Format::Anthropic => crate::anthropic::read_reply::from_body(&body, &unstreamed),
            Format::Gemini => crate::gemini::reply::from_body(&body),
        }
    }
}

/// The body of `error` in `format`'s envelope: OpenAI's
/// `{"error":{...}}`, Anthropic's `{"type":"error","error":{...}}` or
/// Google's `{"error":{"code","message","status"}}`, so the official SDKs
/// raise their typed errors.
pub fn error_body(format: Format, error: ErrorReply<'_>) -> String {
    let body = match format {
        Format::OpenaiChat | Format::OpenaiResponses => serde_json::to_string(&ApiErrorBody::of_reply(error)),
        Format::Anthropic => serde_json::to_string(&AnthropicErrorBody::of_reply(error)),
        Format::Gemini => serde_json::to_string(&GoogleErrorBody::of_reply(error)),
    };
    body.expect("error bodies are plain JSON")
}

/// The frame of an error event inside a `format` stream.
pub fn stream_error_frame(format: Format, kind: StreamErrorKind) -> String {
    let openai = || match kind {
        StreamErrorKind::Overloaded => ("overloaded_error", "Overloaded"),
        StreamErrorKind::ServerError => ("server_error", "The server had an error while processing your request."),
        StreamErrorKind::RateLimited => ("rate_limit_error", "Rate limit reached."),
    };
    match format {
        Format::OpenaiChat => {
            let (kind, message) = openai();
            format!("data: {}\n\n", serde_json::to_string(&ApiErrorBody::new(message, kind, None)).expect("plain JSON"))
        }
        Format::OpenaiResponses => {
            let (kind, message) = openai();
            let event = serde_json::json!({ "type": "error", "code": kind, "message": message, "param": null, "sequence_number": 99 });
            format!("event: error\ndata: {event}\n\n")
        }
        Format::Anthropic => {
            let (kind, message) = match kind {
                StreamErrorKind::Overloaded => ("overloaded_error", "Overloaded"),
                StreamErrorKind::ServerError => ("api_error", "Internal server error"),
                StreamErrorKind::RateLimited => ("rate_limit_error", "Rate limited"),
            };
            format!("event: error\ndata: {}\n\n", serde_json::to_string(&AnthropicErrorBody::new(kind, message)).expect("plain JSON"))
        }
        Format::Gemini => {
            let body = match kind {
                StreamErrorKind::Overloaded => GoogleErrorBody::for_status(503),
                StreamErrorKind::ServerError => GoogleErrorBody::for_status(500),
                StreamErrorKind::RateLimited => GoogleErrorBody::rate_limited(),
            };
            format!("data: {}\r\n\r\n", serde_json::to_string(&body).expect("plain JSON"))
        }
    }
}

/// A frame of `format` cut off inside its JSON, as a broken connection or
/// proxy leaves it.
pub fn garbled_frame(format: Format) -> &'static str {
    match format {
        Format::OpenaiChat => {
            "data: {\"id\":\"chatcmpl-reloop\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tru\n\n"
        }
        Format::OpenaiResponses => "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"tru\n\n",
        Format::Anthropic => "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_de\n\n",
        Format::Gemini => "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"tru\r\n\r\n",
    }
}

/// The format whose error envelope a request to `path` expects when no
/// route read it: Anthropic for its route (`/messages`) or its
/// `anthropic-version` header, Gemini for a `/v1beta/` route or its key
/// header, OpenAI (Chat's envelope, which Responses shares) otherwise.
/// `has_header` says whether the request carries a header.
pub fn error_format(path: &str, has_header: impl Fn(&str) -> bool) -> Format {
    if has_header("anthropic-version") || path.trim_end_matches('/').ends_with("/messages") {
        Format::Anthropic
    } else if has_header(crate::gemini::API_KEY_HEADER) || path.contains("/v1beta/") {
        Format::Gemini
    } else {
        Format::OpenaiChat
    }
}

/// An error body, as every format's client classifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The error type in the OpenAI/Anthropic vocabulary
    /// (`rate_limit_error`, `overloaded_error`, `invalid_request_error`…).
    pub kind: String,
    /// The provider's message.
    pub message: String,
    /// The prompt did not fit the model's context window.
    pub context_exceeded: bool,
}

/// The error a body of `format` reports; `None` when it is not the format's
/// error envelope.
pub fn read_error(format: Format, body: &[u8]) -> Option<ErrorInfo> {
    match format {
        Format::OpenaiChat | Format::OpenaiResponses => serde_json::from_slice::<ApiErrorBody>(body).ok().map(|parsed| ErrorInfo {
            context_exceeded: parsed.is_context_length_exceeded(),
            kind: parsed.error.kind,
            message: parsed.error.message,
        }),
        Format::Anthropic => serde_json::from_slice::<AnthropicErrorBody>(body).ok().map(|parsed| ErrorInfo {
            context_exceeded: parsed.is_prompt_too_long(),
            kind: parsed.error.kind,
            message: parsed.error.message,
        }),
        Format::Gemini => serde_json::from_slice::<GoogleErrorBody>(body).ok().map(|parsed| ErrorInfo {
            context_exceeded: parsed.is_prompt_too_long(),
            kind: parsed.neutral_kind().to_owned(),
            message: parsed.error.message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context_management::{Amount, ClearToolUses, Compact, ContextManagement, INPUT_TOKENS};
    use serde_json::json;

    /// A prompt's context management crosses each wire as its provider takes it (Anthropic
    /// every edit behind their betas, Responses the compaction as its threshold, the others
    /// none) and reads back as it was carried.
    #[test]
    fn context_management_crosses_each_wire_as_its_provider_takes_it() {
        let clear = ContextEdit::ClearToolUses(ClearToolUses::default());
        let compact = ContextEdit::Compact(Compact { trigger: Some(Amount::new(INPUT_TOKENS, 60_000)), ..Compact::default() });
        let prompt = Prompt {
            model: "m".into(),
            messages: vec![crate::Message::user("go")],
            context_management: Some(ContextManagement { edits: vec![clear.clone(), compact.clone()] }),
            ..Prompt::default()
        };
        let body = |format| serde_json::from_slice::<serde_json::Value>(&encode_request(format, prompt.clone(), |_| Vec::new()).unwrap()).unwrap();
        for format in Format::ALL {
            let sent = serde_json::to_vec(&body(format)).unwrap();
            let carried: Vec<ContextEdit> = [&clear, &compact].into_iter().filter(|edit| manages(format, edit)).cloned().collect();
            let expected = (!carried.is_empty()).then_some(ContextManagement { edits: carried });
            assert_eq!(decode_request(format, &sent, "m", false).unwrap().prompt.context_management, expected, "{format:?}");
        }
        let anthropic =
            json!({"edits": [{"type": "clear_tool_uses_20250919"}, {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60_000}}]});
        assert_eq!(body(Format::Anthropic)["context_management"], anthropic);
        assert_eq!(body(Format::OpenaiResponses)["context_management"], json!([{"type": "compaction", "compact_threshold": 60_000}]));
        assert_eq!(request_headers(Format::Anthropic, &prompt), [("anthropic-beta", "context-management-2025-06-27,compact-2026-01-12".to_owned())]);
        assert!(Format::ALL.into_iter().filter(|format| *format != Format::Anthropic).all(|format| request_headers(format, &prompt).is_empty()));
        // A Responses request asking only for edits its API lacks sends no member at all.
        let cleared_only = Prompt { context_management: Some(ContextManagement { edits: vec![clear] }), ..prompt };
        let sent: serde_json::Value = serde_json::from_slice(&encode_request(Format::OpenaiResponses, cleared_only, |_| Vec::new()).unwrap()).unwrap();
        assert!(sent.get("context_management").is_none(), "{sent}");
    }

    /// A `context_management` the types do not read is no prompt's: the request still reads
    /// (refusing it is the provider's part, the mock's `provider_context`).
    #[test]
    fn an_unreadable_context_management_reads_as_none() {
        let anthropic = br#"{"model":"m","max_tokens":1,"messages":[],"context_management":{"edits":[{"type":"clear_everything"}]}}"#;
        assert_eq!(decode_request(Format::Anthropic, anthropic, "", false).unwrap().prompt.context_management, None);
        let responses = br#"{"model":"m","input":[],"context_management":"compaction"}"#;
        assert_eq!(decode_request(Format::OpenaiResponses, responses, "", false).unwrap().prompt.context_management, None);
    }

    #[test]
    fn count_requests_of_both_count_endpoints_read_into_the_prompt() {
        let anthropic = br#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(decode_count_request(Format::Anthropic, anthropic, "").unwrap().messages.len(), 1);
        let contents = br#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
        let wrapped = br#"{"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"hi"}]}]}}"#;
        for body in [&contents[..], wrapped] {
            assert_eq!(decode_count_request(Format::Gemini, body, "gemini-2.5-flash").unwrap().messages.len(), 1);
        }
        assert!(decode_count_request(Format::Gemini, b"not json", "m").is_err());
    }

    #[test]
    fn context_overflow_bodies_of_every_format_are_read() {
        let openai = br#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let anthropic = br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201234 tokens > 200000 maximum"}}"#;
        let gemini = br#"{"error":{"code":400,"message":"The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#;
        for (format, body) in [(Format::OpenaiChat, &openai[..]), (Format::OpenaiResponses, openai), (Format::Anthropic, anthropic), (Format::Gemini, gemini)] {
            assert!(read_error(format, body).unwrap().context_exceeded, "{format:?}");
        }
        let quota = br#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}"#;
        assert_eq!(read_error(Format::Gemini, quota).unwrap().kind, "rate_limit_error");
        assert_eq!(read_error(Format::Gemini, b"oops"), None);
    }

    #[test]
    fn every_format_writes_each_error_in_its_envelope_and_reads_it_back() {
        for format in Format::ALL {
            let overflow = error_body(format, ErrorReply::ContextExceeded { window: 1000, requested: 1200 });
            assert!(read_error(format, overflow.as_bytes()).unwrap().context_exceeded, "{format:?}: {overflow}");
            let refusal = error_body(format, ErrorReply::Server { status: 404, message: "reloop: no route" });
            assert_eq!(read_error(format, refusal.as_bytes()).unwrap().message, "reloop: no route", "{format:?}");
            let divergence = error_body(format, ErrorReply::Divergence { message: "reloop: diverged", check: "tool_results" });
            assert!(divergence.contains(DIVERGENCE_ERROR_TYPE) && divergence.contains("diverged"), "{format:?}: {divergence}");
            for status in [429, 500, 503, 529, 400] {
                assert!(read_error(format, error_body(format, ErrorReply::Status(status)).as_bytes()).is_some(), "{format:?} {status}");
            }
            assert!(!stream_error_frame(format, StreamErrorKind::Overloaded).is_empty());
            assert!(serde_json::from_str::<serde_json::Value>(garbled_frame(format).trim_start_matches("event: ").split("data: ").last().unwrap()).is_err());
        }
        assert_eq!(error_format("/s/x/v1/messages", |_| false), Format::Anthropic);
        assert_eq!(error_format("/v1/chat/completions", |name| name == "x-goog-api-key"), Format::Gemini);
        assert_eq!(error_format("/v1/responses", |_| false), Format::OpenaiChat);
    }

    #[test]
    fn a_path_names_the_format_and_gemini_s_model() {
        let (format, request) = decode_request_at("/s/x/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", br#"{"contents":[]}"#).unwrap();
        let prompt = request.unwrap().prompt;
        assert_eq!((format, prompt.model.as_str(), prompt.stream), (Format::Gemini, "gemini-2.5-flash", true));
        assert_eq!(decode_request_at("/v1/messages", br#"{"model":"m","max_tokens":1,"messages":[]}"#).unwrap().0, Format::Anthropic);
        assert!(decode_request_at("/v1/models", b"").is_none());
    }

    /// Appends the `i`th round of a `read_file` call answered with `result`.
    fn push_read_round(prompt: &mut Prompt, i: usize, result: &str) {
        let call = crate::ToolCall { id: format!("call_{i}").into(), name: "read_file".into(), arguments: format!(r#"{{"path":"src/{i}.rs"}}"#).into() };
        prompt.messages.push(crate::Message::assistant("", vec![call]));
        prompt.messages.push(crate::Message::ToolResult {
            call_id: format!("call_{i}").into(),
            tool_name: "read_file".into(),
            content: result.into(),
            is_error: false,
        });
    }

    /// A request body is written into room taken once, before: a long
    /// history (as the client sends it, the tools appended after) no longer
    /// regrows and copies the buffer about ten times as it is written, and
    /// the bytes stay those of the format's request type.
    #[test]
    fn a_long_history_s_body_is_written_without_regrowing() {
        let result = "fn main() {\n    println!(\"{}\", 1);\n}\n".repeat(50);
        let mut prompt = Prompt { tools: Vec::new(), ..crate::prompt::tests::rich_prompt() };
        for i in 0..50 {
            push_read_round(&mut prompt, i, &result);
        }
        for format in Format::ALL {
            let body = encode_request(format, prompt.clone(), |_| Vec::new()).unwrap();
            assert_eq!(body.capacity(), body_capacity(&prompt), "{format:?}: {} bytes outgrew the room", body.len());
        }
        let chat = encode_request(Format::OpenaiChat, prompt.clone(), |_| Vec::new()).unwrap();
        assert_eq!(chat, serde_json::to_vec(&ChatRequest::from_prompt(&prompt)).unwrap());
    }

    /// The mock reads each request of a conversation against the previous one: a resent tool
    /// result's text is the previous parse's allocation, not a copy, so the request costs its
    /// new messages only and compares with the previous one by address.
    #[test]
    fn a_resent_history_shares_its_texts_with_the_previous_parse() {
        let result = "line of output\n".repeat(100);
        let mut prompt = Prompt { tools: Vec::new(), messages: vec![crate::Message::user("go")], ..crate::prompt::tests::rich_prompt() };
        let mut previous = None;
        let mut first = None;
        for i in 0..3 {
            push_read_round(&mut prompt, i, &result);
            let body = encode_request(Format::OpenaiChat, prompt.clone(), |_| Vec::new()).unwrap();
            let (decoded, kept) = decode_request_reusing(Format::OpenaiChat, body, "", true, previous).unwrap();
            assert_eq!(decoded.prompt.messages, prompt.messages);
            let crate::Message::ToolResult { content: seen, .. } = &decoded.prompt.messages[2] else { panic!("the first result moved") };
            let first = first.get_or_insert_with(|| seen.clone());
            assert!(std::ptr::eq(first.as_str(), seen.as_str()), "request {i} copied the first result's text");
            previous = kept;
        }
    }

    #[test]
    fn every_format_authenticates_with_its_own_header() {
        let names: Vec<&str> = Format::ALL.iter().map(|format| auth_headers(*format, "k")[0].0).collect();
        assert_eq!(names, ["authorization", "authorization", "x-api-key", "x-goog-api-key"]);
    }
}
