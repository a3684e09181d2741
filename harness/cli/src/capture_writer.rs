//! The files `reloop record` and `serve --capture` keep up to date while
//! traffic passes: per session, the v2 recording (`NAME.recording.yaml`,
//! rewritten atomically after every exchange, so an interrupted capture
//! still leaves a readable file) and the scenario skeleton `NAME.yaml`
//! (tools, system prompt and task from the first request).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use reloop_import::{recording_file_name, skeleton_of_request, skeleton_scenario, write_yaml};
use reloop_mock::Recording;
use reloop_mock::json_log::file_stem_of;
use reloop_mock::record::{Observed, Redaction, exchange_of, session_of};

use crate::app::RedactArgs;

/// Where the files of a session go.
#[derive(Debug, Clone)]
pub enum Target {
    /// `reloop record --out PREFIX`: every exchange into `PREFIX.recording.yaml`.
    Prefix(PathBuf),
    /// `serve --capture DIR`: one pair of files per session, named after it.
    PerSession(PathBuf),
}

/// The recordings captured so far, by file name.
#[derive(Debug)]
pub struct CaptureWriter {
    target: Target,
    redaction: Redaction,
    recordings: BTreeMap<String, Recording>,
}

impl CaptureWriter {
    /// A writer for `target`; `Err` names a redaction pattern that is not a
    /// regex, or, unless `force`, a file of an earlier capture it would
    /// overwrite (it starts empty, so its first write would replace it).
    pub fn new(target: Target, redact: &RedactArgs, force: bool) -> Result<Self, String> {
        let redaction = Redaction::new(&redact.redact_header, &redact.redact_body)?;
        if let Some(existing) = existing_file(&target).filter(|_| !force) {
            return Err(format!("{}: exists already (an earlier capture?); give --force to overwrite it", existing.display()));
        }
        Ok(Self { target, redaction, recordings: BTreeMap::new() })
    }

    /// Records one observed exchange (model calls answered with success;
    /// others pass unrecorded) and rewrites its session's files. Returns
    /// what to log.
    pub fn add(&mut self, observed: &Observed) -> anyhow::Result<Option<String>> {
        let exchange = match exchange_of(observed, &self.redaction) {
            Ok(Some(exchange)) => exchange,
            Ok(None) => return Ok(None),
            Err(error) => return Ok(Some(format!("{}: not recorded: {error}", observed.path))),
        };
        let (dir, name) = match &self.target {
            Target::Prefix(prefix) => split_prefix(prefix),
            Target::PerSession(dir) => (dir.clone(), file_stem_of(session_of(&observed.path).unwrap_or(reloop_mock::DEFAULT_SESSION))),
        };
        let recording = self.recordings.entry(name.clone()).or_insert_with(|| Recording { redacted: self.redaction.describe(), ..Recording::default() });
        recording.exchanges.push(exchange);
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(&dir)?;
        }
        let recording_path = dir.join(recording_file_name(&name));
        reloop_eval::recording_file::write_recording(&recording_path, recording)?;
        let first = recording.exchanges[0].request.as_ref().map(|request| skeleton_of_request(&request.path, &request.body)).unwrap_or_default();
        let scenario = skeleton_scenario(&first, &name, &recording_file_name(&name), recording);
        write_yaml(&dir.join(format!("{name}.yaml")), &scenario)?;
        Ok(Some(format!("{}: exchange {} recorded to {}", observed.path, recording.exchanges.len(), recording_path.display())))
    }
}

/// A file `target` would write that is there already: for a prefix, its
/// recording or skeleton; for a capture folder, any YAML file in it (session
/// names are known only as traffic comes).
fn existing_file(target: &Target) -> Option<PathBuf> {
    match target {
        Target::Prefix(prefix) => {
            let (dir, name) = split_prefix(prefix);
            [dir.join(recording_file_name(&name)), dir.join(format!("{name}.yaml"))].into_iter().find(|file| file.exists())
        }
        Target::PerSession(dir) => {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.filter_map(|entry| entry.ok().map(|e| e.path())).filter(|file| file.extension().is_some_and(|ext| ext == "yaml")).collect();
            files.sort();
            files.into_iter().next()
        }
    }
}

/// `--out PREFIX` as the folder and the name its files start with.
fn split_prefix(prefix: &Path) -> (PathBuf, String) {
    let name = prefix.file_name().map_or_else(|| "recorded".into(), |n| n.to_string_lossy().into_owned());
    (prefix.parent().map(PathBuf::from).unwrap_or_default(), name)
}
