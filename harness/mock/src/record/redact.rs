//! What never reaches a recording: credentials in headers (always), plus
//! the header names and body patterns the user adds. The list of what was
//! stripped is written into the recording (`redacted:`).

use regex::Regex;

/// Headers that carry credentials or account identities, always stripped.
pub const SECRET_HEADERS: [&str; 9] =
    ["authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie", "openai-organization", "openai-project", "anthropic-organization-id"];

/// The text a body match is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The header names and body patterns to strip.
#[derive(Debug, Clone)]
pub struct Redaction {
    headers: Vec<String>,
    body: Vec<Regex>,
}

impl Redaction {
    /// The default secrets plus `headers` (any case) and `body` patterns;
    /// `Err` names a pattern that is not a regex.
    pub fn new(headers: &[String], body: &[String]) -> Result<Self, String> {
        let body = body.iter().map(|pattern| Regex::new(pattern).map_err(|e| format!("--redact-body `{pattern}`: {e}"))).collect::<Result<_, _>>()?;
        let headers = SECRET_HEADERS.iter().map(|h| (*h).to_owned()).chain(headers.iter().map(|h| h.to_ascii_lowercase())).collect();
        Ok(Self { headers, body })
    }

    /// Whether the header `name` is stripped.
    pub fn strips_header(&self, name: &str) -> bool {
        self.headers.iter().any(|secret| secret.eq_ignore_ascii_case(name))
    }

    /// `headers` without the stripped ones.
    pub fn headers(&self, headers: &[(String, String)]) -> Vec<(String, String)> {
        headers.iter().filter(|(name, _)| !self.strips_header(name)).cloned().collect()
    }

    /// `text` with every body-pattern match replaced by [`REDACTED`].
    pub fn text(&self, text: &str) -> String {
        self.body.iter().fold(text.to_owned(), |text, pattern| pattern.replace_all(&text, REDACTED).into_owned())
    }

    /// `bytes` redacted as text when they are UTF-8 (they are kept as they
    /// are otherwise: the proxy asks upstreams for unencoded bodies).
    pub fn bytes(&self, bytes: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(bytes) {
            Ok(text) if !self.body.is_empty() => self.text(text).into_bytes(),
            _ => bytes.to_vec(),
        }
    }

    /// What a recording lists under `redacted:`: `header:NAME` per header,
    /// `body:/PATTERN/` per pattern.
    pub fn describe(&self) -> Vec<String> {
        self.headers.iter().map(|h| format!("header:{h}")).chain(self.body.iter().map(|p| format!("body:/{}/", p.as_str()))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_added_names_are_stripped_in_any_case() {
        let redaction = Redaction::new(&["X-Custom-Token".into()], &[]).unwrap();
        let headers = [("Authorization", "Bearer sk-1"), ("X-API-KEY", "k"), ("x-custom-token", "t"), ("Cookie", "c"), ("content-type", "json")];
        let headers: Vec<(String, String)> = headers.iter().map(|(n, v)| ((*n).into(), (*v).into())).collect();
        assert_eq!(redaction.headers(&headers), [("content-type".to_owned(), "json".to_owned())]);
        assert!(redaction.describe().contains(&"header:x-custom-token".to_owned()));
    }

    #[test]
    fn body_patterns_replace_every_match() {
        let redaction = Redaction::new(&[], &["sk-[A-Za-z0-9]+".into()]).unwrap();
        assert_eq!(redaction.text("key sk-abc and sk-XYZ9"), "key [REDACTED] and [REDACTED]");
        assert_eq!(redaction.describe().last().unwrap(), "body:/sk-[A-Za-z0-9]+/");
        assert!(Redaction::new(&[], &["(".into()]).unwrap_err().contains("--redact-body"));
    }
}
