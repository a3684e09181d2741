//! A black-box agent's workspace, snapshotted at the start and after each
//! turn (issue 42): under `agent.tools: record` (and `--record-mode all`)
//! the snapshots go into the re-recording's `workspace:`; under a replay
//! whose recording has them, the workspace starts from the first, and each
//! one taken is compared with the recorded one ending the same turn.
//!
//! A turn ends when the agent sends its next model request (the mock calls
//! [`Snapshots::take`] before answering it) or exits: the agent is waiting,
//! so what it did for the last answer is done. Bounded: files over
//! [`MAX_FILE_BYTES`] are listed with their size, not stored; past
//! [`MAX_FILES`] the listing is cut (`truncated`); `.git` folders,
//! symbolic links and other non-regular files are left out.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use reloop_recording::workspace::{Blob, Snapshot, WorkspaceRecord, content_hash};

use crate::result::{EventRow, StepRow};

/// The largest file a snapshot stores (1 MiB); a larger one is listed in `skipped`.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The most files a snapshot lists.
pub const MAX_FILES: usize = 10_000;

/// The event naming a turn whose workspace differs from the recording's.
pub const EVENT_KIND: &str = "workspace_diverged";

/// The snapshots of one run, taken as it goes, shared with the mock's
/// request hook.
#[derive(Debug, Clone)]
pub struct Snapshots {
    workspace: std::path::PathBuf,
    max_file_bytes: u64,
    taken: Arc<Mutex<WorkspaceRecord>>,
}

impl Snapshots {
    /// Snapshots of `workspace`, storing files up to `max_file_bytes`.
    pub fn new(workspace: &Path, max_file_bytes: u64) -> Self {
        let record = WorkspaceRecord { max_file_bytes, ..WorkspaceRecord::default() };
        Self { workspace: workspace.to_owned(), max_file_bytes, taken: Arc::new(Mutex::new(record)) }
    }

    /// Snapshots the workspace as the end of the turn answered by
    /// `after_exchange` (`None`: the start, before the agent runs). A second snapshot of the same
    /// turn (a retried request, a tool-less side request) replaces the
    /// first: the later state is the turn's end.
    pub fn take(&self, after_exchange: Option<usize>) {
        let (snapshot, blobs) = snapshot(&self.workspace, after_exchange, self.max_file_bytes);
        let Ok(mut taken) = self.taken.lock() else { return };
        taken.blobs.extend(blobs);
        if let Some(last) = taken.snapshots.last_mut().filter(|last| last.after_exchange == after_exchange) {
            *last = snapshot;
        } else {
            taken.snapshots.push(snapshot);
        }
    }

    /// Has `session` take a snapshot as each request arrives that ends a
    /// turn (one before the first answer ends none).
    pub fn watch(&self, session: &reloop_mock::Session) {
        let snapshots = self.clone();
        session.on_request(move |served| {
            if served.is_some() {
                snapshots.take(served);
            }
        });
    }

    /// What was taken, numbered as `session`'s re-recording numbers its
    /// exchanges (a turn whose exchange it leaves out is dropped).
    pub fn rerecorded(&self, session: &reloop_mock::Session) -> WorkspaceRecord {
        let mut record = self.record();
        record.snapshots.retain_mut(|snapshot| match snapshot.after_exchange {
            None => true,
            Some(exchange) => session.rerecorded_index(exchange).map(|index| snapshot.after_exchange = Some(index)).is_some(),
        });
        record
    }

    /// What was taken, only the blobs the snapshots still name kept.
    pub fn record(&self) -> WorkspaceRecord {
        let mut record = self.taken.lock().map(|taken| taken.clone()).unwrap_or_default();
        let named: std::collections::BTreeSet<String> = record.snapshots.iter().flat_map(|s| s.files.values().cloned()).collect();
        record.blobs.retain(|hash, _| named.contains(hash));
        record
    }
}

/// The snapshot of `workspace` now, and the blobs it names.
fn snapshot(workspace: &Path, after_exchange: Option<usize>, max_file_bytes: u64) -> (Snapshot, BTreeMap<String, Blob>) {
    let mut found = Vec::new();
    walk(workspace, "", &mut found);
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let truncated = found.len() > MAX_FILES;
    found.truncate(MAX_FILES);
    let (mut files, mut skipped, mut blobs) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for (path, size) in found {
        if size > max_file_bytes {
            skipped.insert(path, size);
            continue;
        }
        // A file gone or unreadable since the walk is left out, as if it never was.
        let Ok(bytes) = std::fs::read(workspace.join(&path)) else { continue };
        let hash = content_hash(&bytes);
        blobs.entry(hash.clone()).or_insert_with(|| Blob::of(&bytes));
        files.insert(path, hash);
    }
    (Snapshot::new(after_exchange, files, skipped, truncated), blobs)
}

/// Every regular file below `dir` as `(path relative to the workspace, size)`,
/// `.git` folders and links left out. Stops looking once past [`MAX_FILES`].
fn walk(dir: &Path, prefix: &str, found: &mut Vec<(String, u64)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if found.len() > MAX_FILES {
            return;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() && name != ".git" {
            walk(&entry.path(), &path, found);
        } else if kind.is_file() {
            found.push((path, entry.metadata().map_or(0, |meta| meta.len())));
        }
    }
}

