//! `reloop serve --log-json DIR`: one JSON-lines file per session, one
//! object per request (what the stderr line says, as fields), for a script
//! to read what an agent did without parsing text. Each line is appended
//! with one write, so a killed server leaves whole lines.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use reloop_wire::Format;

use reloop_recording::session_path::file_stem_of;

use crate::replay::session::RequestRecord;

/// Where the session logs go.
#[derive(Debug, Clone)]
pub struct JsonLog {
    dir: PathBuf,
}

impl JsonLog {
    /// Logs into `dir`, which must exist.
    pub fn new(dir: &Path) -> Self {
        Self { dir: dir.to_owned() }
    }

    /// The file of `session`: its name with every byte outside
    /// `[A-Za-z0-9._-]` percent-encoded (`run/r/1` is `run%2Fr%2F1.jsonl`),
    /// so a name can neither leave the folder nor clash with another.
    pub fn file_of(&self, session: &str) -> PathBuf {
        self.dir.join(format!("{}.jsonl", file_stem_of(session)))
    }

    /// Appends a request answered (or refused) from the recording; `reason`
    /// is a divergence's.
    pub fn request(&self, session: &str, format: Format, record: &RequestRecord, reason: Option<&str>) {
        let line = serde_json::json!({
            "session": session,
            "kind": "request",
            "index": record.index,
            "api": format.as_str(),
            "model": record.model,
            "stream": record.stream,
            "status": record.status,
            "result": record.result,
            "exchange": record.exchange,
            "retry": record.retry,
            "messages": record.messages,
            "tool_results": record.tool_results.len(),
            "input_tokens": record.input_tokens,
            "output_tokens": record.output_tokens,
            "cached_tokens": record.cached_tokens,
            "cache_write_tokens": record.cache_write_tokens,
            "cache_break": record.cache_break,
            "cache_break_cause": record.cache_break_site.as_ref().map(|site| site.cause),
            "divergence_reason": reason,
            "at_ms": record.at_ms,
        });
        self.append(session, &line);
    }

    /// Appends a `count_tokens` request and its count.
    pub fn count_tokens(&self, session: &str, input_tokens: u64) {
        self.append(session, &serde_json::json!({ "session": session, "kind": "count_tokens", "status": 200, "input_tokens": input_tokens }));
    }

    fn append(&self, session: &str, line: &serde_json::Value) {
        let path = self.file_of(session);
        let written = std::fs::OpenOptions::new().create(true).append(true).open(&path).and_then(|mut file| file.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = written {
            eprintln!("reloop serve: cannot append to {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_become_file_names_that_stay_in_the_folder() {
        let log = JsonLog::new(Path::new("/logs"));
        assert_eq!(log.file_of("gpt-4.1-answer"), Path::new("/logs/gpt-4.1-answer.jsonl"));
        assert_eq!(log.file_of("run/r/1"), Path::new("/logs/run%2Fr%2F1.jsonl"));
        assert_eq!(log.file_of("../x y"), Path::new("/logs/..%2Fx%20y.jsonl"));
    }
}
