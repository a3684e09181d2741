//! The workspace side of a session: what a black-box agent's workspace
//! held at the start and after each turn. The shell's side (`tool_side:`)
//! says what the agent's commands answered; this says what they (and the
//! agent's own file tools) left behind, so a replay can start from the
//! same files and tell at which turn, and in which file, its workspace
//! went another way (`docs/recording-format.md`, `docs/black-box.md`).
//!
//! Content-addressed: each snapshot maps paths to the SHA-256 of their
//! bytes, and each content is stored once in `blobs`, however many
//! snapshots and paths hold it; a snapshot's `tree` is the hash of its
//! listing, so two snapshots with the same tree hold the same files.

use std::collections::BTreeMap;

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The workspace snapshots of a recording and the contents they name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceRecord {
    /// Files larger than this many bytes were listed in `skipped`, not
    /// stored.
    pub max_file_bytes: u64,
    /// The snapshots in the order they were taken: the first at the start,
    /// before the agent ran; then one after each turn.
    pub snapshots: Vec<Snapshot>,
    /// Each content once, by its SHA-256 (hex).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub blobs: BTreeMap<String, Blob>,
}

/// The workspace at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// The exchange (0-based) served last before it was taken: the turn it
    /// ends. Absent on the first snapshot, taken before any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_exchange: Option<usize>,
    /// The SHA-256 (hex) of the listing ([`tree_hash`]).
    pub tree: String,
    /// Each regular file by its path relative to the workspace (`/`
    /// between folders; `.git` folders left out) and its content's hash.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Files over `max_file_bytes`, by path, with their size: listed, not stored.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, u64>,
    /// More files than a snapshot holds: the ones after the limit (in path
    /// order) are not listed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// A file's content: text as it is, other bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Blob {
    /// UTF-8 text.
    Text(String),
    /// Bytes that are not UTF-8.
    Bytes {
        /// The bytes, in standard base64.
        base64: String,
    },
}

impl Blob {
    /// The blob holding `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::Text(text.to_owned()),
            Err(_) => Self::Bytes { base64: base64::engine::general_purpose::STANDARD.encode(bytes) },
        }
    }

    /// Its bytes; `Err` for base64 that does not decode.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Self::Text(text) => Ok(text.clone().into_bytes()),
            Self::Bytes { base64 } => base64::engine::general_purpose::STANDARD.decode(base64).map_err(|e| format!("base64 that does not decode: {e}")),
        }
    }
}

