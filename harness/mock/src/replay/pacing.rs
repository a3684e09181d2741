//! How the server waits between streamed chunks.
//!
//! In replay the waits run on the run's virtual clock (the harness adapts its
//! clock into a [`Pacer`]), so recorded latency costs no real time yet shows
//! in the report; `reloop serve` paces on the wall clock for outside clients.
//! The trait lives here because this crate must not depend on the agent.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

/// A boxed, sendable future.
pub type PaceFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A clock the server can wait on.
pub trait Pacer: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the pacer's epoch.
    fn now_ms(&self) -> u64;
    /// Waits `duration`.
    fn wait(&self, duration: Duration) -> PaceFuture;
}

/// Wall-clock pacing.
#[derive(Debug)]
pub struct RealPacer {
    start: Instant,
}

impl Default for RealPacer {
    fn default() -> Self {
        Self { start: Instant::now() }
    }
}

impl Pacer for RealPacer {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
    fn wait(&self, duration: Duration) -> PaceFuture {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// No waiting at all: for `reloop serve` without `--realtime`.
#[derive(Debug, Default)]
pub struct NoPacer;

impl Pacer for NoPacer {
    fn now_ms(&self) -> u64 {
        0
    }
    fn wait(&self, _: Duration) -> PaceFuture {
        Box::pin(std::future::ready(()))
    }
}
