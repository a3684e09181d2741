//! Which of reloop's files a YAML file is, told by its `format:` tag: a
//! recording starts with `format: reloop.recording/v1` or `/v2`, or, written
//! as JSON (which is YAML), has the key `"format"` with that tag among its
//! first fields; any other YAML file is taken for a scenario (which has no
//! `format` field). So a folder may hold both (an
//! import's output, a suite with its recordings below it): `run` and
//! `sweep` take its scenarios, `serve --recording` its recordings, and each
//! says in one line how many of the other kind it skipped.

use std::fmt;
use std::path::{Path, PathBuf};

use reloop_recording::{FORMAT_V1, FORMAT_V2};

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
    /// The kind of `path`: a recording when its first field is a recording
    /// format tag (read from the file's first 4 KiB), else a scenario.
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

/// Whether a file's head says it is a recording: a first line `format:
/// <tag>`, or a JSON (or flow) mapping whose `format` key holds the tag.
fn is_tagged(head: &str) -> bool {
    let tagged = |text: &str| [FORMAT_V1, FORMAT_V2].iter().any(|tag| text.contains(tag));
    let Some(first) = head.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with('#') && *line != "---") else { return false };
    if first.starts_with("format:") {
        return tagged(first);
    }
    if !first.starts_with('{') {
        return false;
    }
    // `{"format": "reloop.recording/v1", …}` or `{format: reloop.recording/v2, …}`, on any line of the head.
    let compact: String = head.chars().filter(|c| !c.is_whitespace()).collect();
    [FORMAT_V1, FORMAT_V2].iter().any(|tag| compact.contains(&format!("\"format\":\"{tag}\"")) || compact.contains(&format!("format:{tag}")))
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
    fn a_recording_written_as_json_or_a_flow_mapping_is_a_recording() {
        assert!(is_tagged("{\"format\":\"reloop.recording/v1\",\"exchanges\":[{\"text\":\"Hello.\"}]}\n"));
        assert!(is_tagged("{\n  \"exchanges\": [],\n  \"format\": \"reloop.recording/v2\"\n}\n"));
        assert!(is_tagged("{ format: reloop.recording/v2, exchanges: [] }\n"));
        assert!(!is_tagged("{\"name\": \"s\", \"task\": \"t\", \"recording\": \"reloop.recording/v1.yaml\"}\n"), "a scenario naming such a file");
        assert!(!is_tagged("model: m\ntask: t\n"));
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
