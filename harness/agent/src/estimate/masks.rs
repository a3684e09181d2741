//! Which bytes of a 64-byte block are of each kind the estimator counts, as
//! one bit per byte: the counting in `features` is then popcounts and shifts
//! over whole blocks.

/// Bytes per block, one per bit of a mask.
pub(super) const BLOCK: usize = 64;

/// Bit `i` of each mask tells whether byte `i` of the block is of that kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ByteMasks {
    /// The bytes that belong to the text (a text's last block is partial).
    pub valid: u64,
    /// Bytes of non-ASCII characters (leading and continuation bytes).
    pub non_ascii: u64,
    /// The leading byte of each non-ASCII character.
    pub char_start: u64,
    /// The leading bytes of Han ideographs (U+4E00–U+9FFF, leading bytes
    /// 0xe4 to 0xe9), which `features` counts without decoding.
    pub han_start: u64,
    pub line_end: u64,
    /// Spaces, tabs and carriage returns; line ends are apart.
    pub blank: u64,
    pub digit: u64,
    pub letter: u64,
    /// Of the letters, the upper-case ones, and the vowels (`aeiou` in
    /// either case).
    pub upper: u64,
    pub vowel: u64,
    /// Punctuation typical of code calls: `();`.
    pub call: u64,
}

impl ByteMasks {
    /// The masks of the first `len` bytes of `block`, with AVX2 compares
    /// when `AVX2` (the caller checked the CPU has them).
    #[inline(always)]
    pub fn of<const AVX2: bool>(block: &[u8; BLOCK], len: usize) -> Self {
        let all = compute::<AVX2>(block);
        if len >= BLOCK {
            return all;
        }
        let valid = (1u64 << len) - 1;
        Self {
            valid,
            non_ascii: all.non_ascii & valid,
            char_start: all.char_start & valid,
            han_start: all.han_start & valid,
            line_end: all.line_end & valid,
            blank: all.blank & valid,
            digit: all.digit & valid,
            letter: all.letter & valid,
            upper: all.upper & valid,
            vowel: all.vowel & valid,
            call: all.call & valid,
        }
    }

    /// ASCII punctuation (control characters included): every ASCII byte
    /// that is not a letter, a digit, a blank or a line end.
    pub fn punct(&self) -> u64 {
        self.valid & !(self.non_ascii | self.line_end | self.blank | self.digit | self.letter)
    }
}

/// The masks of a whole block: AVX2 compares, 32 bytes a step, when
/// `AVX2` (the caller checked that the CPU has them), else SSE2 compares,
/// 16 bytes a step. The masks of non-ASCII bytes are taken only for a block
/// that has some.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn compute<const AVX2: bool>(block: &[u8; BLOCK]) -> ByteMasks {
    let ascii = if AVX2 {
        #[allow(unsafe_code, reason = "the only way to call a target-feature function")]
        // SAFETY: the caller checked that the CPU has AVX2.
        unsafe {
            block_ascii_masks_avx2(block)
        }
    } else {
        #[allow(unsafe_code, reason = "the only way to call a target-feature function; a byte fold does not vectorize")]
        // SAFETY: SSE2 is part of the x86-64 baseline, so every x86-64 CPU
        // has the feature `sse2::ascii_masks` is compiled for.
        block_masks_sse2(block, |lane| unsafe { sse2::ascii_masks(lane) })
    };
    let [non_ascii, line_end, blank, digit, letter, upper, vowel, call] = ascii;
    let mut m = ByteMasks { valid: u64::MAX, non_ascii, line_end, blank, digit, letter, upper, vowel, call, ..ByteMasks::default() };
    if m.non_ascii != 0 {
        [m.char_start, m.han_start] = if AVX2 {
            #[allow(unsafe_code, reason = "as above")]
            // SAFETY: as above.
            unsafe {
                block_non_ascii_masks_avx2(block)
            }
        } else {
            #[allow(unsafe_code, reason = "as above")]
            // SAFETY: as above.
            block_masks_sse2(block, |lane| unsafe { sse2::non_ascii_masks(lane) })
        };
    }
    m
}

