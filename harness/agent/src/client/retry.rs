//! When to retry a failed model call and how long to wait: the provider's
//! own `retry-after-ms` / `retry-after` first, else exponential backoff
//! (OpenCode: from 2 s, doubling, capped at 30 s).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::LlmError;

/// Retry settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff, ms.
    pub initial_backoff_ms: u64,
    /// The backoff cap, ms; also caps waits the provider asks for.
    pub max_backoff_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_retries: 5, initial_backoff_ms: 2_000, max_backoff_ms: 30_000 }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based) after `error`, or
    /// `None` when the call must not be retried.
    pub fn wait_before(&self, retry: u32, error: &LlmError) -> Option<Duration> {
        if !error.is_retryable() || retry >= self.max_retries {
            return None;
        }
        let cap = Duration::from_millis(self.max_backoff_ms);
        let wait = error.retry_after().unwrap_or_else(|| {
            let factor = 1u64.checked_shl(retry).unwrap_or(u64::MAX);
            Duration::from_millis(self.initial_backoff_ms.saturating_mul(factor))
        });
        Some(wait.min(cap))
    }
}

/// Reads the provider's requested wait: `retry-after-ms` (milliseconds),
/// else `retry-after` in seconds or as an HTTP date, relative to `now_unix_ms`.
pub fn parse_retry_after(retry_after_ms: Option<&str>, retry_after: Option<&str>, now_unix_ms: u64) -> Option<Duration> {
    // `try_from`: a provider may send `inf` or `1e20`, which overflow.
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()).filter(|ms| *ms >= 0.0) {
        return Some(Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX));
    }
    let value = retry_after?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds >= 0.0).then(|| Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let at_ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64;
    Some(Duration::from_millis(at_ms.saturating_sub(now_unix_ms)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(retry_after: Option<Duration>) -> LlmError {
        LlmError::RateLimited { message: String::new(), retry_after }
    }

    #[test]
    fn backoff_doubles_from_two_seconds_to_the_cap() {
        let policy = RetryPolicy { max_retries: 10, ..RetryPolicy::default() };
        let waits: Vec<u64> = (0..6).map(|r| policy.wait_before(r, &limited(None)).unwrap().as_secs()).collect();
        assert_eq!(waits, [2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn the_providers_wait_comes_first_but_is_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.wait_before(0, &limited(Some(Duration::from_millis(1500)))), Some(Duration::from_millis(1500)));
        assert_eq!(policy.wait_before(0, &limited(Some(Duration::from_secs(600)))), Some(Duration::from_secs(30)));
    }

    #[test]
    fn no_retry_past_the_limit_or_for_context_overflow() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.wait_before(5, &limited(None)), None);
        let overflow = LlmError::ContextWindowExceeded { message: String::new() };
        assert_eq!(policy.wait_before(0, &overflow), None);
    }

    #[test]
    fn retry_after_forms() {
        let now = 1_767_225_600_000; // 2026-01-01T00:00:00Z
        assert_eq!(parse_retry_after(Some("250"), Some("9"), now), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after(None, Some("3"), now), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after(None, Some("Thu, 01 Jan 2026 00:00:05 GMT"), now), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after(None, Some("soon"), now), None);
        assert_eq!(parse_retry_after(None, None, now), None);
    }

    /// `retry-after: inf` and `1e20` panicked converting to a `Duration`;
    /// now they mean "longer than any cap", and the policy's cap applies.
    #[test]
    fn huge_retry_after_values_saturate() {
        for value in ["inf", "1e20"] {
            assert_eq!(parse_retry_after(None, Some(value), 0), Some(Duration::MAX), "{value}");
        }
        for value in ["inf", "1e30"] {
            assert_eq!(parse_retry_after(Some(value), None, 0), Some(Duration::MAX), "{value}");
        }
        assert_eq!(parse_retry_after(None, Some("NaN"), 0), None);
        let capped = RetryPolicy::default().wait_before(0, &limited(Some(Duration::MAX)));
        assert_eq!(capped, Some(Duration::from_secs(30)));
    }
}
