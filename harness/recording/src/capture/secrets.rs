//! The secrets reloop itself adds to what it sends upstream: the keys a
//! live call takes from the environment (`docs/rerecord.md`). An upstream
//! may echo one anywhere (a header, an id, an extra field, the text), as
//! it is, JSON-escaped, percent-encoded or inside a longer token; every
//! such spelling is replaced by [`REDACTED`].
//!
//! The live layer reads its keys from here and nowhere else, and scrubs an
//! upstream's answer with the same value the moment it arrives
//! (`crate::live`), before anything parses, records, serves or logs it: a
//! writer added later sees only scrubbed bytes, so it cannot forget to
//! redact. [`super::Redaction`] carries the same secrets for what only the
//! joined parts show (a key split across stream deltas).

use std::borrow::Cow;

use regex::Regex;
use reloop_wire::Format;

/// The text a body match, and every spelling of a key, is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The environment variables live calls take their keys from, one per API
/// family (none set: no key is sent, as a local server wants).
const KEY_VARIABLES: [&str; 3] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"];

/// Shorter values are placeholders local servers take (`x`, `ollama`), not
/// credentials; replacing them would rewrite every word that contains them.
const SHORTEST_SECRET: usize = 8;

/// The keys live calls send, and how to find them in what comes back.
#[derive(Debug, Clone, Default)]
pub struct InjectedSecrets {
    secrets: Vec<Injected>,
}

#[derive(Debug, Clone)]
struct Injected {
    variable: &'static str,
    value: String,
    text: Regex,
    bytes: regex::bytes::Regex,
}

impl InjectedSecrets {
    /// The keys set in the environment now.
    pub fn from_environment() -> Self {
        Self::from_values(KEY_VARIABLES.iter().filter_map(|variable| Some((*variable, std::env::var(variable).ok()?))))
    }

    /// The keys `values` gives (variable, value); empty values are left out.
    pub fn from_values(values: impl IntoIterator<Item = (&'static str, String)>) -> Self {
        let secrets = values
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(variable, value)| {
                let pattern = any_encoding(&value);
                let text = Regex::new(&pattern).expect("escaped literals make a valid pattern");
                let bytes = regex::bytes::Regex::new(&pattern).expect("escaped literals make a valid pattern");
                Injected { variable, value, text, bytes }
            })
            .collect();
        Self { secrets }
    }

    /// The key a live call in `format` sends, if its variable is set.
    pub fn key_for(&self, format: Format) -> Option<&str> {
        let variable = format.api_key_variable();
        self.secrets.iter().find(|secret| secret.variable == variable).map(|secret| secret.value.as_str())
    }

    /// Whether no key is sent at all.
    pub fn is_empty(&self) -> bool {
        self.redacted().next().is_none()
    }

    /// `text` with every spelling of every key replaced by [`REDACTED`].
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.redacted().fold(Cow::Borrowed(text), |text, secret| match secret.text.replace_all(&text, REDACTED) {
            Cow::Borrowed(_) => text,
            Cow::Owned(replaced) => Cow::Owned(replaced),
        })
    }

    /// `bytes` (text or not) with every spelling of every key replaced.
    pub fn bytes(&self, bytes: &[u8]) -> Vec<u8> {
        self.redacted().fold(bytes.to_vec(), |bytes, secret| secret.bytes.replace_all(&bytes, REDACTED.as_bytes()).into_owned())
    }

    /// Whether a key shows in `text` in any spelling.
    pub fn finds(&self, text: &str) -> bool {
        self.redacted().any(|secret| secret.text.is_match(text))
    }

    /// The variables whose keys are redacted (for a recording's `redacted:`).
    pub fn variables(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.redacted().map(|secret| secret.variable)
    }

    /// The keys long enough to be credentials ([`SHORTEST_SECRET`]).
    fn redacted(&self) -> impl Iterator<Item = &Injected> {
        self.secrets.iter().filter(|secret| secret.value.chars().count() >= SHORTEST_SECRET)
    }
}

/// A pattern matching `value` with any of its characters written as
/// itself, JSON-escaped (`\u002d`, any case; `\/`) or percent-encoded
/// (`%2D`): the spellings a provider's JSON or URL may echo it in.
fn any_encoding(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            let mut spellings = vec![regex::escape(c.encode_utf8(&mut [0; 4]))];
            let mut units = [0u16; 2];
            let escaped: String = c.encode_utf16(&mut units).iter().map(|unit| format!(r"\\u(?i:{unit:04x})")).collect();
            spellings.push(escaped);
            if c == '/' {
                spellings.push(r"\\/".to_owned());
            }
            if c.is_ascii() {
                spellings.push(format!("%(?i:{:02x})", c as u32));
            }
            format!("(?:{})", spellings.join("|"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planted() -> InjectedSecrets {
        InjectedSecrets::from_values([("OPENAI_API_KEY", "sk-planted/key-5151".to_owned()), ("ANTHROPIC_API_KEY", "ollama".to_owned())])
    }

    #[test]
    fn every_spelling_of_a_key_is_replaced_even_inside_a_longer_token() {
        let secrets = planted();
        for echoed in ["sk-planted/key-5151", r"sk\u002dplanted\/key\u002D5151", "sk%2Dplanted%2fkey-5151", r"\u0073k-planted/key-5151"] {
            let text = format!("id: fp_{echoed}_9 and \"{echoed}\"");
            assert_eq!(secrets.text(&text), "id: fp_[REDACTED]_9 and \"[REDACTED]\"", "{echoed}");
            assert_eq!(secrets.bytes(text.as_bytes()), b"id: fp_[REDACTED]_9 and \"[REDACTED]\"", "{echoed}");
            assert!(secrets.finds(&text));
        }
        assert!(!secrets.finds("sk-planted/key-515"), "a prefix is not the key");
    }

    #[test]
    fn a_placeholder_key_is_sent_but_not_redacted() {
        let secrets = planted();
        assert_eq!(secrets.key_for(Format::Anthropic), Some("ollama"));
        assert_eq!(secrets.key_for(Format::OpenaiResponses), Some("sk-planted/key-5151"));
        assert_eq!(secrets.key_for(Format::Gemini), None);
        assert_eq!(secrets.text("model ollama"), "model ollama");
        assert_eq!(secrets.variables().collect::<Vec<_>>(), ["OPENAI_API_KEY"]);
        assert!(InjectedSecrets::from_values([("GEMINI_API_KEY", String::new())]).is_empty());
    }
}
