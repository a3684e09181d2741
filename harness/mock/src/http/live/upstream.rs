//! Where live calls go (an OpenAI-, Anthropic- or Gemini-compatible
//! server) and how one is forwarded: the client's credentials dropped and
//! the key from the environment added, the answer read whole within the
//! bounds and scrubbed of that key the moment it arrives.
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use reloop_recording::capture::{InjectedSecrets, Observed, Redaction, SECRET_HEADERS, url_shown};
use reloop_recording::session_path::without_session;
use reloop_wire::{Format, codec};

use super::bounds::{Cut, LiveBounds};
use crate::http::record::UpstreamBase;
use crate::http::record::proxy::{forwarded, pairs, upstream_client};
use crate::replay::trigger::Trigger;

/// Where live calls go and what is kept of their answers.
#[derive(Debug, Clone)]
pub struct Upstream {
    base: UpstreamBase,
    model: Option<String>,
    trigger: Trigger,
    redaction: Redaction,
    client: reqwest::Client,
    bounds: LiveBounds,
}

impl Upstream {
    /// An upstream at `base` (`http://` or `https://`, host and port,
    /// optionally a path prefix; the API path is appended), asked for
    /// `model` instead of the client's when given, with the keys the
    /// environment holds now. `Err` says why not.
    pub fn new(base: &str, model: Option<String>, trigger: Trigger, redaction: Redaction) -> Result<Self, String> {
        let base = UpstreamBase::parse(base)?;
        let client = upstream_client().map_err(|e| format!("cannot make an HTTP client: {e}"))?;
        let redaction = redaction.with_secrets(InjectedSecrets::from_environment());
        Ok(Self { base, model, trigger, redaction, client, bounds: LiveBounds::default() })
    }

    /// This upstream with `idle` as the real-time limit on every wait (a
    /// run's `loop.stream_idle_timeout_secs`).
    pub fn idle_after(self, idle: Duration) -> Self {
        Self { bounds: self.bounds.idle_after(idle), ..self }
    }

    /// This upstream, whose calls in flight end once `flag` is set (the
    /// batch's first Ctrl-C).
    pub fn interrupted_by(self, flag: Arc<AtomicBool>) -> Self {
        Self { bounds: self.bounds.interrupted_by(flag), ..self }
    }

    /// When requests go live.
    pub fn trigger(&self) -> Trigger {
        self.trigger
    }

    /// What is stripped from live exchanges.
    pub fn redaction(&self) -> &Redaction {
        &self.redaction
    }

    /// The upstream request for a call the client sent to `path` in
    /// `format`: the session prefix and any `key=` query gone, the model
    /// replaced when one is given, the client's credentials dropped and
    /// the environment's key added.
    pub(super) fn request(&self, format: Format, path: &str, headers: &HeaderMap, body: &Bytes) -> (String, reqwest::RequestBuilder) {
        let api_path = self.api_path(path);
        let body = match (&self.model, format) {
            (Some(model), format) if format.model_in_body() => with_model(body, model),
            _ => body.clone(),
        };
        let mut outgoing = self.client.post(self.base.join(&api_path)).body(body);
        for (name, value) in headers {
            if forwarded(name.as_str()) && !SECRET_HEADERS.contains(&name.as_str()) && !self.redaction.strips_header(name.as_str()) {
                outgoing = outgoing.header(name, value);
            }
        }
        // The key as the API takes it; the other headers the codec adds
        // (`anthropic-version`) only where the client sent none, so the
        // client's own stays the one the upstream reads.
        if let Some(key) = self.redaction.secrets().key_for(format) {
            for (name, value) in codec::auth_headers(format, key) {
                if SECRET_HEADERS.contains(&name) || !headers.contains_key(name) {
                    outgoing = outgoing.header(name, value);
                }
            }
        }
        (api_path, outgoing)
    }

    /// `path` as the upstream's API path: without the session prefix
    /// (`/s/NAME/…`, `/s/NAME/r/RUN/…`), the query's `key=` dropped, and a
    /// Gemini model replaced when one is given.
    pub(super) fn api_path(&self, path: &str) -> String {
        let path = without_session(path);
        let (path, query) = path.split_once('?').map_or((path, None), |(path, query)| (path, Some(query)));
        let query: Vec<&str> = query.into_iter().flat_map(|q| q.split('&')).filter(|pair| !pair.starts_with("key=") && !pair.is_empty()).collect();
        let path = match (&self.model, path.rsplit_once("/models/")) {
            (Some(model), Some((head, action))) if action.contains(':') => {
                format!("{head}/models/{model}:{}", action.rsplit_once(':').map_or("", |(_, method)| method))
            }
            _ => path.to_owned(),
        };
        if query.is_empty() { path } else { format!("{path}?{}", query.join("&")) }
    }
}

