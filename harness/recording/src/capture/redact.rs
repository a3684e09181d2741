//! What never reaches a recording: credentials in headers (always), the
//! keys reloop itself sends live ([`InjectedSecrets`], in any spelling,
//! in header values and bodies alike), plus the header names and body
//! patterns the user adds. The list of what was stripped is written into
//! the recording (`redacted:`).

use std::hash::BuildHasher as _;

use regex::Regex;
use serde_json::Value;

use super::secrets::{InjectedSecrets, REDACTED};
use crate::Exchange;
use crate::tool_side::ShellCommand;

/// Headers that carry credentials or account identities, always stripped.
pub const SECRET_HEADERS: [&str; 10] = [
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "cookie",
    "set-cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
];

/// The header names and body patterns to strip.
#[derive(Debug, Clone)]
pub struct Redaction {
    headers: Vec<String>,
    body: Vec<Regex>,
    secrets: InjectedSecrets,
}

impl Redaction {
    /// The default secrets plus `headers` (any case) and `body` patterns;
    /// `Err` names a pattern that is not a regex.
    pub fn new(headers: &[String], body: &[String]) -> Result<Self, String> {
        let body = body.iter().map(|pattern| Regex::new(pattern).map_err(|e| format!("--redact-body `{pattern}`: {e}"))).collect::<Result<_, _>>()?;
        let headers = SECRET_HEADERS.iter().map(|h| (*h).to_owned()).chain(headers.iter().map(|h| h.to_ascii_lowercase())).collect();
        Ok(Self { headers, body, secrets: InjectedSecrets::default() })
    }

    /// This redaction, also replacing the keys reloop sends (`secrets`).
    pub fn with_secrets(self, secrets: InjectedSecrets) -> Self {
        Self { secrets, ..self }
    }

    /// The keys reloop sends, which this redaction replaces.
    pub fn secrets(&self) -> &InjectedSecrets {
        &self.secrets
    }

    /// Whether the header `name` is stripped.
    pub fn strips_header(&self, name: &str) -> bool {
        self.headers.iter().any(|secret| secret.eq_ignore_ascii_case(name))
    }

    /// `headers` without the stripped ones, and their values redacted as
    /// text (an upstream may echo a key in any header).
    pub fn headers(&self, headers: &[(String, String)]) -> Vec<(String, String)> {
        headers.iter().filter(|(name, _)| !self.strips_header(name)).map(|(name, value)| (name.clone(), self.text(value))).collect()
    }

    /// `text` with every body-pattern match and every sent key replaced by [`REDACTED`].
    pub fn text(&self, text: &str) -> String {
        let text = self.body.iter().fold(text.to_owned(), |text, pattern| pattern.replace_all(&text, REDACTED).into_owned());
        self.secrets.text(&text).into_owned()
    }

    /// `bytes` redacted as text when they are UTF-8 (they are kept as they
    /// are otherwise: the proxy asks upstreams for unencoded bodies).
    pub fn bytes(&self, bytes: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(bytes) {
            Ok(text) if self.redacts_bodies() => self.text(text).into_bytes(),
            _ => self.secrets.bytes(bytes),
        }
    }

    /// Whether a body pattern matches somewhere in `text` (the last check
    /// before a recording is written: a match there must not reach disk).
    pub fn finds(&self, text: &str) -> bool {
        self.body.iter().any(|pattern| pattern.is_match(text)) || self.secrets.finds(text)
    }

    /// Whether there are body patterns or sent keys (without them bodies
    /// are kept as they are).
    pub fn redacts_bodies(&self) -> bool {
        !self.body.is_empty() || !self.secrets.is_empty()
    }

    /// `exchange` with every body-pattern match in its neutral fields (text,
    /// thinking, summaries, tool arguments, refusals, ids…) redacted. The
    /// raw events were redacted one by one, so a secret split across deltas
    /// only shows once they are joined into parts; when that happens the raw
    /// bytes (which cannot be redacted faithfully) are dropped: `None` in
    /// `raw` says so.
    pub fn exchange(&self, exchange: Exchange) -> Exchange {
        let Some(mut neutral) = self.neutral_fields(&exchange) else { return exchange };
        if !self.value(&mut neutral) {
            return exchange;
        }
        // The same shape with strings changed reads back; if it ever did
        // not, the check of the written text still refuses the match.
        serde_json::from_value(neutral).unwrap_or(exchange)
    }

