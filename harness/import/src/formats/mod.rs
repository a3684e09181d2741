//! One module per source format, each turning a file into an
//! [`ImportedSession`](crate::session::ImportedSession).

pub mod atif;
pub mod claude_code;
pub mod codex;
pub mod gemini_cli;
pub mod goose;
pub mod inspect;
pub mod openai_messages;
pub mod opencode;
pub mod otlp;
pub mod pi;

use serde_json::Value;

use crate::session::ImportedSession;

/// The string at `key`, if it is one.
pub(crate) fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// The number at `key`, or 0.
pub(crate) fn u64_at(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The text of a message content: a string, or the `text` of every text-like
/// block (`text`, `input_text`, `output_text`) joined by blank lines.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| matches!(str_at(block, "type"), Some("text" | "input_text" | "output_text") | None))
            .filter_map(|block| str_at(block, "text"))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

/// A whole-file JSON document (ATIF, SWE-agent, OpenHands), or `None` with
/// the file's one line accounted as skipped, naming where it stopped parsing.
pub(crate) fn whole_document(text: &str, session: &mut ImportedSession) -> Option<Value> {
    match serde_json::from_str(text) {
        Ok(document) => Some(document),
        Err(error) => {
            session.lines.read = 1;
            session.lines.skip(error.line(), format!("not JSON ({error}): nothing imported"));
            None
        }
    }
}

/// Reads a format an agent keeps both as one JSON document and as JSON
/// lines (Gemini CLI's legacy file and its JSONL, Goose's export and its
/// session file): a document that `is_document` accepts goes to `document`,
/// a text that is no one document to `lines`. A document of some other
/// shape over several lines is refused whole as `not_the_document` says,
/// rather than read line by line as if each line were a record.
pub(crate) fn document_or_lines(
    session: &mut ImportedSession,
    text: &str,
    is_document: fn(&Value) -> bool,
    document: fn(&mut ImportedSession, &Value),
    lines: fn(&mut ImportedSession, &str),
    not_the_document: &str,
) {
    match serde_json::from_str::<Value>(text) {
        Ok(value) if is_document(&value) => document(session, &value),
        Ok(_) if text.trim().lines().count() > 1 => {
            session.lines.read = 1;
            session.lines.skip(1, not_the_document);
        }
        _ => lines(session, text),
    }
}
