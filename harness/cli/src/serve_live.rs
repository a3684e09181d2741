//! `reloop serve --upstream URL --rerecord-dir DIR`: a served session goes
//! live as `run --upstream` does (`--record-mode new`: from its first
//! divergence; `all`: every call), and its re-recording (the exchanges it
//! replayed, then the live ones) is written to `DIR/NAME.recording.yaml`
//! after each live call, before the client has the answer. Written then
//! rather than at the stop, because an idle session is released by the
//! registry and would take its live exchanges with it, a server killed at
//! any time has then lost no live call it answered, and a client that has
//! its answer finds the file (the pytest plugin's `new_episodes` copies it
//! when the test ends).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use reloop_mock::live::{Trigger, Upstream};
use reloop_mock::{Session, WentLive};
use reloop_recording::capture::Redaction;
use reloop_recording::session_path::file_stem_of;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::app::{RecordModeArg, ServeArgs};

/// Writes the re-recordings of a serve's sessions that went live.
pub struct RerecordWriter {
    /// `--rerecord-dir`, created.
    dir: PathBuf,
    /// What the upstream's answers were stripped of, which no written file may hold.
    redaction: Redaction,
}

/// The live settings of `args`: the upstream for the registry and the
/// writer of what goes live; `None` without `--upstream`; `Err` names what
/// is wrong before anything is sent upstream.
pub fn live_of(args: &ServeArgs, interrupted: Arc<AtomicBool>) -> Result<Option<(Upstream, RerecordWriter)>, String> {
    let (Some(url), Some(dir)) = (&args.upstream, &args.rerecord_dir) else { return Ok(None) };
    if args.record_mode == RecordModeArg::Once {
        return Err("--upstream with --record-mode once: nothing would go live; give --record-mode new (the default) or all".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create the --rerecord-dir folder: {e}", dir.display()))?;
    let redaction = Redaction::new(&args.redact.redact_header, &args.redact.redact_body)?;
    let trigger = Trigger { mode: args.record_mode.mode(), fork_at: None };
    let upstream = Upstream::new(url, args.upstream_model.clone(), trigger, redaction)?.interrupted_by(interrupted);
    let writer = RerecordWriter { dir: dir.clone(), redaction: upstream.redaction().clone() };
    Ok(Some((upstream, writer)))
}

impl RerecordWriter {
    /// The file session `name` is written to: its name made safe as the
    /// JSON log makes it (`t/r/1` is `t%2Fr%2F1.recording.yaml`).
    pub fn file_of(&self, name: &str) -> PathBuf {
        self.dir.join(reloop_import::recording_file_name(&file_stem_of(name)))
    }

    /// Writes each session the registry names, as it names them, until the
    /// registry is gone; a write that fails is said on stderr and the
    /// serve goes on (the session's next live call tries again).
    pub async fn run(self, mut went_live: UnboundedReceiver<WentLive>) {
        while let Some(WentLive { name, session, done }) = went_live.recv().await {
            let path = self.file_of(&name);
            let redaction = self.redaction.clone();
            let written = tokio::task::spawn_blocking(move || write_session(&path, &session, &redaction).map_err(|e| format!("{}: {e}", path.display())))
                .await
                .unwrap_or_else(|e| Err(e.to_string()));
            if let Err(error) = written {
                eprintln!("error: session `{name}`'s re-recording not written: {error}");
            }
            // The live answer waited for this; a client gone is no matter.
            let _ = done.send(());
        }
    }
}

/// Writes `session`'s re-recording to `path`, atomically, unless a
/// redaction pattern still matches it.
fn write_session(path: &Path, session: &Session, redaction: &Redaction) -> Result<(), String> {
    let recording = session.rerecorded(&redaction.describe());
    if redaction.finds(&reloop_files::recording_file::to_yaml(&recording)) {
        return Err("a --redact-body pattern still matches; nothing written".into());
    }
    reloop_files::recording_file::write_recording(path, &recording).map_err(|e| e.to_string())
}
