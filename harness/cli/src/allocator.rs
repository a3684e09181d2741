//! The binary's allocator, and the one setting of it that reloop changes.
//!
//! mimalloc, not the system's: see the workspace manifest's note.
//!
//! mimalloc 3 keeps the pages a thread frees for a second (`purge_delay`,
//! 1,000 ms) before it gives them back to the system; mimalloc 2 kept them
//! 10 ms. A batch on two jobs frees a second's worth of its runs' requests,
//! histories and report rows faster than that second passes, so its resident
//! set held them all: a sweep of 5× the runs of the short suite peaked at
//! 1.14× the memory, although its live heap grew by 4 MiB (heaptrack).
//! With 10 ms the same sweeps measured 1.05–1.08×, and took less time
//! (fewer page faults); the 20 × 50 replay on 2 jobs took 0.22 s instead of
//! 0.24 and 39 MiB instead of 48, on 1 job about 8 % longer
//! (`benches/README.md`, "Third sitting"). `MIMALLOC_PURGE_DELAY` (or its
//! old name `MIMALLOC_RESET_DELAY`) in the environment still decides.

use std::ffi::c_long;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 3's `mimalloc.h`: the Rust bindings
/// leave the option unnamed, so its place in the enum is pinned by a test.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed pages are kept before they are given back, in ms.
const PURGE_DELAY_MS: c_long = 10;

/// Sets [`PURGE_DELAY_MS`] unless the environment sets the delay. Call it
/// first in `main`, before any other thread exists.
pub fn give_freed_memory_back_sooner() {
    if !delay_set_by_environment() {
        set_purge_delay(PURGE_DELAY_MS);
    }
}

/// Whether the environment sets the delay, under either of its names.
fn delay_set_by_environment() -> bool {
    ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"].iter().any(|name| std::env::var_os(name).is_some())
}

#[allow(unsafe_code)]
fn set_purge_delay(ms: c_long) {
    // SAFETY: both arguments are plain integers and the option exists in
    // the linked mimalloc (`the_purge_delay_is_the_option_set`); the setter
    // is not thread-safe, and runs before `main` starts any thread.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, ms) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(unsafe_code)]
    fn purge_delay() -> c_long {
        // SAFETY: a read of an integer option.
        unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }
    }

    #[test]
    fn the_purge_delay_is_the_option_set() {
        // mimalloc 3's default is 1,000 ms: another option at this place in
        // the enum (a mimalloc that reordered it) would read otherwise.
        if !delay_set_by_environment() {
            assert_eq!(purge_delay(), 1_000);
        }
        set_purge_delay(PURGE_DELAY_MS);
        assert_eq!(purge_delay(), PURGE_DELAY_MS);
    }
}
