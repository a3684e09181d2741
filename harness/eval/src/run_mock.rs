//! The mock server of one run: a loopback server with one session replaying
//! the scenario's recording, paced by the run's virtual clock. The built-in
//! loop and a black-box agent both talk to it.

use std::sync::Arc;
use std::time::Duration;

use reloop_agent::SharedClock;
use reloop_mock::connections::DEFAULT_MAX_BODY_BYTES;
use reloop_mock::pacing::PaceFuture;
use reloop_mock::{ConnectionLimits, MockServer, Pacer, Registry, Session, SessionConfig};

use crate::scenario::Scenario;

/// The run's mock server on an ephemeral loopback port, with one session
/// `run` replaying the scenario's recording with its faults, paced by the
/// run's clock.
pub async fn start_mock(scenario: &Scenario, clock: &SharedClock) -> Result<(MockServer, Arc<Session>), String> {
    let registry = Arc::new(match &scenario.live {
        // Live calls are bounded in real time by the run's idle limit.
        Some(live) => Registry::default().with_live(live.upstream.clone().idle_after(scenario.loop_settings.stream_idle_timeout())),
        None => Registry::default(),
    });
    let limits = ConnectionLimits { max_body_bytes: max_body_bytes(scenario.spec.context_window), ..ConnectionLimits::default() };
    let server = MockServer::start_with(0, Arc::clone(&registry), limits).await.map_err(|e| format!("cannot bind loopback: {e}"))?;
    let session = Arc::new(
        Session::new(SessionConfig {
            recording: with_preset_auxiliary(scenario),
            context_window: Some(scenario.spec.context_window),
            pacer: Arc::new(ClockPacer(Arc::clone(clock))),
            faults: scenario.spec.faults.clone(),
            provider_tokens: scenario.spec.provider_tokens,
        })
        .map_err(|e| format!("invalid fault: {e}"))?,
    );
    registry.insert("run", Arc::clone(&session));
    Ok((server, session))
}

/// The largest request body the run's mock reads: 8 bytes per token of
/// the scenario's window (a token is about 4 bytes of text, and JSON may
/// escape each byte of it) plus 1 MiB for the rest of the request, never
/// below the server's default. A request the window admits is never
/// refused for its size by reloop's own mock.
fn max_body_bytes(context_window: u64) -> usize {
    let window = usize::try_from(context_window.saturating_mul(8)).unwrap_or(usize::MAX);
    window.saturating_add(1024 * 1024).max(DEFAULT_MAX_BODY_BYTES)
}

/// The scenario's recording, with its agent preset's side-request rules
/// added to its `auxiliary:` list (after the recording's own, which win).
fn with_preset_auxiliary(scenario: &Scenario) -> Arc<reloop_recording::Recording> {
    let rules = scenario.spec.agent.as_ref().and_then(|agent| agent.preset).map_or(&[][..], |preset| preset.launch().auxiliary);
    if rules.is_empty() {
        return Arc::clone(&scenario.recording);
    }
    let mut recording = (*scenario.recording).clone();
    let answers = rules.iter().map(|(when, text)| reloop_recording::AuxiliaryAnswer { when: Some((*when).to_owned()), text: (*text).to_owned() });
    recording.auxiliary.extend(answers);
    Arc::new(recording)
}

/// The run's clock, as the mock server's pacer: streamed latency advances
/// the same virtual time the loop's timeouts are judged by.
#[derive(Debug)]
struct ClockPacer(SharedClock);

impl Pacer for ClockPacer {
    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }
    fn wait(&self, duration: Duration) -> PaceFuture {
        self.0.sleep(duration)
    }
}
