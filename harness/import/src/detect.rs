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
    /// A Gemini CLI chat recording (`session-*.json` or `.jsonl`).
    GeminiCli,
    /// An Inspect AI eval log (`.eval` archive or `.json`), one session per sample and epoch.
    Inspect,
    /// An OpenCode session export (`opencode export <sessionID>`).
    OpenCode,
    /// A Goose session: `goose session export --format json`, or a session JSONL file.
    Goose,
    /// OpenTelemetry GenAI traces, OTLP/JSON or protobuf, one session per trace.
    Otlp,
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
            Self::GeminiCli => "gemini-cli",
            Self::Inspect => "inspect",
            Self::OpenCode => "opencode",
            Self::Goose => "goose",
            Self::Otlp => "otlp",
        }
    }

    /// Every session format, in the order `--format auto` tries them.
    pub const ALL: [Format; 10] =
        [Self::Pi, Self::Codex, Self::ClaudeCode, Self::OpenaiMessages, Self::Atif, Self::GeminiCli, Self::Inspect, Self::OpenCode, Self::Goose, Self::Otlp];

    /// The format named `name` on the command line.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// What `reloop import` reads, for the errors that must say it: the
/// session formats, then vcr cassettes (`--format vcr`).
pub fn formats_read() -> String {
    let mut names: Vec<&str> = Format::ALL.iter().map(|format| format.name()).collect();
    names.push("vcr");
    names.join(", ")
}

/// The format of `text` (file name `name`), or `None` when nothing fits.
pub fn detect(name: &str, text: &str) -> Option<Format> {
    if name.ends_with(".traj") {
        return Some(Format::OpenaiMessages);
    }
    if let Ok(document) = serde_json::from_str::<Value>(text) {
        return match &document {
            document if crate::formats::atif::is_atif(document) => Some(Format::Atif),
            document if crate::formats::gemini_cli::is_gemini_document(document) => Some(Format::GeminiCli),
            document if crate::formats::inspect::is_log_document(document) => Some(Format::Inspect),
            document if crate::formats::opencode::is_export(document) => Some(Format::OpenCode),
            document if crate::formats::goose::is_export(document) || crate::formats::goose::is_message(document) => Some(Format::Goose),
            document if crate::formats::otlp::is_request(document) => Some(Format::Otlp),
            Value::Array(_) => Some(Format::OpenaiMessages),
            Value::Object(o) if o.contains_key("history") || o.contains_key("events") => Some(Format::OpenaiMessages),
            Value::Object(o) if o.get("role").and_then(Value::as_str) == Some("assistant") => Some(Format::Pi),
            // A JSONL format's file is one record a line: a document over
            // many lines is none of them (a Gemini CLI `session-*.json`
            // without `messages` has the `sessionId` of a Claude Code line).
            _ if text.trim().lines().count() > 1 => None,
            _ => detect_line(&document),
        };
    }
    let first = text.lines().filter(|l| !l.trim().is_empty()).find_map(|l| serde_json::Deserializer::from_str(l).into_iter::<Value>().next()?.ok())?;
    detect_line(&first)
}