/// `body` (a JSON request) asking for `model`; unchanged when it is not JSON.
fn with_model(body: &Bytes, model: &str) -> Bytes {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(mut fields)) => {
            fields.insert("model".into(), serde_json::Value::String(model.to_owned()));
            Bytes::from(serde_json::Value::Object(fields).to_string())
        }
        _ => body.clone(),
    }
}

/// A call the upstream did not answer: the status and message the client
/// is answered with, and whether the upstream could not be reached at all
/// (no connection: the harness's failure, not the agent's).
pub(super) struct Failed {
    pub(super) status: StatusCode,
    pub(super) message: String,
    pub(super) unreachable: bool,
}

impl From<(StatusCode, String)> for Failed {
    fn from((status, message): (StatusCode, String)) -> Self {
        Self { status, message, unreachable: false }
    }
}

/// Sends a call to the upstream and reads its whole answer, within the
/// upstream's real-time bounds, scrubbed of the keys it was sent (the one
/// place a live answer enters reloop: everything after sees it scrubbed).
/// `Err` is what the client is answered with: the upstream unreachable,
/// cut short, or redirecting (never followed).
pub(super) async fn forward(upstream: &Upstream, format: Format, path: &str, headers: &HeaderMap, body: Bytes) -> Result<Observed, Failed> {
    let (api_path, outgoing) = upstream.request(format, path, headers, &body);
    let shown = || url_shown(&upstream.base.join(&api_path));
    let cut = |cut: Cut| {
        let status = if cut == Cut::Interrupted { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::GATEWAY_TIMEOUT };
        Failed::from((status, format!("reloop: upstream {}: {}", shown(), cut.describe())))
    };
    let broken = |error: reqwest::Error| Failed {
        status: StatusCode::BAD_GATEWAY,
        unreachable: error.is_connect(),
        message: format!("reloop: upstream {}: {}", shown(), error.without_url()),
    };
    if upstream.bounds.interrupted() {
        return Err(cut(Cut::Interrupted));
    }
    let answer = upstream.bounds.head(outgoing.send()).await.map_err(cut)?.map_err(broken)?;
    let status = answer.status().as_u16();
    let secrets = upstream.redaction.secrets();
    if reloop_wire::redirect::is_redirect(status) {
        let location = answer.headers().get("location").map(|value| secrets.text(&String::from_utf8_lossy(value.as_bytes())).into_owned());
        return Err(Failed::from((
            StatusCode::BAD_GATEWAY,
            format!("reloop: upstream {}", reloop_wire::redirect::refused(&shown(), status, location.as_deref())),
        )));
    }
    let response_headers = pairs(answer.headers()).into_iter().map(|(name, value)| (name, secrets.text(&value).into_owned())).collect();
    let response_body = secrets.bytes(&upstream.bounds.body(answer).await.map_err(cut)?.map_err(broken)?);
    Ok(Observed { path: api_path, request_headers: pairs(headers), request_body: body, status, response_headers, response_body })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::session::ReplayRequest;
    use crate::replay::trigger::RecordMode;

    fn upstream(model: Option<&str>) -> Upstream {
        Upstream::new("http://127.0.0.1:9/prefix/", model.map(str::to_owned), Trigger::default(), Redaction::new(&[], &[]).unwrap()).unwrap()
    }

    /// A session over a tool call then an answer, and the requests that
    /// make and answer the call (the second one answering it or not).
    fn session_and_requests() -> (crate::Session, reloop_wire::Prompt, reloop_wire::Prompt) {
        use reloop_wire::{Message, Prompt, ToolSpec};
        let recording: crate::Recording = serde_json::from_value(serde_json::json!({
            "format": "reloop.recording/v1",
            "exchanges": [{ "text": "one", "tool_calls": [{ "name": "probe", "arguments": {} }] }, { "text": "two" }],
        }))
        .unwrap();
        let config = crate::SessionConfig {
            recording: Arc::new(recording),
            context_window: None,
            pacer: Arc::new(crate::NoPacer),
            faults: Vec::new(),
            provider_tokens: None,
        };
        let tools = vec![ToolSpec { name: "probe".into(), description: "Probe.".into(), parameters: serde_json::Value::Null }];
        let first = Prompt { model: "m".into(), messages: vec![Message::User { text: "go".into() }], tools, ..Prompt::default() };
        let unanswered = Prompt { messages: vec![Message::User { text: "go".into() }, Message::User { text: "again".into() }], ..first.clone() };
        (crate::Session::new(config).unwrap(), first, unanswered)
    }

    #[test]
    fn new_goes_live_at_the_first_divergence_and_stays_live() {
        let (session, first, unanswered) = session_and_requests();
        let new = Trigger { mode: RecordMode::New, fork_at: None };
        assert!(!session.goes_live(&first, &crate::replay::session::Caching::Automatic, new));
        session.handle(ReplayRequest::new(&first));
        assert!(!session.goes_live(&first, &crate::replay::session::Caching::Automatic, new), "a retry stays replayed");
        assert!(session.goes_live(&unanswered, &crate::replay::session::Caching::Automatic, new), "the call is not answered: a divergence");
        assert!(!session.goes_live(&unanswered, &crate::replay::session::Caching::Automatic, Trigger::default()), "once never goes live");
        let live: reloop_recording::Exchange = serde_json::from_value(serde_json::json!({ "parts": [{ "type": "text", "text": "live" }] })).unwrap();
        session.handle(ReplayRequest { live: Some(live), ..ReplayRequest::new(&unanswered) });
        assert!(session.goes_live(&first, &crate::replay::session::Caching::Automatic, Trigger::default()), "once live, always live");
        let log = session.log();
        assert_eq!((log[1].live, log[1].exchange), (true, Some(2)), "live exchanges number on past the recording's");
        let rerecorded = session.rerecorded(&["header:x".into()]);
        let texts: Vec<String> = rerecorded.exchanges.iter().map(reloop_recording::Exchange::text).collect();
        assert_eq!((texts, rerecorded.redacted), (vec!["one".to_owned(), "live".to_owned()], vec!["header:x".to_owned()]));
        // The log's numbers, where the re-recording holds them: the live exchange 2 is its second.
        assert_eq!([0, 1, 2, 3].map(|exchange| session.rerecorded_index(exchange)), [Some(0), None, Some(1), None]);
    }

    #[test]
    fn the_request_hook_sees_each_request_before_its_answer_with_the_exchange_served_last() {
        let (session, first, unanswered) = session_and_requests();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        assert!(session.on_request(move |served| kept.lock().unwrap().push(served)));
        assert!(!session.on_request(|_| ()), "one hook");
        session.handle(ReplayRequest::new(&first));
        session.handle(ReplayRequest::new(&unanswered));
        session.handle(ReplayRequest::new(&unanswered));
        assert_eq!(*seen.lock().unwrap(), [None, Some(0), Some(0)], "a divergence serves no exchange");
        assert_eq!(session.last_served(), Some(0));
    }

    #[test]
    fn fork_at_goes_live_once_that_many_exchanges_were_replayed() {
        let (session, first, _) = session_and_requests();
        let fork = Trigger { mode: RecordMode::Once, fork_at: Some(1) };
        assert!(!session.goes_live(&first, &crate::replay::session::Caching::Automatic, fork));
        session.handle(ReplayRequest::new(&first));
        assert!(session.goes_live(&first, &crate::replay::session::Caching::Automatic, fork));
        assert!(
            session.goes_live(&first, &crate::replay::session::Caching::Automatic, Trigger { fork_at: Some(0), ..fork }),
            "--fork-at 0: live from the start"
        );
    }

    #[test]
    fn the_session_prefix_and_a_query_key_do_not_reach_the_upstream() {
        let upstream = upstream(None);
        assert_eq!(upstream.api_path("/s/run/v1/chat/completions"), "/v1/chat/completions");
        assert_eq!(upstream.api_path("/s/a/r/2/v1/messages"), "/v1/messages");
        assert_eq!(upstream.api_path("/v1beta/models/g:streamGenerateContent?alt=sse&key=AIzaSecret"), "/v1beta/models/g:streamGenerateContent?alt=sse");
        assert_eq!(upstream.base.join("/v1/messages"), "http://127.0.0.1:9/prefix/v1/messages");
    }

    #[test]
    fn the_upstream_model_replaces_the_clients() {
        let upstream = upstream(Some("llama3"));
        assert_eq!(upstream.api_path("/s/run/v1beta/models/gemini-x:generateContent"), "/v1beta/models/llama3:generateContent");
        let body = with_model(&Bytes::from(r#"{"model":"gpt-x","messages":[]}"#), "llama3");
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&body).unwrap()["model"], "llama3");
        assert_eq!(with_model(&Bytes::from("not json"), "m"), Bytes::from("not json"));
    }

    #[test]
    fn the_clients_key_is_dropped_and_the_environments_used() {
        let upstream = upstream(None);
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", "sk-client".parse().unwrap());
        headers.insert("authorization", "Bearer sk-client".parse().unwrap());
        headers.insert("anthropic-version", "2023-06-01".parse().unwrap());
        let (_, request) = upstream.request(Format::Anthropic, "/s/run/v1/messages", &headers, &Bytes::from("{}"));
        let request = request.build().unwrap();
        assert!(request.headers().get("authorization").is_none());
        assert_ne!(request.headers().get("x-api-key").map(|v| v.to_str().unwrap()), Some("sk-client"));
        assert_eq!(request.headers()["anthropic-version"], "2023-06-01");
        assert!(Upstream::new("ftp://x", None, Trigger::default(), Redaction::new(&[], &[]).unwrap()).is_err());
    }
}