/// The content address of `bytes`: their SHA-256, in lowercase hex.
pub fn content_hash(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The tree hash of a listing: the SHA-256 of one line per path in path
/// order, `HASH PATH` for a stored file and `skipped SIZE PATH` for one
/// over the limit, then `truncated` when the listing was cut.
pub fn tree_hash(files: &BTreeMap<String, String>, skipped: &BTreeMap<String, u64>, truncated: bool) -> String {
    let mut lines: Vec<(&str, String)> = files.iter().map(|(path, hash)| (path.as_str(), format!("{hash} {path}\n"))).collect();
    lines.extend(skipped.iter().map(|(path, size)| (path.as_str(), format!("skipped {size} {path}\n"))));
    lines.sort();
    let mut listing: String = lines.into_iter().map(|(_, line)| line).collect();
    if truncated {
        listing.push_str("truncated\n");
    }
    content_hash(listing.as_bytes())
}

impl Snapshot {
    /// The snapshot of a listing, its tree hash computed.
    pub fn new(after_exchange: Option<usize>, files: BTreeMap<String, String>, skipped: BTreeMap<String, u64>, truncated: bool) -> Self {
        Self { after_exchange, tree: tree_hash(&files, &skipped, truncated), files, skipped, truncated }
    }

    /// The first path (in path order) at which `self` and `other` differ:
    /// a file one holds and the other lacks, another content, or another
    /// size of a skipped file. `None`: the same files.
    pub fn first_difference(&self, other: &Self) -> Option<String> {
        if self.tree == other.tree {
            return None;
        }
        let entry =
            |snapshot: &Self, path: &str| snapshot.files.get(path).cloned().or_else(|| snapshot.skipped.get(path).map(|size| format!("skipped {size}")));
        let paths: std::collections::BTreeSet<&String> = [self, other].iter().flat_map(|s| s.files.keys().chain(s.skipped.keys())).collect();
        paths.into_iter().find(|path| entry(self, path) != entry(other, path)).cloned()
    }
}

impl WorkspaceRecord {
    /// Checks what a hand-written or edited record could get wrong: a
    /// path that leaves the workspace, a hash with no blob, a blob whose
    /// content is not its hash.
    ///
    /// # Errors
    ///
    /// The first such field (`workspace.snapshots[N].files.PATH`,
    /// `workspace.blobs.HASH`) and what is wrong with it.
    pub fn check(&self) -> Result<(), (String, String)> {
        for (n, snapshot) in self.snapshots.iter().enumerate() {
            for (path, hash) in &snapshot.files {
                let field = || format!("workspace.snapshots[{n}].files.{path}");
                if !is_relative_inside(path) {
                    return Err((field(), "a path must be relative to the workspace and stay inside it".into()));
                }
                if !self.blobs.contains_key(hash) {
                    return Err((field(), format!("names content {hash}, which workspace.blobs lacks")));
                }
            }
        }
        for (hash, blob) in &self.blobs {
            let field = || format!("workspace.blobs.{hash}");
            let bytes = blob.bytes().map_err(|e| (field(), e))?;
            if content_hash(&bytes) != *hash {
                return Err((field(), format!("its content's SHA-256 is {}, not its key", content_hash(&bytes))));
            }
        }
        Ok(())
    }

    /// The record with each blob's text passed through `redact`: a changed
    /// content gets its own hash, and the snapshots naming it (their trees
    /// too) follow.
    #[must_use]
    pub fn redacted(self, redact: impl Fn(&str) -> String) -> Self {
        let mut renamed = BTreeMap::new();
        let mut blobs = BTreeMap::new();
        for (hash, blob) in self.blobs {
            let blob = match blob {
                Blob::Text(text) => Blob::Text(redact(&text)),
                bytes @ Blob::Bytes { .. } => bytes,
            };
            let new = blob.bytes().map_or_else(|_| hash.clone(), |bytes| content_hash(&bytes));
            renamed.insert(hash, new.clone());
            blobs.insert(new, blob);
        }
        let snapshots = self
            .snapshots
            .into_iter()
            .map(|snapshot| {
                let files = snapshot.files.into_iter().map(|(path, hash)| (path, renamed.get(&hash).cloned().unwrap_or(hash))).collect();
                Snapshot::new(snapshot.after_exchange, files, snapshot.skipped, snapshot.truncated)
            })
            .collect();
        Self { snapshots, blobs, ..self }
    }
}

/// Whether `path` is relative and has no `..`, `.` or empty part.
fn is_relative_inside(path: &str) -> bool {
    !path.is_empty() && !path.starts_with('/') && path.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(files: &[(&str, &str)]) -> WorkspaceRecord {
        let blobs: BTreeMap<String, Blob> = files.iter().map(|(_, text)| (content_hash(text.as_bytes()), Blob::of(text.as_bytes()))).collect();
        let listing = files.iter().map(|(path, text)| ((*path).to_owned(), content_hash(text.as_bytes()))).collect();
        WorkspaceRecord { max_file_bytes: 1024, snapshots: vec![Snapshot::new(None, listing, BTreeMap::new(), false)], blobs }
    }

    #[test]
    fn a_content_hash_is_the_sha256_everyone_computes() {
        assert_eq!(content_hash(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(content_hash(b"hello\n"), "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
    }

    #[test]
    fn the_first_difference_is_the_first_path_that_differs_in_either() {
        let a = &record(&[("a.txt", "1"), ("src/b.rs", "2"), ("z", "3")]).snapshots[0];
        let changed = &record(&[("a.txt", "1"), ("src/b.rs", "2 changed"), ("z", "4")]).snapshots[0];
        let added = &record(&[("a.txt", "1"), ("b.txt", "new"), ("src/b.rs", "2"), ("z", "3")]).snapshots[0];
        assert_eq!(a.first_difference(a), None);
        assert_eq!(a.first_difference(changed).as_deref(), Some("src/b.rs"));
        assert_eq!(a.first_difference(added).as_deref(), Some("b.txt"), "a file only the other holds");
        assert_eq!(added.first_difference(a).as_deref(), Some("b.txt"), "a file only this one holds");
        let big = Snapshot::new(None, BTreeMap::new(), [("a.txt".to_owned(), 5000)].into(), false);
        assert_eq!(a.first_difference(&big).as_deref(), Some("a.txt"), "skipped is not stored");
    }

    #[test]
    fn text_is_kept_as_text_and_other_bytes_in_base64() {
        assert_eq!(Blob::of(b"plain\n"), Blob::Text("plain\n".into()));
        let bytes = Blob::of(&[0xff, 0x00, 0x80]);
        assert_eq!(bytes, Blob::Bytes { base64: "/wCA".into() });
        assert_eq!(bytes.bytes().unwrap(), [0xff, 0x00, 0x80]);
        let yaml: Vec<Blob> = serde_json::from_str(r#"["text", {"base64": "/wCA"}]"#).unwrap();
        assert_eq!(yaml, [Blob::Text("text".into()), bytes]);
    }

    #[test]
    fn a_path_out_of_the_workspace_a_missing_blob_and_a_wrong_key_are_refused_by_field() {
        assert_eq!(record(&[("ok/file", "x")]).check(), Ok(()));
        let (field, message) = record(&[("../etc/passwd", "x")]).check().unwrap_err();
        assert_eq!(field, "workspace.snapshots[0].files.../etc/passwd");
        assert!(message.starts_with("a path must be relative"), "{message}");
        let mut missing = record(&[("a", "x")]);
        missing.blobs.clear();
        assert!(missing.check().unwrap_err().1.contains("which workspace.blobs lacks"));
        let mut wrong = record(&[("a", "x")]);
        wrong.blobs.values_mut().for_each(|blob| *blob = Blob::Text("y".into()));
        let (field, message) = wrong.check().unwrap_err();
        assert!(field.starts_with("workspace.blobs.") && message.contains("not its key"), "{field}: {message}");
    }

    #[test]
    fn redacting_a_blob_renames_it_and_the_trees_that_name_it() {
        let record = record(&[("env", "KEY=sk-1"), ("other", "plain")]);
        let before = record.snapshots[0].tree.clone();
        let redacted = record.redacted(|text| text.replace("sk-1", "[REDACTED]"));
        assert_eq!(redacted.check(), Ok(()));
        assert!(redacted.blobs.values().any(|blob| *blob == Blob::Text("KEY=[REDACTED]".into())));
        assert!(!redacted.blobs.values().any(|blob| *blob == Blob::Text("KEY=sk-1".into())));
        assert_ne!(redacted.snapshots[0].tree, before);
    }
}
