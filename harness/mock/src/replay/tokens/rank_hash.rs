//! The hash that places o200k's tokens in the slot table the build script
//! writes (`build.rs`) and [`super::ranks`] probes: both include this file,
//! so the two cannot drift apart.

/// FNV-1a over `bytes`, folded so that the low bits (the slot) see the
/// high ones.
pub fn rank_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash ^ (hash >> 29)
}
