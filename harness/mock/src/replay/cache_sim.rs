//! Prompt-cache simulation, OpenAI style: the provider caches prompt
//! prefixes automatically once they reach 1,024 tokens, in 128-token steps.
//! Gemini's implicit caching works the same way with its own minimum per
//! model and no steps ([`Granularity::gemini`]).
//!
//! The simulation works at message granularity: a request's prefix is cached
//! up to the last whole segment (tools, then each message) that an earlier
//! request of the session also had at the same position. Real caching also
//! reuses partial messages; message granularity undercounts by less than one
//! message and never invents a hit. This is the server's ground truth for
//! `cache_breaks_simulated`, against the loop's own detector.

use std::collections::HashSet;
use std::hash::BuildHasher;
#[cfg(test)]
use std::hash::{DefaultHasher, Hash, Hasher};

/// Shortest cacheable prefix (OpenAI: 1,024 tokens).
pub const MIN_CACHEABLE_TOKENS: u64 = 1_024;
/// Cache granularity (OpenAI: 128 tokens).
pub const CACHE_BLOCK_TOKENS: u64 = 128;

/// The prefixes a provider caches: at least `min_tokens`, rounded down to
/// whole `block_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Granularity {
    /// The shortest cacheable prefix.
    pub min_tokens: u64,
    /// The step cached prefixes are counted in.
    pub block_tokens: u64,
}

impl Granularity {
    /// OpenAI: 1,024 tokens, then 128-token steps.
    pub const OPENAI: Self = Self { min_tokens: MIN_CACHEABLE_TOKENS, block_tokens: CACHE_BLOCK_TOKENS };

    /// Gemini's implicit caching of `model`: Google's minimum input for a
    /// cache hit (ai.google.dev/gemini-api/docs/caching, 2026-10-13: 2,048
    /// for the 2.5 models, 4,096 for the 3.x ones), counted to the token.
    /// Models before 2.5 have no implicit caching.
    pub fn gemini(model: &str) -> Self {
        let min_tokens = if model.starts_with("gemini-2.5") {
            2_048
        } else if model.starts_with("gemini-1") || model.starts_with("gemini-2.0") {
            u64::MAX
        } else {
            4_096
        };
        Self { min_tokens, block_tokens: 1 }
    }

    fn cacheable(self, tokens: u64) -> u64 {
        if tokens >= self.min_tokens { tokens / self.block_tokens * self.block_tokens } else { 0 }
    }
}

/// One cacheable unit of a request: its bytes and its tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Hash of the segment's serialized content.
    pub hash: u64,
    /// Its tokens.
    pub tokens: u64,
}

impl Segment {
    /// A segment for `content` of `tokens` tokens (the tests' shorthand;
    /// sessions build segments from content hashes).
    #[cfg(test)]
    pub fn new(content: &str, tokens: u64) -> Self {
        let mut hasher = DefaultHasher::new();
        content.hash(&mut hasher);
        Self { hash: hasher.finish(), tokens }
    }
}

/// What the cache did for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheResult {
    /// Prompt tokens served from cache.
    pub cached_tokens: u64,
    /// Prompt tokens newly written to the cache.
    pub written_tokens: u64,
    /// The previous request's cached prefix was not fully reused.
    pub broke: bool,
    /// Of the previous request's cached prefix, the tokens not reused.
    pub lost_tokens: u64,
    /// An entry the request would have read had expired (Anthropic's lifetimes).
    pub expired: bool,
    /// Nothing of the request is long enough to cache.
    pub below_minimum: bool,
}

/// The chained key and the cumulative tokens at the end of each of
/// `segments`: two requests have the same key at a segment when they agree
/// on every segment up to it (to a 64-bit hash). Each key folds the one
/// before with the segment's own hash, so a prefix costs one mix, not a
/// pass over the segments before it.
pub fn prefix_chain(segments: &[Segment]) -> impl Iterator<Item = (u64, u64)> + '_ {
    let mix = foldhash::quality::FixedState::with_seed(0);
    segments.iter().scan((0, 0), move |(key, tokens), segment| {
        *key = mix.hash_one((*key, segment.hash));
        *tokens += segment.tokens;
        Some((*key, *tokens))
    })
}

