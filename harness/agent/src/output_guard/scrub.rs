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

use std::sync::LazyLock;

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

/// `text` with every secret masked, and how many were.
pub fn scrub_credentials(text: &str) -> (String, usize) {
    let mut count = 0;
    let mut mask = |secret: &str| {
        count += 1;
        let keep: String = secret.chars().take(4).collect();
        format!("{keep}{REDACTED}")
    };
    let text = KNOWN_SHAPES.replace_all(text, |caps: &Captures| mask(&caps[0])).into_owned();
    let text = AUTHORIZATION.replace_all(&text, |caps: &Captures| format!("{}{}", &caps[1], mask(&caps[2]))).into_owned();
    let source = text.clone();
    let text = KEY_VALUE
        .replace_all(&source, |caps: &Captures| {
            // `token = readToken(...)` is code, not a secret.
            if source[caps.get(0).map_or(0, |m| m.end())..].starts_with('(') {
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
        .into_owned();
    (text, count)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(scrub_credentials(text), (text.to_owned(), 0), "{text}");
        }
    }

    #[test]
    fn a_private_key_block_is_masked_whole() {
        let (out, count) = scrub_credentials("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nrest");
        assert_eq!(count, 1);
        assert_eq!(out, "----*[REDACTED]\nrest");
    }
}
