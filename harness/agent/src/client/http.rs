//! The HTTP exchange of a model call: the request posted with the format's
//! headers, redirects refused, error bodies classified, and the answer read
//! whole or as SSE frames, every wait bounded in the run's clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use reloop_wire::codec::{self, RequestWriter};
use reloop_wire::format::decoder_for;
use reloop_wire::{Format, ModelTurn, Prompt, SseDecoder, SseFrame, StreamDelta};

use super::body_buffers::BodyBuffers;
use super::formats::{self, wire_error};
use super::{LlmError, LlmRequest, ProviderConfig, ensure_crypto_provider, parse_retry_after, prompt_head, since_latest_compaction, tls};
use crate::clock::{Clock, SharedClock, with_timeout};
use crate::tool_schema::Freezer;

/// Talks to one provider endpoint.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    http: reqwest::Client,
    config: ProviderConfig,
    clock: SharedClock,
    /// The latest request's body, kept so the next one writes only what it
    /// adds. Clones share it: a call made for another conversation (a
    /// summary) only costs the next call a whole write.
    writer: Arc<Mutex<RequestWriter>>,
    /// The buffer the next body is written in, once the last is sent.
    bodies: BodyBuffers,
    /// The endpoint's URL without and with streaming, parsed once: parsing
    /// it for every call took 2 % of a replay. A base URL that does not
    /// parse stays text, so the call fails as reqwest fails it.
    endpoints: [Result<reqwest::Url, String>; 2],
}

impl ProviderClient {
    /// A client for `config`, timing calls with `clock`.
    pub fn new(config: ProviderConfig, clock: SharedClock) -> Result<Self, LlmError> {
        // Never route through an environment proxy: the harness talks to
        // loopback, and a proxy would see API keys. Never follow a redirect
        // either: it would send the conversation to a host nobody named
        // (`reloop_wire::redirect`).
        ensure_crypto_provider();
        let builder = reqwest::Client::builder().no_proxy().redirect(reqwest::redirect::Policy::none());
        let http = tls::roots_for(builder, &config.base_url).build().map_err(|e| LlmError::Transport(e.to_string()))?;
        let writer = Arc::new(Mutex::new(RequestWriter::new(config.wire)));
        let endpoint = |stream| {
            let url = format!("{}{}", config.base_url, config.wire.endpoint(&config.model, stream));
            reqwest::Url::parse(&url).map_err(|_| url)
        };
        let endpoints = [endpoint(false), endpoint(true)];
        Ok(Self { http, config, clock, writer, bodies: BodyBuffers::default(), endpoints })
    }

    /// The model requests are made for.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// A freezer of tool schemas in the format and with the breakpoints
    /// this client sends.
    pub fn tool_freezer(&self) -> Freezer {
        Freezer::new(self.config.wire, self.config.cache_breakpoints.clone())
    }

    /// Whether the provider honours a client-set output slot (Roku's
    /// `supports_output_slot_cap`).
    pub fn supports_output_slot_cap(&self) -> bool {
        codec::honours_output_cap(self.config.wire)
    }

    /// One model call: streamed (calling `on_text` for each text delta) or
    /// not, per `request.stream`. A silence longer than `idle` in the run's
    /// clock, first byte included, fails the call.
    pub async fn stream_turn(&self, request: &LlmRequest<'_>, idle: Duration, on_text: &mut (dyn FnMut(&str) + Send)) -> Result<ModelTurn, LlmError> {
        let clock = self.clock.as_ref();
        let format = self.config.wire;
        let head = Prompt { context_management: self.config.context_management.clone(), ..prompt_head(&self.config.model, request) };
        let endpoint = &self.endpoints[usize::from(request.stream)];
        let (mut post, url) = match endpoint {
            Ok(parsed) => (self.http.post(parsed.clone()), parsed.as_str()),
            Err(unparsed) => (self.http.post(unparsed), unparsed.as_str()),
        };
        for (name, value) in codec::request_headers(format, &head) {
            post = post.header(name, value);
        }
        let body = {
            let mut writer = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            formats::body(&mut writer, self.bodies.take(), head, since_latest_compaction(request.messages), request.tools, &self.config.cache_breakpoints)?
        };
        let send = authenticate(format, post, &self.config.api_key).header("content-type", "application/json").body(self.bodies.lend(body)).send();
        let response =
            with_timeout(clock, idle, send).await.ok_or(LlmError::StreamIdle { after_ms: millis(idle) })?.map_err(|e| LlmError::Transport(e.to_string()))?;
        let status = response.status().as_u16();
        if reloop_wire::redirect::is_redirect(status) {
            let location = response.headers().get("location").map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
            return Err(LlmError::InvalidRequest { status, message: reloop_wire::redirect::refused(url, status, location.as_deref()) });
        }
        if !(200..300).contains(&status) {
            let retry_after = retry_after(response.headers(), clock);
            let bytes = response.bytes().await.map_err(|e| LlmError::Transport(e.to_string()))?;
            return Err(formats::classify_error(format, status, &bytes, retry_after));
        }
        if !request.stream {
            let bytes = response.bytes().await.map_err(|e| LlmError::Transport(e.to_string()))?;
            return formats::parse_complete(format, &bytes);
        }
        let mut decoder = decoder_for(format);
        read_sse(response, clock, idle, |frame| {
            for delta in decoder.push_frame(frame).map_err(wire_error)? {
                if let StreamDelta::Text(text) = delta {
                    on_text(&text);
                }
            }
            Ok(())
        })
        .await?;
        decoder.finish().map_err(wire_error)
    }
}

