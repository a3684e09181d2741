//! Real-time bounds on a live call. The run's clock is virtual and moves
//! only when the loop sleeps on it, so the loop's own stream timeouts never
//! fire while it waits on a socket; the live layer bounds the upstream in
//! wall time instead, whatever the virtual clock does:
//!
//! - connecting and the answer's head must come within the idle limit
//!   (the scenario's `loop.stream_idle_timeout_secs`);
//! - after the head, each next SSE event must come within it (comments,
//!   which carry nothing, do not count: an upstream trickling `: ping`
//!   for ever is idle); a body that is not an event stream must be whole
//!   within it;
//! - an interrupt (the batch's first Ctrl-C) ends every call in flight at
//!   once, and no call starts after it.
//!
//! A call cut short is an error answer to the loop, which retries it as
//! its retry policy says.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use reloop_wire::SseDecoder;

/// How often a call in flight looks at the interrupt flag.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// The idle limit when a run does not give one (the loop's default).
const DEFAULT_IDLE: Duration = Duration::from_secs(300);

/// The bounds of one run's live calls.
#[derive(Debug, Clone)]
pub struct LiveBounds {
    idle: Duration,
    interrupted: Arc<AtomicBool>,
}

impl Default for LiveBounds {
    fn default() -> Self {
        Self { idle: DEFAULT_IDLE, interrupted: Arc::default() }
    }
}

/// Why a live call was cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Nothing came for the idle limit.
    Idle(Duration),
    /// The batch was interrupted.
    Interrupted,
}

impl Cut {
    /// What the error answer says after the upstream's URL.
    pub fn describe(self) -> String {
        match self {
            Self::Idle(idle) => format!("nothing came for {} s (loop.stream_idle_timeout_secs); the call was cut", idle.as_secs_f64()),
            Self::Interrupted => "interrupted: the live call was cancelled".to_owned(),
        }
    }
}

impl LiveBounds {
    /// These bounds with `idle` as the idle limit.
    pub fn idle_after(self, idle: Duration) -> Self {
        Self { idle, ..self }
    }

    /// These bounds, cut short once `flag` is set.
    pub fn interrupted_by(self, flag: Arc<AtomicBool>) -> Self {
        Self { interrupted: flag, ..self }
    }

    /// Whether the batch was interrupted (no call starts then).
    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// `future` (connecting and reading the head), or why it was cut.
    pub async fn head<T>(&self, future: impl Future<Output = T>) -> Result<T, Cut> {
        self.within(self.idle, future).await
    }

    /// The whole body of `answer`: event by event within the idle limit
    /// for an event stream, whole within it otherwise. `Ok(Err(_))` is a
    /// body that broke off.
    pub async fn body(&self, answer: reqwest::Response) -> Result<Result<Vec<u8>, reqwest::Error>, Cut> {
        let streamed = answer.headers().get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/event-stream"));
        if !streamed {
            return Ok(self.within(self.idle, answer.bytes()).await?.map(|bytes| bytes.to_vec()));
        }
        let mut chunks = answer.bytes_stream();
        let mut body = Vec::new();
        let mut events = SseDecoder::new();
        let mut idle_left = self.idle;
        loop {
            let started = tokio::time::Instant::now();
            let Some(chunk) = self.within(idle_left, chunks.next()).await? else { return Ok(Ok(body)) };
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(error) => return Ok(Err(error)),
            };
            body.extend_from_slice(&chunk);
            events.push(&chunk);
            let mut progressed = false;
            while events.next_frame().is_some() {
                progressed = true;
            }
            idle_left = if progressed { self.idle } else { idle_left.saturating_sub(started.elapsed()) };
        }
    }

    /// `future` unless `limit` passes or the batch is interrupted first.
    async fn within<T>(&self, limit: Duration, future: impl Future<Output = T>) -> Result<T, Cut> {
        let interrupted = async {
            while !self.interrupted() {
                tokio::time::sleep(INTERRUPT_POLL).await;
            }
        };
        tokio::select! {
            output = future => Ok(output),
            () = tokio::time::sleep(limit) => Err(Cut::Idle(self.idle)),
            () = interrupted => Err(Cut::Interrupted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_silent_future_is_cut_at_the_idle_limit_and_an_interrupt_cuts_at_once() {
        let bounds = LiveBounds::default().idle_after(Duration::from_millis(100));
        let started = std::time::Instant::now();
        assert_eq!(bounds.head(std::future::pending::<()>()).await, Err(Cut::Idle(Duration::from_millis(100))));
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(bounds.head(async { 7 }).await, Ok(7));
        let flag = Arc::new(AtomicBool::new(true));
        let interrupted = LiveBounds::default().interrupted_by(flag);
        assert_eq!(interrupted.head(std::future::pending::<()>()).await, Err(Cut::Interrupted));
        assert!(interrupted.interrupted());
    }
}
