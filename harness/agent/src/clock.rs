//! Injectable time for the loop.
//!
//! Replay must not wait for real: a scenario whose tools take minutes, or whose
//! provider backs off for 30 s, should finish in milliseconds while the report
//! still shows what a user would have waited. Every wait in the loop (tool
//! latency, backoff, simulated streaming latency, stream timeouts) goes through
//! a [`Clock`].
//!
//! Why not tokio's paused clock: it auto-advances whenever the runtime is idle,
//! and a runtime waiting for loopback I/O *is* idle, so timeouts fire while a
//! response is still in flight (tokio-rs/tokio#8232, seanmonstar/reqwest#2783).
//! [`VirtualClock`] moves only when someone sleeps on it, so a run stays a pure
//! function of its inputs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A boxed future, so that [`Clock`] stays object safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A source of "now" and of waits, shared by everything in one run.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the clock was created.
    fn now_ms(&self) -> u64;
    /// Waits `duration` in this clock's time.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
    /// Drives `future` with a deadline `limit` from now; `false` when the
    /// deadline passed first. Use [`with_timeout`] for futures with outputs.
    fn deadline<'a>(&self, limit: Duration, future: BoxFuture<'a, ()>) -> BoxFuture<'a, bool>;
    /// Milliseconds since the Unix epoch, for absolute times such as an
    /// HTTP-date `retry-after`.
    fn unix_ms(&self) -> u64;
    /// A clock for one of several concurrent pieces of work starting now.
    fn fork(&self) -> SharedClock;
    /// Continues after concurrent work on `forks` is done: virtual time moves
    /// to the latest of them, as overlapping waits take the longest one.
    fn join(&self, forks: &[SharedClock]);
}

/// Where virtual time starts on the Unix time line: 2026-01-01T00:00:00Z.
pub const VIRTUAL_EPOCH_UNIX_MS: u64 = 1_767_225_600_000;

/// Shared handle to the clock of a run.
pub type SharedClock = Arc<dyn Clock>;

/// Runs `future` under `clock`'s deadline, returning `None` on timeout.
pub async fn with_timeout<T: Send>(
    clock: &dyn Clock,
    limit: Duration,
    future: impl Future<Output = T> + Send,
) -> Option<T> {
    let mut slot = None;
    let in_time = clock
        .deadline(limit, Box::pin(async { slot = Some(future.await) }))
        .await;
    if in_time { slot } else { None }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Wall-clock time, for `reloop serve` and live providers.
#[derive(Debug, Clone, Copy)]
pub struct RealClock {
    start: Instant,
}

impl RealClock {
    /// A clock starting now.
    pub fn new() -> Self {
        Self { start: Instant::now() }
    }
}

impl Default for RealClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for RealClock {
    fn now_ms(&self) -> u64 {
        millis(self.start.elapsed())
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
    fn deadline<'a>(&self, limit: Duration, future: BoxFuture<'a, ()>) -> BoxFuture<'a, bool> {
        Box::pin(async move { tokio::time::timeout(limit, future).await.is_ok() })
    }
    fn unix_ms(&self) -> u64 {
        let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        millis(since_epoch)
    }
    fn fork(&self) -> SharedClock {
        Arc::new(*self)
    }
    fn join(&self, _: &[SharedClock]) {}
}

/// Simulated time: sleeping advances the clock at once and returns.
///
/// A deadline runs its future to completion and then judges it by the
/// virtual time that passed meanwhile. Past the limit, the clock is set back
/// to the deadline and expiry is reported, as a real timer would have fired
/// at that instant. This is exact as long as only sleeps move time, which is
/// what the harness guarantees.
#[derive(Debug, Default, Clone)]
pub struct VirtualClock {
    now_ms: Arc<AtomicU64>,
}

impl VirtualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    fn at(now_ms: u64) -> Self {
        Self { now_ms: Arc::new(AtomicU64::new(now_ms)) }
    }
}

impl Clock for VirtualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::SeqCst)
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.now_ms.fetch_add(millis(duration), Ordering::SeqCst);
        Box::pin(std::future::ready(()))
    }
    fn deadline<'a>(&self, limit: Duration, future: BoxFuture<'a, ()>) -> BoxFuture<'a, bool> {
        let now = Arc::clone(&self.now_ms);
        let deadline = self.now_ms().saturating_add(millis(limit));
        Box::pin(async move {
            future.await;
            if now.load(Ordering::SeqCst) > deadline {
                now.store(deadline, Ordering::SeqCst);
                false
            } else {
                true
            }
        })
    }
    fn unix_ms(&self) -> u64 {
        VIRTUAL_EPOCH_UNIX_MS + self.now_ms()
    }
    fn fork(&self) -> SharedClock {
        Arc::new(Self::at(self.now_ms()))
    }
    fn join(&self, forks: &[SharedClock]) {
        let latest = forks.iter().map(|fork| fork.now_ms()).max().unwrap_or(0);
        self.now_ms.fetch_max(latest, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn virtual_sleep_advances_without_waiting() {
        let clock = VirtualClock::new();
        let wall = Instant::now();
        clock.sleep(Duration::from_secs(600)).await;
        assert_eq!(clock.now_ms(), 600_000);
        assert!(wall.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn virtual_deadline_expires_at_the_deadline() {
        let clock = VirtualClock::new();
        let inner = clock.clone();
        let result = with_timeout(&clock, Duration::from_secs(300), async move {
            inner.sleep(Duration::from_secs(400)).await;
            7
        })
        .await;
        assert_eq!(result, None);
        assert_eq!(clock.now_ms(), 300_000);
    }

    #[tokio::test]
    async fn concurrent_waits_overlap() {
        let clock = VirtualClock::new();
        clock.sleep(Duration::from_secs(1)).await;
        let forks = [clock.fork(), clock.fork()];
        forks[0].sleep(Duration::from_secs(3)).await;
        forks[1].sleep(Duration::from_secs(5)).await;
        clock.join(&forks);
        assert_eq!(clock.now_ms(), 6_000, "1 s, then 3 s and 5 s side by side");
        assert_eq!(clock.unix_ms(), VIRTUAL_EPOCH_UNIX_MS + 6_000);
    }

    #[tokio::test]
    async fn virtual_deadline_passes_work_that_finishes_in_time() {
        let clock = VirtualClock::new();
        let inner = clock.clone();
        let result = with_timeout(&clock, Duration::from_secs(300), async move {
            inner.sleep(Duration::from_secs(299)).await;
            7
        })
        .await;
        assert_eq!(result, Some(7));
        assert_eq!(clock.now_ms(), 299_000);
    }
}
