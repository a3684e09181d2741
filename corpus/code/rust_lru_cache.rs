//! A bounded least-recently-used cache with O(1) get and insert.
//!
//! Entries live in a slab (`Vec<Slot<K, V>>`) and are chained into a doubly
//! linked list by index, so no entry is ever moved once inserted and the
//! borrow checker never sees two mutable references into the same node.

use std::collections::HashMap;
use std::hash::Hash;

const NIL: usize = usize::MAX;

#[derive(Debug)]
struct Slot<K, V> {
    key: K,
    value: V,
    prev: usize,
    next: usize,
}

/// A cache holding at most `capacity` entries; the least recently used one
/// is evicted when a new key arrives at a full cache.
#[derive(Debug)]
pub struct LruCache<K, V> {
    capacity: usize,
    index: HashMap<K, usize>,
    slots: Vec<Slot<K, V>>,
    head: usize,
    tail: usize,
    hits: u64,
    misses: u64,
}

/// Counters for tuning the capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub len: usize,
}

impl<K: Hash + Eq + Clone, V> LruCache<K, V> {
    /// An empty cache.
    ///
    /// # Panics
    ///
    /// If `capacity` is zero: a cache that can hold nothing is a bug.
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "an LRU cache needs room for one entry");
        Self {
            capacity,
            index: HashMap::with_capacity(capacity),
            slots: Vec::with_capacity(capacity),
            head: NIL,
            tail: NIL,
            hits: 0,
            misses: 0,
        }
    }

    /// The value for `key`, marking it as the most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        match self.index.get(key).copied() {
            Some(slot) => {
                self.hits += 1;
                self.move_to_front(slot);
                Some(&self.slots[slot].value)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Inserts or replaces `key`; returns the evicted entry, if any.
    pub fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        if let Some(&slot) = self.index.get(&key) {
            self.slots[slot].value = value;
            self.move_to_front(slot);
            return None;
        }
        if self.slots.len() < self.capacity {
            let slot = self.slots.len();
            self.slots.push(Slot { key: key.clone(), value, prev: NIL, next: NIL });
            self.index.insert(key, slot);
            self.push_front(slot);
            return None;
        }
        // Full: reuse the tail's slot for the new entry.
        let slot = self.tail;
        self.unlink(slot);
        let old = std::mem::replace(&mut self.slots[slot], Slot { key: key.clone(), value, prev: NIL, next: NIL });
        self.index.remove(&old.key);
        self.index.insert(key, slot);
        self.push_front(slot);
        Some((old.key, old.value))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Hit and miss counters so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats { hits: self.hits, misses: self.misses, len: self.len() }
    }

    /// Keys from most to least recently used.
    pub fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        let mut cursor = self.head;
        std::iter::from_fn(move || {
            if cursor == NIL {
                return None;
            }
            let slot = &self.slots[cursor];
            cursor = slot.next;
            Some(&slot.key)
        })
    }

    fn move_to_front(&mut self, slot: usize) {
        if self.head != slot {
            self.unlink(slot);
            self.push_front(slot);
        }
    }

    fn push_front(&mut self, slot: usize) {
        self.slots[slot].prev = NIL;
        self.slots[slot].next = self.head;
        if self.head != NIL {
            self.slots[self.head].prev = slot;
        }
        self.head = slot;
        if self.tail == NIL {
            self.tail = slot;
        }
    }

    fn unlink(&mut self, slot: usize) {
        let Slot { prev, next, .. } = self.slots[slot];
        if prev != NIL {
            self.slots[prev].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.slots[next].prev = prev;
        } else {
            self.tail = prev;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used() {
        let mut cache = LruCache::new(2);
        cache.insert("a", 1);
        cache.insert("b", 2);
        assert_eq!(cache.get(&"a"), Some(&1));
        assert_eq!(cache.insert("c", 3), Some(("b", 2)));
        assert_eq!(cache.keys().copied().collect::<Vec<_>>(), vec!["c", "a"]);
    }

    #[test]
    fn replacing_a_value_keeps_the_length() {
        let mut cache = LruCache::new(3);
        cache.insert(1, "one");
        cache.insert(1, "uno");
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get(&1), Some(&"uno"));
    }

    #[test]
    fn counts_hits_and_misses() {
        let mut cache: LruCache<u32, u32> = LruCache::new(4);
        cache.insert(7, 49);
        let _ = cache.get(&7);
        let _ = cache.get(&8);
        assert_eq!(cache.stats(), CacheStats { hits: 1, misses: 1, len: 1 });
    }

    #[test]
    #[should_panic(expected = "room for one entry")]
    fn zero_capacity_is_refused() {
        let _ = LruCache::<u8, u8>::new(0);
    }
}
