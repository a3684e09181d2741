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
    /// The masks of the first `len` bytes of `block`.
    #[inline(always)]
    pub fn of(block: &[u8; BLOCK], len: usize) -> Self {
        let all = compute(block);
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

/// The masks of a whole block: SSE2 compares on x86-64, 16 bytes a step.
/// The masks of non-ASCII bytes are taken only for a block that has some.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn compute(block: &[u8; BLOCK]) -> ByteMasks {
    let lanes = || block.chunks_exact(16).map(|lane| <&[u8; 16]>::try_from(lane).expect("16-byte lanes")).enumerate();
    let mut m = ByteMasks { valid: u64::MAX, ..ByteMasks::default() };
    for (k, lane) in lanes() {
        #[allow(unsafe_code, reason = "the only way to call a target-feature function; a byte fold does not vectorize")]
        // SAFETY: SSE2 is part of the x86-64 baseline, so every x86-64 CPU
        // has the feature `sse2::ascii_masks` is compiled for.
        let l = unsafe { sse2::ascii_masks(lane) };
        let shift = 16 * k;
        m.non_ascii |= l[0] << shift;
        m.line_end |= l[1] << shift;
        m.blank |= l[2] << shift;
        m.digit |= l[3] << shift;
        m.letter |= l[4] << shift;
        m.upper |= l[5] << shift;
        m.vowel |= l[6] << shift;
        m.call |= l[7] << shift;
    }
    if m.non_ascii != 0 {
        for (k, lane) in lanes() {
            #[allow(unsafe_code, reason = "as above")]
            // SAFETY: as above.
            let [char_start, han_start] = unsafe { sse2::non_ascii_masks(lane) };
            m.char_start |= char_start << (16 * k);
            m.han_start |= han_start << (16 * k);
        }
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
fn compute(block: &[u8; BLOCK]) -> ByteMasks {
    compute_bytewise(block)
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{__m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8};

    #[inline(always)]
    fn load(lane: &[u8; 16]) -> __m128i {
        #[allow(unsafe_code, reason = "a vector load from memory has no safe form")]
        // SAFETY: `lane` is 16 readable bytes, and the load is unaligned.
        unsafe {
            _mm_loadu_si128(lane.as_ptr().cast::<__m128i>())
        }
    }

    #[inline(always)]
    fn splat(b: u8) -> __m128i {
        #[allow(unsafe_code, reason = "SSE2 is x86-64's baseline")]
        // SAFETY: every x86-64 CPU has SSE2.
        unsafe {
            _mm_set1_epi8(b as i8)
        }
    }

    /// The bytes of `x` from `low` to `high`. Signed compares: non-ASCII
    /// bytes are negative, so below every ASCII range, and ranges of them
    /// compare as their signed values.
    #[target_feature(enable = "sse2")]
    fn within(x: __m128i, low: u8, high: u8) -> __m128i {
        _mm_and_si128(_mm_cmpgt_epi8(x, splat(low - 1)), _mm_cmpgt_epi8(splat(high + 1), x))
    }

    #[target_feature(enable = "sse2")]
    fn eq(x: __m128i, b: u8) -> __m128i {
        _mm_cmpeq_epi8(x, splat(b))
    }

    #[target_feature(enable = "sse2")]
    fn bits(x: __m128i) -> u64 {
        u64::from(_mm_movemask_epi8(x) as u16)
    }

    /// The masks of 16 bytes that every block needs: non-ASCII bytes, then
    /// those of `ByteMasks`' ASCII fields in their order.
    #[target_feature(enable = "sse2")]
    pub(super) fn ascii_masks(lane: &[u8; 16]) -> [u64; 8] {
        let v = load(lane);
        // Setting bit 5 folds upper case onto lower.
        let folded = _mm_or_si128(v, splat(0x20));
        let blank = _mm_or_si128(_mm_or_si128(eq(v, b' '), eq(v, b'\t')), eq(v, b'\r'));
        let vowel = _mm_or_si128(
            _mm_or_si128(_mm_or_si128(eq(folded, b'a'), eq(folded, b'e')), _mm_or_si128(eq(folded, b'i'), eq(folded, b'o'))),
            eq(folded, b'u'),
        );
        let call = _mm_or_si128(within(v, b'(', b')'), eq(v, b';'));
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

    /// The leading bytes of 16 bytes' characters, and of their Han
    /// ideographs.
    #[target_feature(enable = "sse2")]
    pub(super) fn non_ascii_masks(lane: &[u8; 16]) -> [u64; 2] {
        let v = load(lane);
        // Leading bytes are 0xc0 and above: -64..-1 as signed bytes.
        [bits(_mm_cmpgt_epi8(v, splat(0xbf))) & bits(v), bits(within(v, 0xe4, 0xe9))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_masks_match_the_bytewise_definition() {
        // Every byte value, at every position of a block.
        for offset in 0..4u8 {
            let block: [u8; BLOCK] = std::array::from_fn(|i| (i as u8).wrapping_mul(4).wrapping_add(offset));
            assert_eq!(compute(&block), compute_bytewise(&block), "offset {offset}");
        }
        // Repeated bytes, within lanes and across their boundaries.
        let block: [u8; BLOCK] = std::array::from_fn(|i| b"==  --ab"[(i / 3) % 8]);
        assert_eq!(compute(&block), compute_bytewise(&block));
    }
}
