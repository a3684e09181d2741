//! The wire formats as a value, so configuration can name one and a client or the mock server
//! can choose the endpoint and stream decoder at run time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::StreamDecoder;
use crate::anthropic::AnthropicStreamDecoder;
use crate::gemini::{GeminiStreamDecoder, GenerateContentRequest};
use crate::openai_chat::ChatStreamAccumulator;
use crate::openai_responses::ResponsesStreamDecoder;
use crate::{Message, Prompt};

/// A provider API wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// OpenAI Chat Completions ([`crate::openai_chat`]).
    OpenaiChat,
    /// OpenAI Responses ([`crate::openai_responses`]).
    OpenaiResponses,
    /// Anthropic Messages ([`crate::anthropic`]).
    Anthropic,
    /// Google Gemini `generateContent` ([`crate::gemini`]).
    Gemini,
}

impl Format {
    /// Every format.
    pub const ALL: [Self; 4] = [Self::OpenaiChat, Self::OpenaiResponses, Self::Anthropic, Self::Gemini];

    /// The format's name, as in configuration: `openai-chat`, `openai-responses`, `anthropic`,
    /// `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiChat => "openai-chat",
            Self::OpenaiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }

    /// The name a recording's raw response gives the API (`raw.api`).
    pub fn recorded_name(self) -> &'static str {
        match self {
            Self::OpenaiChat => "openai_chat",
            Self::OpenaiResponses => "openai_responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }

    /// The endpoint's route below the API base URL (which ends in `/v1`, or `/v1beta` for
    /// Gemini): Gemini's last segment is `{model}:{method}`, an `{action}` parameter.
    pub fn path(self) -> &'static str {
        match self {
            Self::OpenaiChat => "/chat/completions",
            Self::OpenaiResponses => "/responses",
            Self::Anthropic => "/messages",
            Self::Gemini => "/models/{action}",
        }
    }

    /// The environment variable the official SDKs read this API's key from.
    pub fn api_key_variable(self) -> &'static str {
        match self {
            Self::OpenaiChat | Self::OpenaiResponses => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::Gemini => "GEMINI_API_KEY",
        }
    }

    /// Whether a request names its model in the body (`"model": …`); Gemini
    /// names it in the path instead.
    pub fn model_in_body(self) -> bool {
        self != Self::Gemini
    }

    /// The path below the base URL a client posts a call of `model` to.
    pub fn endpoint(self, model: &str, stream: bool) -> String {
        match self {
            Self::Gemini => crate::gemini::action_path(model, stream),
            other => other.path().to_owned(),
        }
    }

    /// The format a request path (below any session prefix) is an endpoint of.
    pub fn of_path(path: &str) -> Option<Self> {
        let path = path.split('?').next().unwrap_or_default();
        if path.ends_with("/messages/count_tokens") {
            return None;
        }
        Self::ALL.into_iter().find(|format| match format {
            Self::Gemini => path.rsplit('/').next().and_then(crate::gemini::Action::parse).is_some(),
            other => path.ends_with(other.path()),
        })
    }
}

/// What `prompt` becomes after crossing the wire in `format`: rendered into
/// the format's request and read back. Formats differ in what they can
/// carry (Anthropic tool inputs must be JSON objects), so a harness that
/// prices a request the way the server saw it prices this.
pub fn through(format: Format, prompt: &Prompt) -> Prompt {
    match format {
        Format::OpenaiChat => crate::openai_chat::ChatRequest::from_prompt(prompt).to_prompt(),
        Format::OpenaiResponses => crate::openai_responses::ResponsesRequest::from_prompt(prompt).to_prompt(),
        Format::Anthropic => crate::anthropic::MessagesRequest::from_prompt(prompt).to_prompt(),
        Format::Gemini => GenerateContentRequest::from_prompt(prompt).to_prompt(&prompt.model, prompt.stream),
    }
}

/// What `message` becomes after crossing the wire in `format` on its own (as
/// [`through`] does to a whole prompt): usually itself, with tool inputs
/// normalized where the format carries them as JSON objects, and a tool
/// result's name kept (as a whole prompt gives it from the call). Lets a harness
/// count a transcript's messages as a server would see them, one by one,
/// without assembling a request.
pub fn message_through(format: Format, message: &Message) -> Vec<Message> {
    let alone = Prompt { messages: vec![message.clone()], ..Prompt::default() };
    let mut crossed = through(format, &alone).messages;
    // Alone, a tool result has no earlier call to take its name from.
    if let Message::ToolResult { tool_name, .. } = message {
        for result in &mut crossed {
            if let Message::ToolResult { tool_name: crossed_name, .. } = result {
                crossed_name.clone_from(tool_name);
            }
        }
    }
    crossed
}

/// A fresh decoder for one streamed response in `format`.
pub fn decoder_for(format: Format) -> Box<dyn StreamDecoder> {
    match format {
        Format::OpenaiChat => Box::new(ChatStreamAccumulator::new()),
        Format::OpenaiResponses => Box::new(ResponsesStreamDecoder::new()),
        Format::Anthropic => Box::new(AnthropicStreamDecoder::new()),
        Format::Gemini => Box::new(GeminiStreamDecoder::new()),
    }
}

#[cfg(test)]
mod tests {
    //! The crate's promise across formats: one neutral turn renders into every format, streamed
    //! and not, and decodes back; one neutral prompt converts through every request type.

