//! `--format auto`: which format a file is, from its name and first record.

use serde_json::Value;

/// A source format `reloop import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// pi coding-agent session JSONL.
    Pi,
    /// Codex CLI rollout JSONL.
    Codex,
    /// Claude Code transcript JSONL.
    ClaudeCode,
    /// SWE-agent `.traj` or OpenHands event list.
    OpenaiMessages,
    /// An ATIF trajectory (Harbor's interchange format).
    Atif,
}

impl Format {
    /// The name used on the command line and in the `source` column.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pi => "pi",
            Self::Codex => "codex",
            Self::ClaudeCode => "claude-code",
            Self::OpenaiMessages => "openai-messages",
            Self::Atif => "atif",
        }
    }

    /// The format named `name` on the command line.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Pi, Self::Codex, Self::ClaudeCode, Self::OpenaiMessages, Self::Atif].into_iter().find(|f| f.name() == name)
    }
}

/// The format of `text` (file name `name`), or `None` when nothing fits.
pub fn detect(name: &str, text: &str) -> Option<Format> {
    if name.ends_with(".traj") {
        return Some(Format::OpenaiMessages);
    }
    if let Ok(document) = serde_json::from_str::<Value>(text) {
        return match &document {
            document if crate::formats::atif::is_atif(document) => Some(Format::Atif),
            Value::Array(_) => Some(Format::OpenaiMessages),
            Value::Object(o) if o.contains_key("history") || o.contains_key("events") => Some(Format::OpenaiMessages),
            Value::Object(o) if o.get("role").and_then(Value::as_str) == Some("assistant") => Some(Format::Pi),
            _ => detect_line(&document),
        };
    }
    let first = text.lines().filter(|l| !l.trim().is_empty()).find_map(|l| serde_json::Deserializer::from_str(l).into_iter::<Value>().next()?.ok())?;
    detect_line(&first)
}

fn detect_line(first: &Value) -> Option<Format> {
    let kind = first.get("type").and_then(Value::as_str);
    match kind {
        Some("session") => Some(Format::Pi),
        Some("session_meta" | "response_item" | "turn_context" | "event_msg") => Some(Format::Codex),
        _ if first.get("payload").is_some() || first.get("instructions").is_some() => Some(Format::Codex),
        Some("user" | "assistant" | "summary" | "file-history-snapshot" | "queue-operation" | "progress" | "system" | "last-prompt") => {
            Some(Format::ClaudeCode)
        }
        _ if first.get("sessionId").is_some() => Some(Format::ClaudeCode),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_told_by_its_first_record() {
        assert_eq!(detect("s.jsonl", "{\"type\":\"session\",\"id\":\"x\"}\n"), Some(Format::Pi));
        assert_eq!(detect("r.jsonl", "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n{}"), Some(Format::Codex));
        assert_eq!(detect("c.jsonl", "{\"type\":\"file-history-snapshot\"}\n{\"type\":\"user\"}"), Some(Format::ClaudeCode));
        assert_eq!(detect("x.traj", "{}"), Some(Format::OpenaiMessages));
        assert_eq!(detect("e.json", "[{\"id\":0}]"), Some(Format::OpenaiMessages));
        assert_eq!(detect("m.json", "{\"role\":\"assistant\",\"content\":[]}"), Some(Format::Pi));
        assert_eq!(detect("t.json", "{\"schema_version\":\"ATIF-v1.8\",\"steps\":[]}"), Some(Format::Atif));
        assert_eq!(detect("n.txt", "hello"), None);
    }
}
