//! The sessions a server serves, by name: made on demand by a factory
//! within [`SessionLimits`] (idle ones released, a cap on live ones), and
//! what the server does beside answering (the request log, the JSON log,
//! where live calls go).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::http::json_log::JsonLog;
use crate::http::live::upstream::Upstream;
use crate::replay::session::{Session, SessionConfig};

/// Makes a session for a name on first use (for `reloop serve`).
pub type SessionFactory = Box<dyn Fn(&str) -> Option<SessionConfig> + Send + Sync>;

/// How long sessions made on demand live, and how many at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// A session unused this long is released (its next request starts a
    /// fresh replay).
    pub idle_ttl: Duration,
    /// Live sessions at most; a new name beyond it gets 503.
    pub max_sessions: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self { idle_ttl: Duration::from_secs(300), max_sessions: 4096 }
    }
}

/// Why a session cannot be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRefusal {
    /// No session, and no recording, by that name.
    Unknown,
    /// The cap on live sessions is reached.
    Full,
}

/// A session and when it was last asked for.
struct Live {
    session: Arc<Session>,
    last_used: Instant,
}

/// Sessions by name.
#[derive(Default)]
pub struct Registry {
    sessions: Mutex<HashMap<String, Live>>,
    factory: Option<SessionFactory>,
    /// Limits on factory-made sessions; `None` keeps every session (runs).
    limits: Option<SessionLimits>,
    pub(crate) log_requests: bool,
    /// `serve --log-json`: a JSON-lines file per session besides stderr.
    pub(crate) json_log: Option<JsonLog>,
    /// `run --upstream`: where calls that go live are sent (`crate::http::live`).
    live: Option<Arc<Upstream>>,
    /// `serve --upstream`: told of each session that took a call live,
    /// before the client has the answer, so its re-recording is written
    /// before the session can be released or the client can look for it.
    live_sink: Option<LiveSink>,
}

/// A session that took a call live, and the sender the sink's owner
/// answers once it has done with it (written its re-recording).
#[derive(Debug)]
pub struct WentLive {
    /// The session's name.
    pub name: String,
    /// The session.
    pub session: Arc<Session>,
    /// Dropped or sent when done: the live answer waits for it.
    pub done: tokio::sync::oneshot::Sender<()>,
}

/// Where a registry sends each session after each of its live calls.
pub type LiveSink = tokio::sync::mpsc::UnboundedSender<WentLive>;

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").field("log_requests", &self.log_requests).finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry that creates unknown sessions with `factory` and logs
    /// every request to standard error.
    pub fn serving(factory: SessionFactory, limits: SessionLimits) -> Self {
        Self { sessions: Mutex::default(), factory: Some(factory), limits: Some(limits), log_requests: true, json_log: None, live: None, live_sink: None }
    }

    /// This registry, also logging each session's requests as JSON lines.
    pub fn with_json_log(self, log: JsonLog) -> Self {
        Self { json_log: Some(log), ..self }
    }

    /// This registry, sending the calls its sessions take live to `upstream`.
    pub fn with_live(self, upstream: Upstream) -> Self {
        Self { live: Some(Arc::new(upstream)), ..self }
    }

    /// This registry, telling `sink` of each session after each of its live calls.
    pub fn with_live_sink(self, sink: LiveSink) -> Self {
        Self { live_sink: Some(sink), ..self }
    }

    /// Where live calls go, if anywhere.
    pub(crate) fn live(&self) -> Option<&Arc<Upstream>> {
        self.live.as_ref()
    }

    /// Tells the live sink, if any, that `session` took a call live, and
    /// waits until its owner is done with it.
    pub(crate) async fn went_live(&self, name: &str, session: &Arc<Session>) {
        let Some(sink) = &self.live_sink else { return };
        let (done, finished) = tokio::sync::oneshot::channel();
        // A receiver gone (the server stopping) has written what it will.
        if sink.send(WentLive { name: name.to_owned(), session: Arc::clone(session), done }).is_ok() {
            let _ = finished.await;
        }
    }

    /// Adds or replaces a session.
    pub fn insert(&self, name: impl Into<String>, session: Arc<Session>) {
        self.lock().insert(name.into(), Live { session, last_used: Instant::now() });
    }

    /// The session called `name`, made by the factory on first use (after
    /// releasing idle sessions, within the cap).
    pub fn get(&self, name: &str) -> Result<Arc<Session>, SessionRefusal> {
        let mut sessions = self.lock();
        let now = Instant::now();
        if let Some(live) = sessions.get_mut(name) {
            live.last_used = now;
            return Ok(Arc::clone(&live.session));
        }
        if let Some(limits) = self.limits {
            sessions.retain(|_, live| now.duration_since(live.last_used) < limits.idle_ttl);
            if sessions.len() >= limits.max_sessions {
                return Err(SessionRefusal::Full);
            }
        }
        let config = self.factory.as_ref().and_then(|make| make(name)).ok_or(SessionRefusal::Unknown)?;
        let session = Arc::new(Session::new(config).map_err(|_| SessionRefusal::Unknown)?);
        sessions.insert(name.to_owned(), Live { session: Arc::clone(&session), last_used: now });
        Ok(session)
    }

    /// Ends session `name`, releasing its state; whether it was live.
    pub fn end(&self, name: &str) -> bool {
        self.lock().remove(name).is_some()
    }

    /// How many sessions are live.
    pub fn live_sessions(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.sessions.lock().expect("session registry poisoned")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::pacing::NoPacer;

    fn registry(limits: SessionLimits) -> Registry {
        let recording = Arc::new(reloop_recording::Recording::default());
        let factory: SessionFactory = Box::new(move |name: &str| {
            (name != "unknown").then(|| SessionConfig {
                recording: Arc::clone(&recording),
                context_window: None,
                pacer: Arc::new(NoPacer),
                faults: Vec::new(),
                provider_tokens: None,
            })
        });
        Registry::serving(factory, limits)
    }

    #[test]
    fn sessions_are_made_once_on_demand_within_the_cap() {
        let registry = registry(SessionLimits { idle_ttl: Duration::from_secs(3600), max_sessions: 2 });
        let first = registry.get("a").unwrap();
        assert!(Arc::ptr_eq(&first, &registry.get("a").unwrap()), "the same session on the second ask");
        assert_eq!(registry.get("unknown").unwrap_err(), SessionRefusal::Unknown);
        registry.get("b").unwrap();
        assert_eq!(registry.get("c").unwrap_err(), SessionRefusal::Full);
        assert!(registry.end("a") && !registry.end("a"));
        assert!(registry.get("c").is_ok() && registry.live_sessions() == 2);
    }

    #[test]
    fn idle_sessions_are_released_for_new_ones() {
        let registry = registry(SessionLimits { idle_ttl: Duration::ZERO, max_sessions: 1 });
        let first = registry.get("a").unwrap();
        registry.get("b").unwrap();
        assert_eq!(registry.live_sessions(), 1);
        assert!(!Arc::ptr_eq(&first, &registry.get("a").unwrap()), "released, so a fresh replay");
    }
}
