//! Prompt-cache simulation, Anthropic style: nothing is cached unless the
//! request marks it with `cache_control` breakpoints.
//!
//! The rules simulated (Anthropic's prompt-caching documentation):
//! - at most [`MAX_CACHE_BREAKPOINTS`] breakpoints; more is a 400 error;
//! - a breakpoint caches the prefix it ends (tools, then system, then
//!   messages) once that prefix reaches the model's minimum length
//!   ([`min_cacheable_tokens`]);
//! - an entry lives 5 minutes or 1 hour from its last use, in the session's
//!   (virtual) time;
//! - a lookup at a breakpoint also tries the [`LOOKBACK_BLOCKS`] block
//!   boundaries before it, so a breakpoint that moves forward with the
//!   conversation still reads what the previous request wrote;
//! - the usage splits the prompt into tokens read from the cache, tokens
//!   written to it (by lifetime, since 1-hour writes cost more) and the
//!   rest.
//!
//! Like the OpenAI model in [`crate::replay::cache_sim`], blocks are the request's
//! tool list, system prompt and messages.

use reloop_wire::anthropic::{CacheBreakpoint, CachePoint, CacheTtl, MAX_CACHE_BREAKPOINTS};

use crate::replay::cache_sim::{Segment, prefix_chain};
use crate::replay::tokens::ByHash;

/// How many block boundaries before a breakpoint a lookup also tries.
pub const LOOKBACK_BLOCKS: usize = 20;

/// Default minimum cacheable prefix, for models not in [`MINIMUMS`].
pub const DEFAULT_MIN_CACHEABLE_TOKENS: u64 = 1_024;

/// Minimum cacheable prefix by model-name prefix (Anthropic's prompt-caching
/// page, checked 2026-11-24); the longest matching prefix wins.
const MINIMUMS: &[(&str, u64)] = &[
    ("claude-opus-4-5", 4_096),
    ("claude-opus-4-6", 4_096),
    ("claude-haiku-4-5", 4_096),
    ("claude-sonnet-4-6", 2_048),
    ("claude-3-5-haiku", 2_048),
    ("claude-3-haiku", 2_048),
];

/// The minimum cacheable prefix of `model`.
pub fn min_cacheable_tokens(model: &str) -> u64 {
    MINIMUMS.iter().filter(|(name, _)| model.starts_with(name)).max_by_key(|(name, _)| name.len()).map_or(DEFAULT_MIN_CACHEABLE_TOKENS, |(_, tokens)| *tokens)
}

/// What the cache did for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BreakpointResult {
    /// Prompt tokens read from the cache.
    pub read_tokens: u64,
    /// Prompt tokens written with a 5-minute lifetime.
    pub written_5m_tokens: u64,
    /// Prompt tokens written with a 1-hour lifetime.
    pub written_1h_tokens: u64,
    /// The previous request's cached prefix was not fully read.
    pub broke: bool,
    /// Of the previous request's cached prefix, the tokens not read.
    pub lost_tokens: u64,
    /// An entry at or before a breakpoint, past what was read, had expired.
    pub expired: bool,
    /// Breakpoints were marked, but none ends a prefix long enough to cache.
    pub below_minimum: bool,
}

impl BreakpointResult {
    /// All tokens written.
    pub fn written_tokens(&self) -> u64 {
        self.written_5m_tokens + self.written_1h_tokens
    }
}

/// The request marks more breakpoints than the API allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyBreakpoints(pub usize);

impl std::fmt::Display for TooManyBreakpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {}.", self.0)
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    ttl: CacheTtl,
    expires_ms: u64,
}

/// The breakpoint cache of one session.
#[derive(Debug, Default)]
pub struct BreakpointCache {
    /// By prefix key ([`prefix_chain`]).
    entries: ByHash<Entry>,
    /// The longest prefix the previous request left cached.
    previous_top: u64,
}

/// A request's blocks as the cache sees them: the chained key and the
/// cumulative tokens at the end of each block.
struct Prefixes {
    keys: Vec<u64>,
    tokens: Vec<u64>,
}

impl Prefixes {
    fn of(segments: &[Segment]) -> Self {
        let (keys, tokens) = prefix_chain(segments).unzip();
        Self { keys, tokens }
    }
}

/// The block a breakpoint ends: segment 0 is the tool list, then the system
/// prompt when there is one, then the messages.
fn block_of(point: CachePoint, has_system: bool) -> Option<usize> {
    match point {
        CachePoint::Tools => Some(0),
        CachePoint::System => has_system.then_some(1),
        CachePoint::Message(index) => Some(index + 1 + usize::from(has_system)),
    }
}