/// The masks of a whole block, one byte at a time: the definition, used
/// where there is no SIMD version and to test the one there is.
#[cfg_attr(target_arch = "x86_64", cfg(test))]
fn compute_bytewise(block: &[u8; BLOCK]) -> ByteMasks {
    let mut m = ByteMasks { valid: u64::MAX, ..ByteMasks::default() };
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        if b"aeiouAEIOU".contains(&b) {
            m.vowel |= bit;
        }
        let mask = match b {
            b'\n' => &mut m.line_end,
            b' ' | b'\t' | b'\r' => &mut m.blank,
            b'0'..=b'9' => &mut m.digit,
            b'a'..=b'z' => &mut m.letter,
            b'A'..=b'Z' => {
                m.upper |= bit;
                &mut m.letter
            }
            b'(' | b')' | b';' => &mut m.call,
            0xe4..=0xe9 => {
                m.han_start |= bit;
                m.char_start |= bit;
                &mut m.non_ascii
            }
            0xc0.. => {
                m.char_start |= bit;
                &mut m.non_ascii
            }
            0x80.. => &mut m.non_ascii,
            _ => continue,
        };
        *mask |= bit;
    }
    m
}

#[cfg(not(target_arch = "x86_64"))]
fn compute<const AVX2: bool>(block: &[u8; BLOCK]) -> ByteMasks {
    compute_bytewise(block)
}

