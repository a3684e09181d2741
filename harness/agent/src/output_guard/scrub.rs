//! ZeroClaw's `scrub_credentials`: secrets in tool output are masked before
//! the output enters the context, so a key printed by `env` or a config file
//! is never sent to the provider (nor kept in its cache or the reports).
//!
//! The pattern set (documented in docs/output-guards.md):
//! - `key=value`, `key: value`, `"key": "value"` where the key ends in
//!   `token`, `api_key`/`api-key`/`apikey`, `password`/`passwd`, `secret`,
//!   `user_key`, `bearer` or `credential` (any case) and the value is at least
//!   8 characters (ZeroClaw's rule), unless the value is called like a
//!   function (`token = readToken()` is code);
//! - an `Authorization: Bearer|Token|Basic <value>` header;
//! - well-known key shapes anywhere: OpenAI/Anthropic `sk-…`, GitHub
//!   `ghp_`/`gho_`/`ghs_`/`github_pat_…`, AWS access key ids `AKIA…`, Slack
//!   `xox[abpr]-…`, and PEM private key blocks.
//!
//! A masked value keeps its first 4 characters, as ZeroClaw does, so a
//! reader can still tell two keys apart: `token=abcd*[REDACTED]`.

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex};

/// The marker that replaces a secret.
pub const REDACTED: &str = "*[REDACTED]";

static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)([A-Za-z0-9_.-]*(?:token|api[_-]?key|passw(?:or)?d|secret|user[_-]?key|bearer|credential))(["']?\s*[:=]\s*)(?:"([^"\s]{8,})"|'([^'\s]{8,})'|([A-Za-z0-9_\-./+=]{8,}))"#,
    )
    .expect("a valid pattern")
});

static AUTHORIZATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(authorization\s*:\s*(?:bearer|token|basic)\s+)([A-Za-z0-9_\-./+=:]{8,})").expect("a valid pattern"));

static KNOWN_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9\-]{10,}|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----)",
    )
    .expect("a valid pattern")
});

/// The words without which the two keyword patterns cannot match, found in
/// one pass (any ASCII case): most tool output has none of them, and each
/// pattern's own search over text without a literal prefix walks every
/// byte through a large automaton (the guard was 3 % of a replay's time).
/// The patterns fold case by Unicode's rules, under which the Kelvin sign
/// is a `k` and the long `ſ` an `s`: either in the text runs `KEY_VALUE`.
/// The words one of which [`KEY_VALUE`] needs to match: its keys, and the two non-ASCII letters
/// its case-insensitive match folds to ASCII (Kelvin sign, long s).
const KEY_VALUE_WORDS: [&str; 14] =
    ["token", "apikey", "api_key", "api-key", "passwd", "password", "secret", "userkey", "user_key", "user-key", "bearer", "credential", "\u{212A}", "\u{17F}"];

static KEYWORDS: LazyLock<AhoCorasick> =
    LazyLock::new(|| AhoCorasick::builder().ascii_case_insensitive(true).build(KEY_VALUE_WORDS.iter().chain([&AUTHORIZATION_WORD])).expect("valid keywords"));

/// The word [`AUTHORIZATION`] starts with: its pattern id in [`KEYWORDS`] is the last.
const AUTHORIZATION_WORD: &str = "authorization";

/// Which of the keyword patterns could match `text`: (`KEY_VALUE`, `AUTHORIZATION`).
///
/// A search for matches that do not overlap finds both kinds whenever the text holds them: no
/// keyword ends with a prefix of "authorization" or starts with a suffix of it, nor lies inside
/// it, so no match of one kind can hide one of the other. It is also the search that runs with
/// the automaton's prefilter; the overlapping one steps through every byte (2 % of a replay).
fn keywords_in(text: &str) -> (bool, bool) {
    let authorization = KEYWORDS.patterns_len() - 1;
    let (mut key_value, mut header) = (false, false);
    for found in KEYWORDS.find_iter(text) {
        if found.pattern().as_usize() == authorization {
            header = true
        } else {
            key_value = true
        }
        if key_value && header {
            break;
        }
    }
    (key_value, header)
}