/// Writes the recorded first snapshot's files into `workspace`, before
/// `agent.files` (which are written over them).
///
/// # Errors
///
/// A file cannot be written, naming it.
pub fn restore(workspace: &Path, record: &WorkspaceRecord) -> Result<(), String> {
    let Some(first) = record.snapshots.first() else { return Ok(()) };
    for (path, hash) in &first.files {
        // Both checked when the recording was read ([`WorkspaceRecord::check`]).
        let Some(bytes) = record.blobs.get(hash).and_then(|blob| blob.bytes().ok()) else { continue };
        let file = workspace.join(path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        }
        std::fs::write(&file, bytes).map_err(|e| format!("cannot write the recorded workspace's {path}: {e}"))?;
    }
    Ok(())
}

/// Where a replay's workspace went another way than the recording's: a
/// turn (`None`: the start) and the first file that differs there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The exchange served last before the snapshot.
    pub after_exchange: Option<usize>,
    /// The first path (in path order) that differs.
    pub path: String,
    /// Its content's hash in the recording (`None`: absent or not stored).
    pub recorded: Option<String>,
    /// Its content's hash in the replay.
    pub replayed: Option<String>,
}

/// Each snapshot `taken` compared with the recorded one ending the same
/// turn (a turn the recording has no snapshot of is not compared).
pub fn divergences(taken: &WorkspaceRecord, recorded: &WorkspaceRecord) -> Vec<Divergence> {
    let recorded_of = |after: Option<usize>| recorded.snapshots.iter().rev().find(|s| s.after_exchange == after);
    taken
        .snapshots
        .iter()
        .filter_map(|snapshot| {
            let theirs = recorded_of(snapshot.after_exchange)?;
            let path = theirs.first_difference(snapshot)?;
            Some(Divergence {
                after_exchange: snapshot.after_exchange,
                recorded: theirs.files.get(&path).cloned(),
                replayed: snapshot.files.get(&path).cloned(),
                path,
            })
        })
        .collect()
}

/// The report's event for one diverged turn, at the step whose answer it followed.
pub fn event(divergence: &Divergence, steps: &[StepRow], at_ms: u64) -> EventRow {
    let payload = serde_json::json!({
        "after_exchange": divergence.after_exchange,
        "path": divergence.path,
        "recorded": divergence.recorded,
        "replayed": divergence.replayed,
    });
    let step = super::tool_side::step_of(divergence.after_exchange, steps);
    EventRow { seq: 0, step, at_ms, kind: EVENT_KIND.to_owned(), payload: payload.to_string(), ..EventRow::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_stores_each_content_once_and_leaves_out_git_links_and_big_files() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, bytes: &[u8]| {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, bytes).unwrap();
        };
        write("a.txt", b"same\n");
        write("src/b.txt", b"same\n");
        write(".git/HEAD", b"ref: refs/heads/main\n");
        write("big.bin", &[0u8; 2048]);
        std::os::unix::fs::symlink("a.txt", dir.path().join("link")).unwrap();
        let (snapshot, blobs) = snapshot(dir.path(), Some(3), 1024);
        assert_eq!(snapshot.files.keys().collect::<Vec<_>>(), ["a.txt", "src/b.txt"]);
        assert_eq!(blobs.len(), 1, "one content, stored once");
        assert_eq!(snapshot.skipped, [("big.bin".to_owned(), 2048)].into());
        assert_eq!((snapshot.after_exchange, snapshot.truncated), (Some(3), false));
    }

    #[test]
    fn a_turn_snapshotted_twice_keeps_its_later_state_and_restore_writes_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let snapshots = Snapshots::new(dir.path(), MAX_FILE_BYTES);
        std::fs::write(dir.path().join("f"), "start").unwrap();
        snapshots.take(None);
        snapshots.take(None);
        std::fs::write(dir.path().join("f"), "early").unwrap();
        snapshots.take(Some(0));
        std::fs::write(dir.path().join("f"), "late").unwrap();
        snapshots.take(Some(0));
        let record = snapshots.record();
        assert_eq!(record.snapshots.iter().map(|s| s.after_exchange).collect::<Vec<_>>(), [None, Some(0)]);
        assert_eq!(record.blobs.len(), 2, "`early` is named by no snapshot: {record:?}");
        assert_eq!(record.check(), Ok(()));

        let replay = tempfile::tempdir().unwrap();
        restore(replay.path(), &record).unwrap();
        assert_eq!(std::fs::read_to_string(replay.path().join("f")).unwrap(), "start");
        let again = Snapshots::new(replay.path(), MAX_FILE_BYTES);
        again.take(None);
        std::fs::write(replay.path().join("f"), "other").unwrap();
        again.take(Some(0));
        let found = divergences(&again.record(), &record);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].after_exchange, found[0].path.as_str()), (Some(0), "f"));
        assert_eq!(found[0].recorded, Some(content_hash(b"late")));
    }
}