/// The masks of one vector of bytes, written once for both widths: the
/// module, its target feature, the vector's width in bytes and the integer
/// its movemask fills, the vector type, and the intrinsics of that width.
#[cfg(target_arch = "x86_64")]
macro_rules! vector_masks {
    ($module:ident, $feature:literal, $width:literal, $bits:ty, $vector:ident, [$load:ident, $and:ident, $or:ident, $eq:ident, $gt:ident, $set1:ident, $movemask:ident]) => {
        mod $module {
            use std::arch::x86_64::{$and, $eq, $gt, $load, $movemask, $or, $set1, $vector};

            #[target_feature(enable = $feature)]
            fn load(lane: &[u8; $width]) -> $vector {
                #[allow(unsafe_code, reason = "a vector load from memory has no safe form")]
                // SAFETY: `lane` is one vector's worth of readable bytes, and
                // the load is unaligned.
                unsafe {
                    $load(lane.as_ptr().cast::<$vector>())
                }
            }

            #[target_feature(enable = $feature)]
            fn splat(b: u8) -> $vector {
                $set1(b as i8)
            }

            /// The bytes of `x` from `low` to `high`. Signed compares:
            /// non-ASCII bytes are negative, so below every ASCII range, and
            /// ranges of them compare as their signed values.
            #[target_feature(enable = $feature)]
            fn within(x: $vector, low: u8, high: u8) -> $vector {
                $and($gt(x, splat(low - 1)), $gt(splat(high + 1), x))
            }

            #[target_feature(enable = $feature)]
            fn eq(x: $vector, b: u8) -> $vector {
                $eq(x, splat(b))
            }

            #[target_feature(enable = $feature)]
            fn bits(x: $vector) -> u64 {
                u64::from($movemask(x) as $bits)
            }

            /// The masks every block needs: non-ASCII bytes, then those of
            /// `ByteMasks`' ASCII fields in their order.
            #[target_feature(enable = $feature)]
            pub(super) fn ascii_masks(lane: &[u8; $width]) -> [u64; 8] {
                let v = load(lane);
                // Setting bit 5 folds upper case onto lower.
                let folded = $or(v, splat(0x20));
                let blank = $or($or(eq(v, b' '), eq(v, b'\t')), eq(v, b'\r'));
                let vowel = $or($or($or(eq(folded, b'a'), eq(folded, b'e')), $or(eq(folded, b'i'), eq(folded, b'o'))), eq(folded, b'u'));
                let call = $or(within(v, b'(', b')'), eq(v, b';'));
                [
                    bits(v),
                    bits(eq(v, b'\n')),
                    bits(blank),
                    bits(within(v, b'0', b'9')),
                    bits(within(folded, b'a', b'z')),
                    bits(within(v, b'A', b'Z')),
                    bits(vowel),
                    bits(call),
                ]
            }

            /// The leading bytes of the characters, and of the Han
            /// ideographs.
            #[target_feature(enable = $feature)]
            pub(super) fn non_ascii_masks(lane: &[u8; $width]) -> [u64; 2] {
                let v = load(lane);
                // Leading bytes are 0xc0 and above: -64..-1 as signed bytes.
                [bits($gt(v, splat(0xbf))) & bits(v), bits(within(v, 0xe4, 0xe9))]
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
vector_masks!(sse2, "sse2", 16, u16, __m128i, [_mm_loadu_si128, _mm_and_si128, _mm_or_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_set1_epi8, _mm_movemask_epi8]);

#[cfg(target_arch = "x86_64")]
vector_masks!(
    avx2,
    "avx2",
    32,
    u32,
    __m256i,
    [_mm256_loadu_si256, _mm256_and_si256, _mm256_or_si256, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_set1_epi8, _mm256_movemask_epi8]
);

/// The masks of a whole block from those of its 16-byte lanes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_masks_sse2<const N: usize>(block: &[u8; BLOCK], lane_masks: impl Fn(&[u8; 16]) -> [u64; N]) -> [u64; N] {
    let mut masks = [0u64; N];
    for (k, lane) in block.chunks_exact(16).enumerate() {
        let lane = lane_masks(lane.try_into().expect("16-byte lanes"));
        for (all, lane) in masks.iter_mut().zip(lane) {
            *all |= lane << (16 * k);
        }
    }
    masks
}

/// The ASCII masks of a whole block with AVX2, 32 bytes a step. A
/// function of its own, never inlined, so that AVX2 is enabled here alone:
/// enabled in the counting, it let the compiler pack the popcounts into
/// vectors, which ran 1.5 times slower.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
fn block_ascii_masks_avx2(block: &[u8; BLOCK]) -> [u64; 8] {
    let [low, high] = halves(block);
    join(avx2::ascii_masks(low), avx2::ascii_masks(high))
}

/// The non-ASCII masks of a whole block with AVX2, as above.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
fn block_non_ascii_masks_avx2(block: &[u8; BLOCK]) -> [u64; 2] {
    let [low, high] = halves(block);
    join(avx2::non_ascii_masks(low), avx2::non_ascii_masks(high))
}

#[cfg(target_arch = "x86_64")]
fn halves(block: &[u8; BLOCK]) -> [&[u8; 32]; 2] {
    let (low, high) = block.split_at(32);
    [low.try_into().expect("32 bytes"), high.try_into().expect("32 bytes")]
}

/// The masks of a block from those of its two halves.
#[cfg(target_arch = "x86_64")]
fn join<const N: usize>(low: [u64; N], high: [u64; N]) -> [u64; N] {
    std::array::from_fn(|i| low[i] | high[i] << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has_avx2() -> bool {
        #[cfg(target_arch = "x86_64")]
        return std::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    #[test]
    fn block_masks_match_the_bytewise_definition() {
        // Every byte value, at every position of a block.
        for offset in 0..4u8 {
            let block: [u8; BLOCK] = std::array::from_fn(|i| (i as u8).wrapping_mul(4).wrapping_add(offset));
            assert_eq!(compute::<false>(&block), compute_bytewise(&block), "offset {offset}");
            if has_avx2() {
                assert_eq!(compute::<true>(&block), compute_bytewise(&block), "offset {offset}");
            }
        }
        // Repeated bytes, within lanes and across their boundaries.
        let block: [u8; BLOCK] = std::array::from_fn(|i| b"==  --ab"[(i / 3) % 8]);
        assert_eq!(compute::<false>(&block), compute_bytewise(&block));
        if has_avx2() {
            assert_eq!(compute::<true>(&block), compute_bytewise(&block));
        }
    }
}