impl BreakpointCache {
    /// An empty cache (sessions start from `Default`).
    #[cfg(test)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks the request up at its breakpoints, then writes and refreshes
    /// entries. `segments` are the tool list, the system prompt (when
    /// `has_system`) and each message; `now_ms` is the session's clock.
    pub fn observe(
        &mut self,
        segments: &[Segment],
        has_system: bool,
        breakpoints: &[CacheBreakpoint],
        min_tokens: u64,
        now_ms: u64,
    ) -> Result<BreakpointResult, TooManyBreakpoints> {
        if breakpoints.len() > MAX_CACHE_BREAKPOINTS {
            return Err(TooManyBreakpoints(breakpoints.len()));
        }
        let prefixes = Prefixes::of(segments);
        let mut marked: Vec<(usize, CacheTtl)> = breakpoints
            .iter()
            .filter_map(|b| block_of(b.at, has_system).filter(|block| *block < segments.len()).map(|block| (block, b.ttl)))
            .filter(|(block, _)| prefixes.tokens[*block] >= min_tokens)
            .collect();
        marked.sort_by_key(|(block, _)| *block);
        marked.dedup_by_key(|(block, _)| *block);
        let read_block = self.longest_hit(&prefixes, &marked, now_ms);
        let expired = self.expired_past(&prefixes, &marked, read_block, now_ms);
        let read_tokens = read_block.map_or(0, |block| prefixes.tokens[block]);
        if let Some(block) = read_block {
            let entry = self.entries.get_mut(&prefixes.keys[block]).expect("a hit is an entry");
            entry.expires_ms = now_ms + entry.ttl.millis();
        }
        let below_minimum = !breakpoints.is_empty() && marked.is_empty();
        let mut result = BreakpointResult { read_tokens, expired, below_minimum, ..BreakpointResult::default() };
        let mut covered = read_tokens;
        for (block, ttl) in &marked {
            let end = prefixes.tokens[*block];
            let new = end.saturating_sub(covered);
            match ttl {
                CacheTtl::FiveMinutes => result.written_5m_tokens += new,
                CacheTtl::OneHour => result.written_1h_tokens += new,
            }
            covered = covered.max(end);
            let entry = self.entries.entry(prefixes.keys[*block]).or_insert(Entry { ttl: *ttl, expires_ms: 0 });
            entry.ttl = *ttl;
            entry.expires_ms = entry.expires_ms.max(now_ms + ttl.millis());
        }
        result.lost_tokens = self.previous_top.saturating_sub(read_tokens);
        result.broke = result.lost_tokens > 0;
        self.previous_top = covered;
        Ok(result)
    }

    /// Whether an entry past `read` (at a breakpoint or within the lookback
    /// before one) is there but expired: what a live one would have served.
    fn expired_past(&self, prefixes: &Prefixes, marked: &[(usize, CacheTtl)], read: Option<usize>, now_ms: u64) -> bool {
        let dead = |block: usize| self.entries.get(&prefixes.keys[block]).is_some_and(|entry| entry.expires_ms <= now_ms);
        let first = read.map_or(0, |block| block + 1);
        marked.iter().any(|(breakpoint, _)| (breakpoint.saturating_sub(LOOKBACK_BLOCKS).max(first)..=*breakpoint).any(dead))
    }

