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
    /// Bytes equal to the byte before them in the block (bit 0, whose byte
    /// before is in another block, is left clear for the caller).
    pub repeat: u64,
}

impl ByteMasks {
    /// The masks of the first `len` bytes of `block`.
    pub fn of(block: &[u8; BLOCK], len: usize) -> Self {
        let all = compute(block);
        let valid = if len >= BLOCK { u64::MAX } else { (1u64 << len) - 1 };
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
            repeat: all.repeat & valid,
        }
    }

    /// ASCII punctuation (control characters included): every ASCII byte
    /// that is not a letter, a digit, a blank or a line end.
    pub fn punct(&self) -> u64 {
        self.valid & !(self.non_ascii | self.line_end | self.blank | self.digit | self.letter)
    }
}

/// The masks of a whole block: SSE2 compares on x86-64, 16 bytes a step.
#[cfg(target_arch = "x86_64")]
fn compute(block: &[u8; BLOCK]) -> ByteMasks {
    let mut m = ByteMasks { valid: u64::MAX, ..ByteMasks::default() };
    for (k, lane) in block.chunks_exact(16).enumerate() {
        let lane: &[u8; 16] = lane.try_into().expect("16-byte lanes");
        #[allow(unsafe_code, reason = "the only way to call a target-feature function; a byte fold does not vectorize")]
        // SAFETY: SSE2 is part of the x86-64 baseline, so every x86-64 CPU
        // has the feature `sse2::lane_masks` is compiled for.
        let l = unsafe { sse2::lane_masks(lane) };
        let shift = 16 * k;
        m.non_ascii |= l[0] << shift;
        m.char_start |= l[1] << shift;
        m.han_start |= l[2] << shift;
        m.line_end |= l[3] << shift;
        m.blank |= l[4] << shift;
        m.digit |= l[5] << shift;
        m.letter |= l[6] << shift;
        m.upper |= l[7] << shift;
        m.vowel |= l[8] << shift;
        m.call |= l[9] << shift;
        m.repeat |= l[10] << shift;
    }
    // Each lane compared its first byte with nothing; the lanes after the
    // first have their byte before in the block.
    for lane_start in [16, 32, 48] {
        m.repeat |= u64::from(block[lane_start] == block[lane_start - 1]) << lane_start;
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
        if i > 0 && block[i - 1] == b {
            m.repeat |= bit;
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
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8, _mm_slli_si128,
    };

    /// The masks of 16 bytes, in the order of `ByteMasks`' fields (`valid`
    /// apart); the repeat of the lane's first byte is left clear.
    #[target_feature(enable = "sse2")]
    pub(super) fn lane_masks(lane: &[u8; 16]) -> [u64; 11] {
        #[allow(unsafe_code, reason = "a vector load from memory has no safe form")]
        // SAFETY: `lane` is 16 readable bytes, and the load is unaligned.
        let v = unsafe { _mm_loadu_si128(lane.as_ptr().cast::<__m128i>()) };
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let eq = |x: __m128i, b: u8| _mm_cmpeq_epi8(x, splat(b));
        // Signed compares: non-ASCII bytes are negative, so below every
        // ASCII range, and ranges of them compare as their signed values.
        let within = |x: __m128i, low: u8, high: u8| {
            _mm_and_si128(_mm_cmpgt_epi8(x, splat(low - 1)), _mm_cmplt_epi8(x, splat(high + 1)))
        };
        let bits = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16);
        // Setting bit 5 folds upper case onto lower.
        let folded = _mm_or_si128(v, splat(0x20));
        let non_ascii = bits(v);
        // Leading bytes are 0xc0 and above: -64..-1 as signed bytes.
        let char_start = bits(_mm_cmpgt_epi8(v, splat(0xbf))) & non_ascii;
        let han_start = within(v, 0xe4, 0xe9);
        let blank = _mm_or_si128(_mm_or_si128(eq(v, b' '), eq(v, b'\t')), eq(v, b'\r'));
        let vowel = _mm_or_si128(
            _mm_or_si128(_mm_or_si128(eq(folded, b'a'), eq(folded, b'e')), _mm_or_si128(eq(folded, b'i'), eq(folded, b'o'))),
            eq(folded, b'u'),
        );
        let call = _mm_or_si128(within(v, b'(', b')'), eq(v, b';'));
        // Each byte against the one before it (the lane shifted one byte up).
        let repeat = bits(_mm_cmpeq_epi8(v, _mm_slli_si128::<1>(v))) & !1;
        [
            non_ascii,
            char_start,
            bits(han_start),
            bits(eq(v, b'\n')),
            bits(blank),
            bits(within(v, b'0', b'9')),
            bits(within(folded, b'a', b'z')),
            bits(within(v, b'A', b'Z')),
            bits(vowel),
            bits(call),
            repeat,
        ]
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