fn detect_line(first: &Value) -> Option<Format> {
    if crate::formats::gemini_cli::is_gemini_line(first) {
        return Some(Format::GeminiCli);
    }
    if crate::formats::goose::is_first_line(first) {
        return Some(Format::Goose);
    }
    if crate::formats::otlp::is_request(first) {
        return Some(Format::Otlp);
    }
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
        assert_eq!(detect("log.json", "{\"version\":2,\"eval\":{\"task\":\"t\"},\"samples\":[]}"), Some(Format::Inspect));
        assert_eq!(detect("n.txt", "hello"), None);
    }

    /// An OpenCode export is one document of a session `info` and
    /// `messages` of `{info, parts}`; none of the other formats' documents
    /// is one, and it is none of theirs.
    #[test]
    fn an_opencode_export_is_told_apart_from_every_other_document() {
        let export = "{\n  \"info\": {\n    \"id\": \"ses_1\"\n  },\n  \"messages\": [\n    {\"info\": {\"role\": \"user\"}, \"parts\": []}\n  ]\n}\n";
        assert_eq!(detect("ses_1.json", export), Some(Format::OpenCode));
        assert_eq!(detect("empty.json", "{\"info\": {\"id\": \"ses_1\"}, \"messages\": []}"), Some(Format::OpenCode));
        // A Gemini CLI record has `messages` but no `info`; a chat message list has no `parts`.
        assert_eq!(detect("g.json", "{\"sessionId\": \"s\", \"messages\": []}"), Some(Format::GeminiCli));
        assert_eq!(
            detect("h.json", "{\"info\": {}, \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"history\": []}"),
            Some(Format::OpenaiMessages)
        );
        assert_eq!(detect("o.json", "{\"info\": {}, \"messages\": [{\"role\": \"user\"}]}"), None);
    }

    #[test]
    fn otlp_json_is_told_by_resource_spans_as_a_document_or_one_request_a_line() {
        let request = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[]}]}]}";
        assert_eq!(detect("traces.json", request), Some(Format::Otlp));
        assert_eq!(detect("traces.jsonl", &format!("{request}\n{request}\n")), Some(Format::Otlp));
        assert_eq!(detect("pretty.json", "{\n  \"resourceSpans\": []\n}\n"), Some(Format::Otlp));
        assert_eq!(detect("snake.json", "{\"resource_spans\": []}"), Some(Format::Otlp));
        assert_eq!(detect("logs.json", "{\"resourceLogs\": []}"), None, "OTLP logs are no traces");
    }

    #[test]
    fn gemini_cli_jsonl_is_told_by_its_header_or_update_lines_and_claude_code_stays_claude_code() {
        let header =
            "{\"sessionId\":\"s\",\"projectHash\":\"h\",\"startTime\":\"t\",\"lastUpdated\":\"t\"}\n{\"id\":\"m\",\"type\":\"user\",\"content\":\"hi\"}\n";
        assert_eq!(detect("session-2026-05-01T10-00-s.jsonl", header), Some(Format::GeminiCli));
        assert_eq!(detect("s.jsonl", "{\"$set\":{\"lastUpdated\":\"t\"}}\n"), Some(Format::GeminiCli));
        assert_eq!(detect("s.jsonl", "{\"$rewindTo\":\"m\"}\n"), Some(Format::GeminiCli));
        let claude = "{\"sessionId\":\"s\",\"type\":\"user\",\"message\":{}}\n{\"sessionId\":\"s\",\"type\":\"assistant\"}\n";
        assert_eq!(detect("c.jsonl", claude), Some(Format::ClaudeCode));
    }

    /// Goose's export, its session JSONL (the metadata line, or a message
    /// first) and one message alone are Goose; pi's bare assistant message
    /// (`timestamp`, no `created`) and pi's session stay pi.
    #[test]
    fn goose_exports_and_session_files_are_goose_and_pi_stays_pi() {
        let export = "{\n  \"id\": \"20250801_1\",\n  \"working_dir\": \"/w\",\n  \"message_count\": 2,\n  \"conversation\": []\n}\n";
        assert_eq!(detect("s.json", export), Some(Format::Goose));
        let message = "{\"role\":\"assistant\",\"created\":1747178334,\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}";
        let metadata = "{\"working_dir\":\"/w\",\"description\":\"d\",\"message_count\":1,\"total_tokens\":null}";
        assert_eq!(detect("20250801_100315.jsonl", &format!("{metadata}\n{message}\n")), Some(Format::Goose));
        assert_eq!(detect("20250801_100315.jsonl", &format!("{message}\n{message}\n")), Some(Format::Goose));
        assert_eq!(detect("m.json", message), Some(Format::Goose));
        let pi = "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"timestamp\":1747178334000,\"stopReason\":\"stop\"}";
        assert_eq!(detect("m.json", pi), Some(Format::Pi));
        assert_eq!(detect("s.jsonl", "{\"type\":\"session\",\"id\":\"x\",\"cwd\":\"/w\"}\n"), Some(Format::Pi));
    }

    /// Regression (issue 43): a Gemini CLI session (one pretty-printed JSON
    /// document with a `sessionId`) was taken for Claude Code JSONL, every
    /// line then skipped as not JSON.
    #[test]
    fn a_document_over_many_lines_is_no_jsonl_format() {
        let gemini = "{\n  \"sessionId\": \"5f2c\",\n  \"projectHash\": \"ab\",\n  \"messages\": []\n}\n";
        assert_eq!(detect("session-2025-10-01T10-00-5f2c.json", gemini), Some(Format::GeminiCli));
        assert_eq!(detect("other.json", "{\n  \"sessionId\": \"5f2c\"\n}\n"), None);
        assert_eq!(detect("one.jsonl", "{\"sessionId\": \"5f2c\", \"type\": \"user\"}\n"), Some(Format::ClaudeCode), "one record on one line is JSONL");
    }
}
