//! Test helpers for the real captures (`harness/wire/tests/data/`, see its
//! `SOURCES.md`), shared by this crate's tests and the mock's rendering
//! tests (feature `test-support`).

use serde_json::Value;

/// A real capture's text, by its path under `harness/wire/tests/data/`.
#[macro_export]
macro_rules! capture {
    ($path:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../wire/tests/data/", $path))
    };
}
pub use capture;

/// A vercel `*.chunks.jsonl` capture framed as the wire sends it (`event:`
/// named after each event's type where the API names its events).
pub fn framed(jsonl: &str, named: bool) -> String {
    jsonl
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let kind = serde_json::from_str::<Value>(line).unwrap()["type"].as_str().unwrap_or_default().to_owned();
            if named { format!("event: {kind}\ndata: {line}\n\n") } else { format!("data: {line}\n\n") }
        })
        .collect()
}