    /// `command` with every body-pattern match and sent key in its text
    /// (the line, its folder, what it read and wrote) redacted, as an
    /// exchange's bodies are: a command's output is the agent's next
    /// prompt, and a secret it printed would be written just the same. A
    /// redacted line replays only for an agent that sends it redacted.
    pub fn shell_command(&self, command: ShellCommand) -> ShellCommand {
        let text = |text: String| self.text(&text);
        ShellCommand {
            command: text(command.command),
            stdout: text(command.stdout),
            stderr: text(command.stderr),
            cwd: command.cwd.map(text),
            stdin: command.stdin.map(text),
            ..command
        }
    }

    /// Whether a body pattern matches a neutral field of `exchange`.
    pub fn finds_in_parts(&self, exchange: &Exchange) -> bool {
        self.neutral_fields(exchange).is_some_and(|mut neutral| self.value(&mut neutral))
    }

    /// `exchange` without its raw bytes, as JSON; `None` when there is
    /// nothing to look for.
    fn neutral_fields(&self, exchange: &Exchange) -> Option<Value> {
        let mut neutral = serde_json::to_value(exchange).ok().filter(|_| self.redacts_bodies())?;
        neutral.as_object_mut()?.remove("raw");
        Some(neutral)
    }

    /// Redacts every string in `value` (and in JSON held as a string, such
    /// as tool arguments with escaped characters); whether anything changed.
    /// Also what an MCP server was asked and answered (`mcp-record`).
    pub fn value(&self, value: &mut Value) -> bool {
        match value {
            Value::String(text) => {
                let redacted = self.text(text);
                if redacted != *text {
                    *text = redacted;
                    return true;
                }
                let Ok(mut inner @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(text) else { return false };
                let changed = self.value(&mut inner);
                if changed {
                    *text = inner.to_string();
                }
                changed
            }
            Value::Array(items) => items.iter_mut().fold(false, |changed, item| self.value(item) | changed),
            Value::Object(fields) => fields.values_mut().fold(false, |changed, field| self.value(field) | changed),
            _ => false,
        }
    }

    /// What a recording lists under `redacted:` for its exchange `number`
    /// (from 1) that lost its raw bytes to a secret ([`Self::exchange`]).
    pub fn raw_dropped(number: usize) -> String {
        format!("raw:exchange-{number}")
    }

    /// What a recording lists under `redacted:`: `header:NAME` per header,
    /// `body:#N:HASH` per pattern (its position and a short hash: a pattern
    /// may be a literal key, so its text is never written), `key:VARIABLE`
    /// per key sent.
    pub fn describe(&self) -> Vec<String> {
        let hash = |pattern: &Regex| foldhash::quality::FixedState::with_seed(0).hash_one(pattern.as_str()) as u32;
        let body = self.body.iter().enumerate().map(|(n, pattern)| format!("body:#{}:{:08x}", n + 1, hash(pattern)));
        let keys = self.secrets.variables().map(|variable| format!("key:{variable}"));
        self.headers.iter().map(|h| format!("header:{h}")).chain(body).chain(keys).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_command_loses_its_secrets_in_every_text_and_keeps_its_status() {
        let redaction = Redaction::new(&[], &["sk-live-[0-9]+".into()]).unwrap();
        let command = ShellCommand {
            command: "echo sk-live-1".into(),
            stdout: "sk-live-22\n".into(),
            stderr: "key sk-live-333".into(),
            exit_code: 3,
            cwd: Some("sk-live-4".into()),
            stdin: Some("sk-live-5".into()),
            after_exchange: Some(2),
        };
        let redacted = redaction.shell_command(command);
        assert!(!serde_json::to_string(&redacted).unwrap().contains("sk-live"), "{redacted:?}");
        assert_eq!((redacted.stdout.as_str(), redacted.exit_code, redacted.after_exchange), ("[REDACTED]\n", 3, Some(2)));
    }

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
        assert!(redaction.describe().last().unwrap().starts_with("body:#1:"));
        assert!(Redaction::new(&[], &["(".into()]).unwrap_err().contains("--redact-body"));
    }

    #[test]
    fn the_list_of_what_was_stripped_never_shows_a_body_pattern() {
        let redaction = Redaction::new(&[], &["sk-proj-AbC123".into(), "other".into()]).unwrap();
        let described = redaction.describe().join(" ");
        assert!(!described.contains("AbC123") && !described.contains("other"), "{described}");
        assert!(described.contains("body:#1:") && described.contains("body:#2:"), "{described}");
    }

    #[test]
    fn json_held_as_a_string_is_redacted_inside_its_escapes() {
        let redaction = Redaction::new(&[], &["sk-live[0-9]+".into()]).unwrap();
        let mut value = Value::String(r#"{"key":"sk\u002dlive42"}"#.into());
        assert!(redaction.value(&mut value));
        assert_eq!(value, Value::String(r#"{"key":"[REDACTED]"}"#.into()));
        assert!(!redaction.value(&mut Value::String("nothing here".into())));
    }
}