    use super::*;
    use crate::prompt::tests::{rich_prompt, without_error_flags};
    use crate::testing::{body_of_turn, decode_stream, stream_of_turn};
    use crate::{FinishReason, ModelTurn, Prompt, ToolCall, Usage, anthropic, openai_chat};
    use crate::{WireError, gemini, openai_responses};
    use serde_json::json;

    #[test]
    fn names_paths_and_serde_agree() {
        for format in Format::ALL {
            assert_eq!(serde_json::to_value(format).unwrap(), json!(format.as_str()));
            let parsed: Format = serde_json::from_value(json!(format.as_str())).unwrap();
            assert_eq!(parsed, format);
        }
        let paths: Vec<&str> = Format::ALL.iter().map(|format| format.path()).collect();
        assert_eq!(paths, ["/chat/completions", "/responses", "/messages", "/models/{action}"]);
        for format in Format::ALL {
            let endpoint = format!("/s/x/v1{}", format.endpoint("gemini-2.5-flash", true));
            assert_eq!(Format::of_path(&endpoint), Some(format), "{endpoint}");
        }
        assert_eq!(Format::of_path("/v1/messages/count_tokens"), None);
        assert_eq!(Format::of_path("/v1beta/models/g:countTokens"), Some(Format::Gemini));
        assert!(serde_json::from_value::<Format>(json!("openai_chat")).is_err());
    }

    /// A turn every format carries without loss: text, two tool calls, usage with cache reads.
    fn turn() -> ModelTurn {
        let call = |id: &str, name: &str, arguments: &str| ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() };
        ModelTurn {
            text: "Reading both files.".into(),
            tool_calls: vec![call("call_a", "read_file", r#"{"path":"a.rs"}"#), call("call_b", "read_file", r#"{"path":"b/ü.rs","limit":300}"#)],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: Some(Usage { input_tokens: 1200, output_tokens: 40, cache_read_tokens: 1024, cache_write_tokens: 0 }),
        }
    }

    #[test]
    fn one_turn_streams_through_every_format() {
        for format in Format::ALL {
            let stream = stream_of_turn(format, &turn()).concat();
            let mut decoder = decoder_for(format);
            let (_, decoded) = decode_stream(&stream, decoder.as_mut());
            assert_eq!(decoded.unwrap(), turn(), "{}", format.as_str());
            assert!(!decoder.is_done(), "finish resets the decoder");

            // Every decoder insists on its terminal event.
            let frames = stream_of_turn(format, &turn());
            let cut = frames[..frames.len() - 1].concat();
            let (_, early) = decode_stream(&cut, decoder_for(format).as_mut());
            assert!(matches!(early, Err(WireError::StreamEndedEarly)), "{}: {early:?}", format.as_str());
        }
    }

    #[test]
    fn one_turn_round_trips_every_non_streamed_body() {
        for format in Format::ALL {
            let body = body_of_turn(format, &turn());
            assert_eq!(crate::codec::decode_response(format, body.as_bytes()).unwrap(), turn(), "{}", format.as_str());
        }
    }

    #[test]
    fn cache_writes_survive_responses_and_anthropic_but_not_chat_or_gemini() {
        let writes = ModelTurn { usage: Some(Usage { cache_write_tokens: 100, ..turn().usage.unwrap() }), ..turn() };
        for format in Format::ALL {
            let stream = stream_of_turn(format, &writes).concat();
            let (_, decoded) = decode_stream(&stream, decoder_for(format).as_mut());
            let usage = decoded.unwrap().usage.unwrap();
            let expected = if matches!(format, Format::OpenaiChat | Format::Gemini) { 0 } else { 100 };
            assert_eq!(usage.cache_write_tokens, expected, "{}", format.as_str());
            assert_eq!(usage.input_tokens, 1200, "{}", format.as_str());
        }
    }

    /// `prompt` through one format's request type and back.
    fn through(format: Format, prompt: &Prompt) -> Prompt {
        match format {
            Format::OpenaiChat => openai_chat::ChatRequest::from_prompt(prompt).to_prompt(),
            Format::OpenaiResponses => openai_responses::ResponsesRequest::from_prompt(prompt).to_prompt(),
            Format::Anthropic => anthropic::MessagesRequest::from_prompt(prompt).to_prompt(),
            Format::Gemini => gemini::GenerateContentRequest::from_prompt(prompt).to_prompt(&prompt.model, prompt.stream),
        }
    }

    #[test]
    fn a_lone_message_crosses_as_in_a_whole_prompt() {
        let prompt = rich_prompt();
        for format in Format::ALL {
            let one_by_one: Vec<Message> = prompt.messages.iter().flat_map(|m| message_through(format, m)).collect();
            assert_eq!(one_by_one, super::through(format, &prompt).messages, "{}", format.as_str());
        }
        let spaced = Message::assistant("", vec![ToolCall { id: "c".into(), name: "f".into(), arguments: r#"{"a": 1}"#.into() }]);
        let Message::Assistant { tool_calls, .. } = &message_through(Format::Anthropic, &spaced)[0] else { unreachable!() };
        assert_eq!(tool_calls[0].arguments, r#"{"a":1}"#, "Anthropic carries inputs as objects");
    }

    #[test]
    fn one_prompt_converts_through_every_format_in_any_order() {
        // Only the tool-error flag is lost, by the two OpenAI formats.
        for first in Format::ALL {
            for second in Format::ALL {
                let prompt = through(second, &through(first, &rich_prompt()));
                assert_eq!(without_error_flags(prompt), without_error_flags(rich_prompt()), "{} then {}", first.as_str(), second.as_str());
            }
        }
        assert_eq!(through(Format::Anthropic, &rich_prompt()), rich_prompt());
    }
}
