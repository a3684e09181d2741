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
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
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
pub async fn with_timeout<T: Send>(clock: &dyn Clock, limit: Duration, future: impl Future<Output = T> + Send) -> Option<T> {
    let mut slot = None;
    let in_time = clock.deadline(limit, Box::pin(async { slot = Some(future.await) })).await;
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
/// Deadlines are registered with the clock. A sleep that would cross the
/// earliest active deadline instead moves the clock to that deadline, expires
/// it, and never returns: the work under the deadline is abandoned at the
/// instant a real timer would have fired, so nothing after it (a retry, a
/// backoff, a late request) happens. This is exact as long as only sleeps
/// move time, which is what the harness guarantees.
#[derive(Debug, Default, Clone)]
pub struct VirtualClock {
    inner: Arc<VirtualInner>,
}

#[derive(Debug, Default)]
struct VirtualInner {
    now_ms: AtomicU64,
    deadlines: Mutex<Vec<Arc<VirtualDeadline>>>,
}

/// One registered deadline.
#[derive(Debug)]
struct VirtualDeadline {
    at_ms: u64,
    expired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl VirtualDeadline {
    fn expire(&self) {
        self.expired.store(true, Ordering::SeqCst);
        if let Some(waker) = self.waker.lock().expect("deadline waker poisoned").take() {
            waker.wake();
        }
    }
}

/// Resolves once its deadline expired.
struct Expiry(Arc<VirtualDeadline>);

impl Future for Expiry {
    type Output = ();
    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        *self.0.waker.lock().expect("deadline waker poisoned") = Some(context.waker().clone());
        if self.0.expired.load(Ordering::SeqCst) { Poll::Ready(()) } else { Poll::Pending }
    }
}

/// Unregisters a deadline when its future ends or is dropped.
struct Registration {
    clock: Arc<VirtualInner>,
    deadline: Arc<VirtualDeadline>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut deadlines = self.clock.deadlines.lock().expect("deadlines poisoned");
        deadlines.retain(|d| !Arc::ptr_eq(d, &self.deadline));
    }
}

impl VirtualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    fn at(now_ms: u64) -> Self {
        let clock = Self::default();
        clock.inner.now_ms.store(now_ms, Ordering::SeqCst);
        clock
    }
}

impl Clock for VirtualClock {
    fn now_ms(&self) -> u64 {
        self.inner.now_ms.load(Ordering::SeqCst)
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let target = self.now_ms().saturating_add(millis(duration));
        let deadlines = self.inner.deadlines.lock().expect("deadlines poisoned");
        let crossed = deadlines.iter().filter(|d| !d.expired.load(Ordering::SeqCst) && d.at_ms < target).map(|d| d.at_ms).min();
        match crossed {
            None => {
                self.inner.now_ms.fetch_max(target, Ordering::SeqCst);
                Box::pin(std::future::ready(()))
            }
            Some(at_ms) => {
                self.inner.now_ms.fetch_max(at_ms, Ordering::SeqCst);
                deadlines.iter().filter(|d| d.at_ms <= at_ms).for_each(|d| d.expire());
                Box::pin(std::future::pending())
            }
        }
    }
    fn deadline<'a>(&self, limit: Duration, future: BoxFuture<'a, ()>) -> BoxFuture<'a, bool> {
        let deadline =
            Arc::new(VirtualDeadline { at_ms: self.now_ms().saturating_add(millis(limit)), expired: AtomicBool::new(false), waker: Mutex::new(None) });
        self.inner.deadlines.lock().expect("deadlines poisoned").push(Arc::clone(&deadline));
        let registration = Registration { clock: Arc::clone(&self.inner), deadline: Arc::clone(&deadline) };
        let at_ms = deadline.at_ms;
        Box::pin(async move {
            let clock = Arc::clone(&registration.clock);
            let _registration = registration;
            // The expiry is polled first: once a deadline has passed, the
            // work under it must not take even one more step.
            match futures_util::future::select(Expiry(deadline), future).await {
                futures_util::future::Either::Left(_) => {
                    // A fork may have crossed it: this clock reads the deadline too.
                    clock.now_ms.fetch_max(at_ms, Ordering::SeqCst);
                    false
                }
                futures_util::future::Either::Right(_) => true,
            }
        })
    }
    fn unix_ms(&self) -> u64 {
        VIRTUAL_EPOCH_UNIX_MS + self.now_ms()
    }
    /// The fork inherits the deadlines active now: work forked under a
    /// deadline (a sub-agent's tools) is still bounded by it. Deadlines set
    /// on the fork stay its own.
    fn fork(&self) -> SharedClock {
        let fork = Self::at(self.now_ms());
        let inherited = self.inner.deadlines.lock().expect("deadlines poisoned").clone();
        *fork.inner.deadlines.lock().expect("deadlines poisoned") = inherited;
        Arc::new(fork)
    }
    fn join(&self, forks: &[SharedClock]) {
        let latest = forks.iter().map(|fork| fork.now_ms()).max().unwrap_or(0);
        self.inner.now_ms.fetch_max(latest, Ordering::SeqCst);
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
    async fn nothing_runs_past_an_expired_deadline() {
        // Regression: work under a deadline went on after it (a summary's
        // retries kept running past its 300 s limit).
        let clock = VirtualClock::new();
        let inner = clock.clone();
        let steps = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&steps);
        let result = with_timeout(&clock, Duration::from_secs(300), async move {
            for _ in 0..5 {
                inner.sleep(Duration::from_secs(100)).await;
                counted.fetch_add(1, Ordering::SeqCst);
            }
        })
        .await;
        assert_eq!(result, None);
        assert_eq!(steps.load(Ordering::SeqCst), 3, "the fourth sleep crosses the deadline at 300 s");
        assert_eq!(clock.now_ms(), 300_000);
        clock.sleep(Duration::from_secs(1)).await;
        assert_eq!(clock.now_ms(), 301_000, "an expired deadline no longer bounds later sleeps");
    }

    #[tokio::test]
    async fn the_earliest_of_nested_deadlines_fires() {
        let clock = VirtualClock::new();
        let inner = clock.clone();
        let outer = with_timeout(&clock, Duration::from_secs(300), async move {
            let nested = inner.clone();
            let first = with_timeout(&inner, Duration::from_secs(60), async move { nested.sleep(Duration::from_secs(90)).await }).await;
            (first, inner.now_ms())
        })
        .await;
        assert_eq!(outer, Some((None, 60_000)));
    }

    #[tokio::test]
    async fn a_fork_is_bounded_by_the_deadline_it_was_forked_under() {
        // Regression: a sub-agent's tool ran on a fork that did not know the
        // sub-agent's timeout, so the child went on past it.
        let clock = VirtualClock::new();
        let inner = clock.clone();
        let result = with_timeout(&clock, Duration::from_secs(120), async move {
            let forks = [inner.fork()];
            forks[0].sleep(Duration::from_secs(150)).await;
            inner.join(&forks);
            7
        })
        .await;
        assert_eq!(result, None);
        assert_eq!(clock.now_ms(), 120_000);
        let fork = clock.fork();
        fork.sleep(Duration::from_secs(10)).await;
        assert_eq!(fork.now_ms(), 130_000, "an expired deadline bounds no later fork");
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
