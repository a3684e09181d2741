//! The mock server of one run: a loopback server with one session replaying
//! the scenario's recording, paced by the run's virtual clock. The built-in
//! loop and a black-box agent both talk to it.

use std::sync::Arc;
use std::time::Duration;

use reloop_agent::SharedClock;
use reloop_mock::pacing::PaceFuture;
use reloop_mock::{MockServer, Pacer, Registry, Session, SessionConfig};

use crate::scenario::Scenario;

/// The run's mock server on an ephemeral loopback port, with one session
/// `run` replaying the scenario's recording with its faults, paced by the
/// run's clock.
pub async fn start_mock(scenario: &Scenario, clock: &SharedClock) -> Result<(MockServer, Arc<Session>), String> {
    let registry = Arc::new(Registry::default());
    let server = MockServer::start(0, Arc::clone(&registry)).await.map_err(|e| format!("cannot bind loopback: {e}"))?;
    let session = Arc::new(
        Session::new(SessionConfig {
            recording: Arc::clone(&scenario.recording),
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