/// The cache of one session.
#[derive(Debug, Default)]
pub struct PrefixCache {
    /// The keys of the prefixes cached ([`prefix_chain`]): hashes already,
    /// so foldhash's fast mix rather than SipHash again (SipHash over this
    /// set and the chain took 2 % of a replay's instructions).
    prefixes: HashSet<u64, foldhash::fast::FixedState>,
    previous_cacheable: u64,
}

impl PrefixCache {
    /// An empty cache.
    #[cfg(test)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks `segments` up, then stores their prefixes, OpenAI's way.
    #[cfg(test)]
    pub fn observe(&mut self, segments: &[Segment]) -> CacheResult {
        self.observe_with(segments, Granularity::OPENAI)
    }

    /// Looks `segments` up, then stores their prefixes, caching as `granularity` says.
    pub fn observe_with(&mut self, segments: &[Segment], granularity: Granularity) -> CacheResult {
        let mut cumulative = 0;
        let mut hit_tokens = 0;
        for (key, tokens) in prefix_chain(segments) {
            cumulative = tokens;
            // Present already: an earlier request had this prefix.
            if !self.prefixes.insert(key) {
                hit_tokens = tokens;
            }
        }
        let cached_tokens = granularity.cacheable(hit_tokens);
        let total_cacheable = granularity.cacheable(cumulative);
        let lost_tokens = self.previous_cacheable.saturating_sub(cached_tokens);
        self.previous_cacheable = total_cacheable;
        CacheResult {
            cached_tokens,
            written_tokens: total_cacheable.saturating_sub(cached_tokens),
            broke: lost_tokens > 0,
            lost_tokens,
            expired: false,
            below_minimum: total_cacheable == 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(name: &str, tokens: u64) -> Segment {
        Segment::new(name, tokens)
    }

    #[test]
    fn a_growing_conversation_hits_its_prefix() {
        let mut cache = PrefixCache::new();
        let first = cache.observe(&[seg("tools", 600), seg("system", 500)]);
        assert_eq!(first, CacheResult { cached_tokens: 0, written_tokens: 1024, ..CacheResult::default() });
        let second = cache.observe(&[seg("tools", 600), seg("system", 500), seg("user", 300)]);
        assert_eq!(second.cached_tokens, 1024);
        assert!(!second.broke);
    }

    #[test]
    fn short_prefixes_are_not_cached() {
        let mut cache = PrefixCache::new();
        cache.observe(&[seg("system", 500)]);
        assert_eq!(cache.observe(&[seg("system", 500), seg("u", 10)]).cached_tokens, 0);
    }

    #[test]
    fn gemini_caches_past_its_models_minimum_to_the_token() {
        let mut cache = PrefixCache::new();
        let flash = Granularity::gemini("gemini-2.5-flash");
        cache.observe_with(&[seg("tools", 1_000), seg("system", 1_100)], flash);
        let hit = cache.observe_with(&[seg("tools", 1_000), seg("system", 1_100), seg("u", 5)], flash);
        assert_eq!(hit.cached_tokens, 2_100, "no 128-token steps");
        let pro = Granularity::gemini("gemini-3-pro-preview");
        assert_eq!(cache.observe_with(&[seg("tools", 1_000), seg("system", 1_100), seg("u", 5)], pro).cached_tokens, 0, "below 4,096");
        assert_eq!(Granularity::gemini("gemini-2.0-flash").cacheable(1_000_000), 0);
    }

    #[test]
    fn a_changed_system_prompt_breaks_the_cache() {
        let mut cache = PrefixCache::new();
        cache.observe(&[seg("tools", 600), seg("system", 900)]);
        let changed = cache.observe(&[seg("tools", 600), seg("system v2", 900)]);
        assert!(changed.broke);
        assert_eq!((changed.cached_tokens, changed.lost_tokens), (0, 1_408));
    }
}
