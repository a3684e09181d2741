//! Request bodies whose buffer serves the next request of the conversation.
//!
//! A long conversation's request body is a buffer of hundreds of KiB, written for every
//! request and freed once it is sent. The allocator gives a freed buffer's pages back to the
//! system soon after (`reloop` sets mimalloc's purge delay to 10 ms to keep sweeps flat in
//! memory), and the next, slightly longer body then faults fresh pages in: on a 50-turn
//! replay, the body's page faults were the largest of a run's. A body lent to the HTTP stack
//! here gives its buffer back when the stack drops it, and the next body is written in it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

/// The spare buffer of one client (and of its clones): at most one, the largest given back.
#[derive(Debug, Clone, Default)]
pub(super) struct BodyBuffers {
    spare: Arc<Mutex<Vec<u8>>>,
}

impl BodyBuffers {
    /// An empty buffer to write a body in: the one given back last, or a new one while the
    /// previous body is still with the HTTP stack.
    pub(super) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *lock(&self.spare))
    }

    /// `body` as the HTTP stack sends it; its buffer comes back to [`Self::take`] once the
    /// stack (and any copy it kept to send again) has dropped it.
    pub(super) fn lend(&self, body: Vec<u8>) -> Bytes {
        Bytes::from_owner(Lent { body, spare: Arc::clone(&self.spare) })
    }
}

/// A body with the way back to its client's spare buffer.
struct Lent {
    body: Vec<u8>,
    spare: Arc<Mutex<Vec<u8>>>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.body
    }
}

impl Drop for Lent {
    /// Keeps the larger of this buffer and the spare one: the next body is at least as long.
    fn drop(&mut self) {
        let mut spare = lock(&self.spare);
        if spare.capacity() < self.body.capacity() {
            self.body.clear();
            *spare = std::mem::take(&mut self.body);
        }
    }
}

fn lock(spare: &Mutex<Vec<u8>>) -> MutexGuard<'_, Vec<u8>> {
    spare.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sent_body_gives_its_buffer_to_the_next() {
        let buffers = BodyBuffers::default();
        let mut first = buffers.take();
        first.extend_from_slice(b"{\"model\":\"m\"}");
        let (address, capacity) = (first.as_ptr(), first.capacity());
        let sent = buffers.lend(first);
        assert_eq!(&sent[..], b"{\"model\":\"m\"}");
        let kept_to_resend = sent.clone();
        drop(sent);
        assert_eq!(buffers.take().capacity(), 0, "a copy still with the stack keeps the buffer");
        drop(kept_to_resend);
        let next = buffers.take();
        assert!(next.is_empty());
        assert_eq!((next.as_ptr(), next.capacity()), (address, capacity));
    }

    #[test]
    fn the_larger_buffer_is_kept() {
        let buffers = BodyBuffers::default();
        let (small, large) = (buffers.lend(Vec::with_capacity(16)), buffers.lend(Vec::with_capacity(4096)));
        drop(large);
        drop(small);
        assert_eq!(buffers.take().capacity(), 4096);
    }
}
