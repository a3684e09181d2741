//! Writes o200k_base's vocabulary in a form the mock uses without parsing
//! (`src/replay/tokens/ranks.rs`): the tokens' bytes end to end, each token's start
//! offset, and an open-addressing table of token ids by hash of their bytes
//! (`src/replay/tokens/rank_hash.rs`), all little-endian, for `include_bytes!`.
//! Loading `bpe-openai`'s own tables at run time costs about 350 M
//! instructions and 50 MB per process; these cost nothing until a page of
//! them is touched. The vocabulary is `bpe-openai`'s, so the ids (o200k's
//! merge ranks) are the ones it encodes with.

use std::path::Path;

#[path = "src/replay/tokens/rank_hash.rs"]
mod rank_hash;

fn main() {
    let bpe = &bpe_openai::o200k_base().bpe;
    let count = bpe.num_tokens();
    let mut tokens = Vec::new();
    let mut starts = Vec::with_capacity(4 * (count + 1));
    starts.extend(0u32.to_le_bytes());
    // Twice as many slots as tokens keeps probe chains short.
    let mask = (2 * count).next_power_of_two() - 1;
    let mut slots = vec![0u32; mask + 1];
    for id in 0..count as u32 {
        let bytes = bpe.token_bytes(id);
        tokens.extend_from_slice(bytes);
        starts.extend((tokens.len() as u32).to_le_bytes());
        let mut slot = rank_hash::rank_hash(bytes) as usize & mask;
        while slots[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        // Zero marks an empty slot, so a slot holds the id plus one.
        slots[slot] = id + 1;
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let slot_bytes: Vec<u8> = slots.iter().flat_map(|slot| slot.to_le_bytes()).collect();
    for (name, bytes) in [("o200k_tokens.bin", &tokens), ("o200k_starts.bin", &starts), ("o200k_slots.bin", &slot_bytes)] {
        std::fs::write(Path::new(&out).join(name), bytes).expect("the build script writes to OUT_DIR");
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/replay/tokens/rank_hash.rs");
}
