//! Writing recordings: the one v2 writer that `reloop record`, `serve
//! --capture` and `reloop import` share. YAML (what people read and edit),
//! defaults left out, written atomically so a crash leaves the old file or
//! the new one.

use std::io::{self, Write};
use std::path::Path;

use reloop_recording::Recording;

use crate::atomic_file::write_atomically;

/// Text of the exchange `reloop import` adds when a session holds no model
/// call at all, so its replay has one answer to give. Recorded pricing
/// (`reloop_eval::recorded_pricing`) knows it as the importer's own, not the
/// session's.
pub const SESSION_END_TEXT: &str = "[reloop import] The recorded session ends here.";

/// The recording as v2 YAML text.
pub fn to_yaml(recording: &Recording) -> String {
    serde_saphyr::to_string(recording).expect("a recording is plain data")
}

/// Writes `recording` to `path` as v2 YAML, atomically.
pub fn write_recording(path: &Path, recording: &Recording) -> io::Result<()> {
    let text = to_yaml(recording);
    write_atomically(path, |file| file.write_all(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part kind and optional field, with text that YAML must quote.
    const EVERY_PART: &str = r#"format: reloop.recording/v2
model: m-1
redacted: [authorization]
exchanges:
  - parts:
      - { type: reasoning, id: rs_1, summary: ["Look: first."], encrypted_content: gAAA }
      - { type: thinking, thinking: "Line one.\nLine two: \"quoted\"", signature: EqQB, chunks: [4, 22] }
      - { type: redacted_thinking, data: EmwKAhgB }
      - { type: text, text: "- not a list", id: msg_1 }
      - { type: server_tool_use, id: srvtoolu_1, name: web_search, input: { query: "a: b" } }
      - { type: server_tool_result, tool_use_id: srvtoolu_1, kind: web_search_tool_result, content: [] }
      - { type: tool_call, id: toolu_1, name: read, arguments: '{"path": "a"' }
      - { type: refusal, refusal: "no" }
    usage: { input_tokens: 10, output_tokens: 5, cache_write_tokens: 3, wire: { cache_creation: { ephemeral_5m_input_tokens: 3 } } }
    raw:
      api: anthropic
      headers: [[content-type, text/event-stream]]
      events: ["event: ping\ndata: {\"type\": \"ping\"}\n\n"]
  - { purpose: compaction, reusable: true, text: "Summary.", timing: { first_byte_ms: 5 } }
"#;

    #[test]
    fn written_recordings_read_back_equal() {
        let dir = std::env::temp_dir().join(format!("reloop-recording-file-{}", std::process::id()));
        let source = dir.join("source.yaml");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&source, EVERY_PART).unwrap();
        let original: Recording = crate::yaml::load(&source).unwrap();
        let written = dir.join("written.yaml");
        write_recording(&written, &original).unwrap();
        let again: Recording = crate::yaml::load(&written).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(again, original);
        let text = to_yaml(&original);
        assert!(text.starts_with("format: reloop.recording/v2"), "{text}");
        assert!(!text.contains("purpose: main") && !text.contains("reusable: false"), "defaults are left out:\n{text}");
    }

    #[test]
    fn the_documented_v2_example_loads() {
        let docs = include_str!("../../../docs/recording-format.md");
        let v2 = &docs[docs.find("## v2").unwrap()..];
        let example = v2.split("```yaml\n").nth(1).unwrap().split("```").next().unwrap();
        let recording: Recording = crate::yaml::parse(Path::new("recording-format.md"), example).unwrap();
        assert_eq!(recording.exchanges[0].parts.len(), 3);
    }
}