    /// The last block with a live entry at a breakpoint or within the
    /// lookback before one.
    fn longest_hit(&self, prefixes: &Prefixes, marked: &[(usize, CacheTtl)], now_ms: u64) -> Option<usize> {
        let live = |block: &usize| self.entries.get(&prefixes.keys[*block]).is_some_and(|entry| entry.expires_ms > now_ms);
        marked.iter().filter_map(|(breakpoint, _)| (breakpoint.saturating_sub(LOOKBACK_BLOCKS)..=*breakpoint).rev().find(live)).max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: u64 = 60_000;

    fn segments(tokens: &[u64]) -> Vec<Segment> {
        tokens.iter().enumerate().map(|(i, t)| Segment::new(&format!("block {i}"), *t)).collect()
    }

    fn at(points: &[CachePoint], ttl: CacheTtl) -> Vec<CacheBreakpoint> {
        points.iter().map(|at| CacheBreakpoint { at: *at, ttl }).collect()
    }

    fn last(n: usize) -> CachePoint {
        CachePoint::Message(n)
    }

    #[test]
    fn nothing_is_cached_without_breakpoints() {
        let mut cache = BreakpointCache::new();
        let blocks = segments(&[3_000, 2_000, 500]);
        for _ in 0..2 {
            assert_eq!(cache.observe(&blocks, true, &[], 1_024, 0).unwrap(), BreakpointResult::default());
        }
    }

    #[test]
    fn a_moving_last_message_breakpoint_reads_what_the_previous_request_wrote() {
        let mut cache = BreakpointCache::new();
        let first = cache.observe(&segments(&[1_000, 500, 300]), true, &at(&[CachePoint::System, last(0)], CacheTtl::FiveMinutes), 1_024, 0);
        assert_eq!(first.unwrap(), BreakpointResult { written_5m_tokens: 1_800, ..BreakpointResult::default() });
        let grown = segments(&[1_000, 500, 300, 200, 400]);
        let second = cache.observe(&grown, true, &at(&[CachePoint::System, last(2)], CacheTtl::FiveMinutes), 1_024, MINUTE).unwrap();
        assert_eq!(second, BreakpointResult { read_tokens: 1_800, written_5m_tokens: 600, ..BreakpointResult::default() });
    }

    #[test]
    fn the_lookback_reaches_twenty_blocks_and_no_further() {
        let run = |added: usize| {
            let mut cache = BreakpointCache::new();
            let mut tokens = vec![2_000, 100];
            cache.observe(&segments(&tokens), false, &at(&[last(0)], CacheTtl::FiveMinutes), 1_024, 0).unwrap();
            tokens.extend(std::iter::repeat_n(10, added));
            let n = tokens.len() - 2;
            cache.observe(&segments(&tokens), false, &at(&[last(n)], CacheTtl::FiveMinutes), 1_024, 1).unwrap()
        };
        assert_eq!(run(20).read_tokens, 2_100);
        let too_far = run(21);
        assert_eq!(too_far.read_tokens, 0);
        assert!(too_far.broke && !too_far.expired, "moved, not expired");
        assert_eq!(too_far.lost_tokens, 2_100);
    }

    #[test]
    fn entries_expire_after_their_ttl_and_reads_refresh_them() {
        let mut cache = BreakpointCache::new();
        let blocks = segments(&[2_000, 100]);
        let five = at(&[last(0)], CacheTtl::FiveMinutes);
        cache.observe(&blocks, false, &five, 1_024, 0).unwrap();
        assert_eq!(cache.observe(&blocks, false, &five, 1_024, 4 * MINUTE).unwrap().read_tokens, 2_100);
        // Refreshed at minute 4: still alive at minute 8.
        assert_eq!(cache.observe(&blocks, false, &five, 1_024, 8 * MINUTE).unwrap().read_tokens, 2_100);
        let expired = cache.observe(&blocks, false, &five, 1_024, 14 * MINUTE).unwrap();
        assert_eq!((expired.read_tokens, expired.written_5m_tokens, expired.broke, expired.expired), (0, 2_100, true, true));

        let mut cache = BreakpointCache::new();
        let hour = at(&[last(0)], CacheTtl::OneHour);
        assert_eq!(cache.observe(&blocks, false, &hour, 1_024, 0).unwrap().written_1h_tokens, 2_100);
        assert_eq!(cache.observe(&blocks, false, &hour, 1_024, 50 * MINUTE).unwrap().read_tokens, 2_100);
    }

    #[test]
    fn prefixes_below_the_model_minimum_are_not_cached() {
        assert_eq!(min_cacheable_tokens("claude-opus-4-5-20251101"), 4_096);
        assert_eq!(min_cacheable_tokens("claude-sonnet-4-5-20250929"), 1_024);
        assert_eq!(min_cacheable_tokens("claude-3-5-haiku-20241022"), 2_048);
        let mut cache = BreakpointCache::new();
        let blocks = segments(&[1_500, 1_000]);
        let marks = at(&[CachePoint::Tools, last(0)], CacheTtl::FiveMinutes);
        let opus = cache.observe(&blocks, false, &marks, 4_096, 0).unwrap();
        assert_eq!(opus, BreakpointResult { below_minimum: true, ..BreakpointResult::default() });
        let sonnet = cache.observe(&blocks, false, &marks, 1_024, 0).unwrap();
        assert_eq!(sonnet.written_5m_tokens, 2_500);
    }

    #[test]
    fn mixed_lifetimes_split_the_writes_and_five_breakpoints_are_refused() {
        let mut cache = BreakpointCache::new();
        let blocks = segments(&[1_200, 300, 400]);
        let marks = [CacheBreakpoint { at: CachePoint::Tools, ttl: CacheTtl::OneHour }, CacheBreakpoint { at: last(1), ttl: CacheTtl::FiveMinutes }];
        let result = cache.observe(&blocks, false, &marks, 1_024, 0).unwrap();
        assert_eq!((result.written_1h_tokens, result.written_5m_tokens), (1_200, 700));
        let five = vec![marks[0]; 5];
        let refused = cache.observe(&blocks, false, &five, 1_024, 0).unwrap_err();
        assert_eq!(refused.to_string(), "A maximum of 4 blocks with cache_control may be provided. Found 5.");
    }
}
