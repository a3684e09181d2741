//! A map of counts that starts over when full: the shape of both per-thread
//! memos ([`super::piece_memo`], [`super::text_memo`]). Starting over costs
//! one cold pass and needs no recency bookkeeping on the hot path.

use std::collections::HashMap;
use std::hash::Hash;

/// Counts by key, at most `capacity` of them.
#[derive(Debug)]
pub(super) struct BoundedCounts<K, V> {
    counts: HashMap<K, V, foldhash::fast::FixedState>,
    capacity: usize,
}

impl<K: Hash + Eq, V: Copy> BoundedCounts<K, V> {
    /// An empty map that keeps at most `capacity` counts.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Self { counts: HashMap::with_hasher(foldhash::fast::FixedState::with_seed(0)), capacity }
    }

    /// The count kept under `key`, or else `count`'s, kept (after starting
    /// over if the map is full).
    pub(super) fn get_or_count(&mut self, key: K, count: impl FnOnce() -> V) -> V {
        if let Some(&value) = self.counts.get(&key) {
            return value;
        }
        if self.counts.len() >= self.capacity {
            self.counts.clear();
        }
        let value = count();
        self.counts.insert(key, value);
        value
    }

    /// How many counts are kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.counts.len()
    }
}
