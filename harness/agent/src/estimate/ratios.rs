//! Every figure the estimator was tuned with, in one place, with its source.
//!
//! Roku charges bytes/4 for English and code, bytes/3 for CJK and bytes/2 for
//! JSON and XML. Measured against o200k_base on `corpus/`, that one ratio
//! per class misses by ±20 to 45 %, and a ratio per class tuned on the
//! corpus still missed unseen languages by 10 to 18 % (Bash, Lua): what a
//! byte costs depends on what the byte is. A BPE tokenizer first cuts a
//! text into pieces (o200k's pre-tokenizer): a word with the one blank or
//! punctuation byte before it, a group of at most three digits, a run of
//! punctuation with the line ends after it, a run of blanks, a run of CJK
//! characters. It then merges bytes within each piece, and most pieces of
//! English and code are one token (1.00 to 1.26 tokens per piece over the
//! corpus). So the estimate counts the pieces and charges what makes a
//! piece dearer: runs of consonants (hashes, base64, ids), words not after
//! a blank, long punctuation runs; CJK characters are charged by script.
//! (Capitals and long words were charged too; ten-fold cross-validation
//! showed no gain from either, and dropping them saved two masks' work.)
//!
//! The values come from a least-squares fit of those counts to o200k counts
//! of the tuning directories of `corpus/`, weighted to minimize relative
//! error (`benches/examples/fit_estimator.rs`), rounded. `reloop estimate
//! corpus/*` measures how far they are off, per class, beside bytes/4; the
//! CLI's integration test holds every class within 3 % on the tuning set
//! and within bounds on `corpus/heldout4/`, texts written before this fit
//! and never used in it (`corpus/README.md`).

/// Tokens per figure of [`super::charged`], by name, in its order:
/// the fit's values, rounded. They are read together, not one by one: a
/// word after a blank costs 0.97 + 0.02 = 0.99, after punctuation 1.22
/// (o200k holds fewer words without their leading space), and a line
/// break's 1.56 also pays for part of the indentation after it.
pub const TOKENS_PER: [(&str, f64); super::FIGURES] = [
    ("word", 0.999),
    ("word after a blank", -0.010),
    ("word after punctuation", 0.192),
    // Hashes, base64 and ids: runs of consonants no word has.
    ("consonant after three consonants", 0.911),
    ("group of at most three digits", 1.019),
    ("punctuation run", 0.987),
    // A single byte joined to the next word costs nothing of its own.
    ("punctuation byte joined to a word", -0.831),
    ("punctuation byte from the fourth of a run on", 0.212),
    ("line break", 1.531),
    ("run of two or more blanks", 0.876),
    ("digit after a blank", 1.473),
    // Simplified Chinese words merge into tokens of two or more characters.
    ("Han character", 0.607),
    // Traditional Chinese has many characters no token merges.
    ("Han character no o200k token merges", 1.039),
    ("kana", 0.681),
    ("word of Hangul syllables", 2.032),
    ("CJK punctuation or full-width form", 1.286),
    // Per token o200k charges the character alone, from its own table.
    ("token of another non-ASCII character", 1.000),
];

/// Texts are cut at the first line end past this many bytes, and each chunk
/// is classified on its own, so that the report tells the parts of a tool
/// output mixing logs, JSON and code apart. The class no longer changes
/// the charge.
pub const CHUNK_BYTES: usize = 512;

/// A chunk whose CJK characters make up this share of its bytes is CJK.
pub const CJK_MIN_SHARE: f64 = 0.15;
/// A chunk with less ASCII punctuation than this share of its non-blank
/// bytes, and with fewer indented lines than [`PROSE_MAX_INDENTED`], is prose.
pub const PROSE_MAX_PUNCT: f64 = 0.12;
/// The share of indented lines above which low-punctuation text is YAML or
/// a listing rather than prose.
pub const PROSE_MAX_INDENTED: f64 = 0.5;
/// A chunk whose `(`, `)` and `;` make up this share of its non-blank bytes
/// is code; below it, punctuation-heavy text is JSON or markup.
pub const CODE_MIN_CALL_PUNCT: f64 = 0.025;

/// A text is called mixed when no class holds this share of its bytes.
pub const DOMINANT_SHARE: f64 = 0.7;