/// `text` with every secret masked, and how many were. Nothing is copied
/// when nothing is masked.
pub fn scrub_credentials(text: &str) -> (Cow<'_, str>, usize) {
    let mut count = 0;
    let mut mask = |secret: &str| {
        count += 1;
        let keep: String = secret.chars().take(4).collect();
        format!("{keep}{REDACTED}")
    };
    let (key_value, header) = keywords_in(text);
    let mut text = KNOWN_SHAPES.replace_all(text, |caps: &Captures| mask(&caps[0]));
    if header && let Cow::Owned(masked) = AUTHORIZATION.replace_all(&text, |caps: &Captures| format!("{}{}", &caps[1], mask(&caps[2]))) {
        text = Cow::Owned(masked);
    }
    if key_value
        && let Cow::Owned(masked) = KEY_VALUE.replace_all(&text, |caps: &Captures| {
            // `token = readToken(...)` is code, not a secret.
            if text[caps.get(0).map_or(0, |m| m.end())..].starts_with('(') {
                return caps[0].to_owned();
            }
            let (quote, value) = match (caps.get(3), caps.get(4), caps.get(5)) {
                (Some(v), _, _) => ("\"", v.as_str()),
                (_, Some(v), _) => ("'", v.as_str()),
                (_, _, Some(v)) => ("", v.as_str()),
                _ => return caps[0].to_owned(),
            };
            if value.contains(REDACTED) {
                return caps[0].to_owned();
            }
            format!("{}{}{quote}{}{quote}", &caps[1], &caps[2], mask(value))
        })
    {
        text = Cow::Owned(masked);
    }
    (text, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What makes the non-overlapping search of [`keywords_in`] exact.
    #[test]
    fn no_key_value_word_overlaps_the_authorization_word() {
        let header = AUTHORIZATION_WORD;
        for word in KEY_VALUE_WORDS.map(str::to_ascii_lowercase) {
            assert!(!header.contains(&word) && !word.contains(header), "{word}");
            for cut in 1..word.len() {
                let (head, tail) = word.split_at_checked(cut).unwrap_or((&word, ""));
                assert!(!header.starts_with(tail) || tail.is_empty(), "{word} ends with the start of {header}");
                assert!(!header.ends_with(head), "{word} starts with the end of {header}");
            }
        }
        for text in ["tokenauthorization", "AUTHORIZATIONpassword", "x-api-key:Authorization", "userkeyauthorizationsecret"] {
            assert_eq!(keywords_in(text), (true, true), "{text}");
        }
        assert_eq!(keywords_in("authorization only"), (false, true));
        assert_eq!(keywords_in("a secret"), (true, false));
    }

    #[test]
    fn key_values_headers_and_known_shapes_are_masked() {
        let input = "DATABASE_PASSWORD=hunter2hunter2\napi_key: \"abcd1234efgh\"\nAuthorization: Bearer eyJhbGciOiJIUzI1NiJ9.x\nkey sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX and ghp_0123456789abcdefghijABCDEFGHIJ";
        let (out, count) = scrub_credentials(input);
        assert_eq!(count, 5, "{out}");
        assert!(out.contains("DATABASE_PASSWORD=hunt*[REDACTED]"), "{out}");
        assert!(out.contains("api_key: \"abcd*[REDACTED]\""), "{out}");
        assert!(out.contains("Authorization: Bearer eyJh*[REDACTED]"), "{out}");
        assert!(out.contains("sk-p*[REDACTED]") && out.contains("ghp_*[REDACTED]"), "{out}");
        assert!(!out.contains("hunter2hunter2") && !out.contains("0123456789abcdef"), "{out}");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let code = ["token = readTokenFromStorage()", "CancelTokenJSONRequestBody = TokenInput"];
        for text in ["token count: 42", "the password is short", "passwords: see the vault", "max_tokens=4096", code[0], code[1]] {
            assert_eq!(scrub_credentials(text), (Cow::Borrowed(text), 0), "{text}");
        }
    }

    #[test]
    fn keys_in_any_case_are_masked_as_the_patterns_fold_them() {
        // Upper case, and the Kelvin sign and long s that Unicode folds to `k` and `s`.
        for (input, masked) in [
            ("MY_SECRET=abcdefgh12", "MY_SECRET=abcd*[REDACTED]"),
            ("api_\u{212A}ey=abcdefgh12", "api_\u{212A}ey=abcd*[REDACTED]"),
            ("\u{17F}ecret: abcdefgh12", "\u{17F}ecret: abcd*[REDACTED]"),
            ("AUTHORIZATION: Basic dXNlcjpwYXNz", "AUTHORIZATION: Basic dXNl*[REDACTED]"),
        ] {
            assert_eq!(scrub_credentials(input), (Cow::Owned(masked.to_owned()), 1), "{input}");
        }
    }

    #[test]
    fn text_without_a_secret_is_not_copied() {
        assert!(matches!(scrub_credentials("fn main() { let tokens = 3; }").0, Cow::Borrowed(_)));
    }

    #[test]
    fn a_private_key_block_is_masked_whole() {
        let (out, count) = scrub_credentials("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nrest");
        assert_eq!(count, 1);
        assert_eq!(out, "----*[REDACTED]\nrest");
    }
}
