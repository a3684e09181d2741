//! Which of reloop's files a YAML file is, told by its `format` field,
//! parsed as YAML: a recording's top-level mapping has `format:
//! reloop.recording/v1` or `/v2` (first, as reloop writes it, or among the
//! first fields, whatever the style: block, flow or JSON, which is YAML);
//! any other YAML file is taken for a scenario (which has no `format`
//! field). So a folder may hold both (an
//! import's output, a suite with its recordings below it): `run` and
//! `sweep` take its scenarios, `serve --recording` its recordings, and each
//! says in one line how many of the other kind it skipped.

use std::fmt;
use std::path::{Path, PathBuf};

use reloop_recording::{FORMAT_V1, FORMAT_V2};
use serde_saphyr::granit_parser::{Event, Parser};

use crate::input_error::InputError;
use crate::input_file::read_head;

/// The kind of a YAML file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A scenario (`docs/scenario-format.md`).
    Scenario,
    /// A recording (`docs/recording-format.md`).
    Recording,
}

impl FileKind {
    /// The kind of `path`: a recording when its top-level `format` field is
    /// a recording format tag (parsed from the file's first 4 KiB), else a
    /// scenario.
    pub fn of(path: &Path) -> Self {
        if read_head(path).is_some_and(|text| is_tagged(&text)) { Self::Recording } else { Self::Scenario }
    }

    /// The plural noun, for the line that counts skipped files.
    fn plural(self) -> &'static str {
        match self {
            Self::Scenario => "scenarios",
            Self::Recording => "recordings",
        }
    }
}

/// Whether a file's head says it is a recording: its top-level mapping
/// has a `format` field holding a recording tag. Read with YAML's own
/// parser, so the style does not matter (block, flow, JSON) and neither
/// does what comes before the first field (comments, `---`, a `%YAML`
/// directive), nor a `format:` inside a string or a nested mapping; the
/// fields before `format` are skipped whole. Only what the head holds is
/// read: a `format` past it (or past a syntax error) is not found.
fn is_tagged(head: &str) -> bool {
    let mut events = Parser::new_from_str(head).map_while(Result::ok).map(|(event, _)| event);
    let root = events.find(|event| !matches!(event, Event::StreamStart | Event::DocumentStart(..)));
    if !matches!(root, Some(Event::MappingStart(..))) {
        return false;
    }
    while let Some(Event::Scalar(key, ..)) = events.next() {
        let value = events.next();
        if key == "format" {
            return matches!(value, Some(Event::Scalar(tag, ..)) if tag == FORMAT_V1 || tag == FORMAT_V2);
        }
        if matches!(value, Some(Event::MappingStart(..) | Event::SequenceStart(..))) {
            skip_collection(&mut events);
        }
    }
    false
}

/// Consumes the events of a collection whose start was just read, up to
/// its end.
fn skip_collection<'a>(events: &mut impl Iterator<Item = Event<'a>>) {
    let mut depth = 1usize;
    for event in events {
        match event {
            Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
            Event::MappingEnd | Event::SequenceEnd => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            return;
        }
    }
}

/// Whether `path` is a recording: its first field is a recording format tag.
pub fn is_recording(path: &Path) -> bool {
    FileKind::of(path) == FileKind::Recording
}

/// Files of another kind left out of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The folder searched.
    pub dir: PathBuf,
    /// The kind left out.
    pub kind: FileKind,
    /// How many.
    pub count: usize,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let noun = if self.count == 1 { self.kind.plural().trim_end_matches('s') } else { self.kind.plural() };
        let why = match self.kind {
            FileKind::Recording => "files tagged `format: reloop.recording/...`",
            FileKind::Scenario => "files without a recording's `format:` tag",
        };
        write!(f, "{}: skipped {} {noun} ({why})", self.dir.display(), self.count)
    }
}

/// The YAML files (`*.yaml`, `*.yml`) of `kind` in `dir`, below it at any
/// depth when `recursive`, sorted; and what was skipped, when anything was.
pub fn files_below(dir: &Path, kind: FileKind, recursive: bool) -> Result<(Vec<PathBuf>, Option<Skipped>), InputError> {
    let mut found = Vec::new();
    yaml_files_below(dir, recursive, &mut found)?;
    found.sort();
    let total = found.len();
    found.retain(|path| FileKind::of(path) == kind);
    let other = match kind {
        FileKind::Scenario => FileKind::Recording,
        FileKind::Recording => FileKind::Scenario,
    };
    let count = total - found.len();
    let skipped = (count > 0).then(|| Skipped { dir: dir.to_owned(), kind: other, count });
    Ok((found, skipped))
}

