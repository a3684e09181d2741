//! Prompt-cache simulation, OpenAI style: the provider caches prompt
//! prefixes automatically once they reach 1,024 tokens, in 128-token steps.
//!
//! The simulation works at message granularity: a request's prefix is cached
//! up to the last whole segment (tools, then each message) that an earlier
//! request of the session also had at the same position. Real caching also
//! reuses partial messages; message granularity undercounts by less than one
//! message and never invents a hit. This is the server's ground truth for
//! `cache_breaks_simulated`, against the loop's own detector.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Shortest cacheable prefix (OpenAI: 1,024 tokens).
pub const MIN_CACHEABLE_TOKENS: u64 = 1_024;
/// Cache granularity (OpenAI: 128 tokens).
pub const CACHE_BLOCK_TOKENS: u64 = 128;

/// One cacheable unit of a request: its bytes and its tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Hash of the segment's serialized content.
    pub hash: u64,
    /// Its tokens.
    pub tokens: u64,
}

impl Segment {
    /// A segment for `content` of `tokens` tokens.
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
}

/// The cache of one session.
#[derive(Debug, Default)]
pub struct PrefixCache {
    prefixes: HashSet<u64>,
    previous_cacheable: u64,
}

fn cacheable(tokens: u64) -> u64 {
    if tokens >= MIN_CACHEABLE_TOKENS { tokens / CACHE_BLOCK_TOKENS * CACHE_BLOCK_TOKENS } else { 0 }
}

impl PrefixCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks `segments` up, then stores their prefixes.
    pub fn observe(&mut self, segments: &[Segment]) -> CacheResult {
        let mut chain = DefaultHasher::new();
        let mut cumulative = 0;
        let mut hit_tokens = 0;
        let mut chains = Vec::with_capacity(segments.len());
        for segment in segments {
            segment.hash.hash(&mut chain);
            cumulative += segment.tokens;
            let key = chain.finish();
            if self.prefixes.contains(&key) {
                hit_tokens = cumulative;
            }
            chains.push(key);
        }
        self.prefixes.extend(chains);
        let cached_tokens = cacheable(hit_tokens);
        let total_cacheable = cacheable(cumulative);
        let broke = self.previous_cacheable > 0 && cached_tokens < self.previous_cacheable;
        self.previous_cacheable = total_cacheable;
        CacheResult { cached_tokens, written_tokens: total_cacheable.saturating_sub(cached_tokens), broke }
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
        assert_eq!(first, CacheResult { cached_tokens: 0, written_tokens: 1024, broke: false });
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
    fn a_changed_system_prompt_breaks_the_cache() {
        let mut cache = PrefixCache::new();
        cache.observe(&[seg("tools", 600), seg("system", 900)]);
        let changed = cache.observe(&[seg("tools", 600), seg("system v2", 900)]);
        assert!(changed.broke);
        assert_eq!(changed.cached_tokens, 0);
    }
}