/// Adds the format's authentication headers.
fn authenticate(format: Format, mut request: reqwest::RequestBuilder, api_key: &str) -> reqwest::RequestBuilder {
    for (name, value) in codec::auth_headers(format, api_key) {
        request = request.header(name, value);
    }
    request
}

/// Feeds every SSE frame of `response` to `on_frame`, failing on a silence
/// longer than `idle`. A connection that breaks mid-body is a stream that
/// ended early.
async fn read_sse(
    response: reqwest::Response,
    clock: &dyn Clock,
    idle: Duration,
    mut on_frame: impl FnMut(&SseFrame) -> Result<(), LlmError> + Send,
) -> Result<(), LlmError> {
    let mut decoder = SseDecoder::new();
    let mut body = response.bytes_stream();
    loop {
        let next = with_timeout(clock, idle, body.next()).await.ok_or(LlmError::StreamIdle { after_ms: millis(idle) })?;
        match next {
            None => break,
            Some(Err(_)) => return Err(LlmError::StreamEndedEarly),
            Some(Ok(chunk)) => {
                decoder.push(&chunk);
                while let Some(frame) = decoder.next_frame() {
                    on_frame(&frame)?;
                }
            }
        }
    }
    match decoder.finish() {
        Some(frame) => on_frame(&frame),
        None => Ok(()),
    }
}

/// The provider's requested wait, from the response headers.
fn retry_after(headers: &reqwest::header::HeaderMap, clock: &dyn Clock) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    parse_retry_after(header("retry-after-ms"), header("retry-after"), clock.unix_ms())
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::WireFormat;
    use crate::message::Message;
    use crate::tool_schema::FrozenToolSchema;

    /// A Chat client of `base_url` on a virtual clock.
    fn chat_client(base_url: &str) -> ProviderClient {
        let config = ProviderConfig {
            base_url: base_url.to_owned(),
            api_key: "k".into(),
            wire: WireFormat::OpenaiChat,
            model: "m".into(),
            cache_breakpoints: Default::default(),
            context_management: None,
        };
        ProviderClient::new(config, Arc::new(crate::clock::VirtualClock::new())).unwrap()
    }

    /// A 307 to another origin is an error naming both, and the other
    /// origin is never contacted (the conversation would go there).
    #[tokio::test]
    async fn a_redirect_is_an_error_naming_both_ends_and_is_not_followed() {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        elsewhere.set_nonblocking(true).unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let target = format!("http://{}/v1/chat/completions", elsewhere.local_addr().unwrap());
        let answer = format!("HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        let redirecting = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let _ = socket.read(&mut [0u8; 65536]).unwrap();
            socket.write_all(answer.as_bytes()).unwrap();
        });
        let client = chat_client(&base_url);
        let tools = FrozenToolSchema::none();
        let request = LlmRequest { system: "s", messages: &[Message::user("hi")], tools: &tools, forbid_tools: false, max_output_tokens: 10, stream: false };
        let error = client.stream_turn(&request, Duration::from_secs(300), &mut |_| {}).await.unwrap_err();
        redirecting.join().unwrap();
        let message = error.to_string();
        assert!(message.contains(&format!("{base_url}/chat/completions")) && message.contains(&target), "{message}");
        assert!(!error.is_retryable(), "{error:?}");
        assert!(elsewhere.accept().is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock), "the redirect was followed");
    }

    /// The endpoint is parsed once, when the client is made; a base URL
    /// that does not parse still makes a client, and each call through it
    /// fails as a transport error, as reqwest fails it.
    #[tokio::test]
    async fn a_base_url_that_does_not_parse_fails_each_call_not_the_client() {
        let client = chat_client("not a url");
        let tools = FrozenToolSchema::none();
        for stream in [false, true] {
            let request = LlmRequest { system: "s", messages: &[Message::user("hi")], tools: &tools, forbid_tools: false, max_output_tokens: 10, stream };
            let error = client.stream_turn(&request, Duration::from_secs(300), &mut |_| {}).await.unwrap_err();
            assert!(matches!(error, LlmError::Transport(_)), "{error:?}");
        }
    }
}