fn yaml_files_below(dir: &Path, recursive: bool, found: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let entries = std::fs::read_dir(dir).map_err(|e| InputError::file(dir, format!("cannot list: {e}")))?;
    for path in entries.filter_map(|entry| entry.ok().map(|e| e.path())) {
        if path.is_dir() {
            if recursive {
                yaml_files_below(&path, recursive, found)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "yaml" || ext == "yml") {
            found.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, relative: &str, text: &str) {
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Issue 43: a recording written as JSON was taken for a scenario.
    #[test]
    fn a_recording_is_told_by_its_format_field_in_json_flow_or_block_style() {
        assert!(is_tagged("{\"format\":\"reloop.recording/v1\",\"exchanges\":[{\"text\":\"Hello.\"}]}\n"), "JSON on one line");
        assert!(
            is_tagged("{\n  \"exchanges\": [{\"text\": \"a {\\\"format\\\": 1}\"}],\n  \"format\": \"reloop.recording/v2\"\n}\n"),
            "JSON, format not first"
        );
        assert!(is_tagged("{ format: reloop.recording/v2, exchanges: [] }\n"), "flow");
        assert!(is_tagged("format: 'reloop.recording/v1'\nexchanges: []\n"), "block, quoted");
        assert!(is_tagged("model: m\nexchanges:\n  - text: hi\n    tool_calls: []\nformat: reloop.recording/v2\n"), "block, after a nested field");
    }

    #[test]
    fn comments_and_document_markers_before_the_first_field_are_read_as_yaml() {
        assert!(is_tagged("# Generated; edit the generator.\n\n---\nformat: reloop.recording/v1\n"));
        assert!(is_tagged("%YAML 1.2\n--- # the one document\n# a comment\n{\"format\": \"reloop.recording/v2\"}\n"));
        assert!(is_tagged("--- {format: reloop.recording/v1}\n...\n"));
        assert!(!is_tagged("# format: reloop.recording/v1\nname: s\ntask: t\n"), "a tag in a comment");
    }

    #[test]
    fn a_scenario_or_a_format_that_is_no_top_level_tag_is_not_a_recording() {
        assert!(!is_tagged("{\"name\": \"s\", \"task\": \"t\", \"recording\": \"reloop.recording/v1.yaml\"}\n"), "a scenario naming such a file");
        assert!(!is_tagged("model: m\ntask: t\n"));
        assert!(!is_tagged("task: |\n  format: reloop.recording/v1\nmodel: m\n"), "inside a block scalar");
        assert!(!is_tagged("agent:\n  format: reloop.recording/v1\n"), "a nested field");
        assert!(!is_tagged("format: reloop.recording/v9\n"), "an unknown tag");
        assert!(!is_tagged("- format: reloop.recording/v1\n"), "a sequence");
        assert!(!is_tagged("name: [unclosed\nformat: reloop.recording/v1\n"), "past a syntax error");
        assert!(!is_tagged(""));
    }

    #[test]
    fn the_format_tag_tells_recordings_from_scenarios_at_any_depth() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.yaml", "model: m\ntask: t\nrecording: rec/a.recording.yaml\n");
        write(dir.path(), "rec/a.recording.yaml", "# comment\n---\nformat: reloop.recording/v2\nexchanges: []\n");
        write(dir.path(), "rec/old.yml", "format: reloop.recording/v1\nexchanges: []\n");
        write(dir.path(), "rec/notes.txt", "format: reloop.recording/v2\n");
        let (scenarios, skipped) = files_below(dir.path(), FileKind::Scenario, true).unwrap();
        assert_eq!(scenarios, [dir.path().join("a.yaml")]);
        let skipped = skipped.unwrap();
        assert_eq!((skipped.kind, skipped.count), (FileKind::Recording, 2));
        assert!(skipped.to_string().ends_with(": skipped 2 recordings (files tagged `format: reloop.recording/...`)"), "{skipped}");
        let (recordings, skipped) = files_below(dir.path(), FileKind::Recording, false).unwrap();
        assert!(recordings.is_empty(), "a flat search does not go below");
        assert_eq!(skipped.unwrap().to_string(), format!("{}: skipped 1 scenario (files without a recording's `format:` tag)", dir.path().display()));
        assert_eq!(
            files_below(&dir.path().join("rec"), FileKind::Recording, false).unwrap(),
            (vec![dir.path().join("rec/a.recording.yaml"), dir.path().join("rec/old.yml")], None)
        );
    }
}
