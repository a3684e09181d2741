//! The files `reloop record` and `serve --capture` keep up to date while
//! traffic passes: per session, the v2 recording (`NAME.recording.yaml`,
//! rewritten atomically after every exchange, so an interrupted capture
//! still leaves a readable file) and the scenario skeleton `NAME.yaml`
//! (tools, system prompt and task from the first request).

use std::collections::BTreeMap;
use std::path::PathBuf;

use reloop_import::{recording_file_name, skeleton_of_request, skeleton_scenario, write_yaml};
use reloop_mock::Recording;
use reloop_mock::record::{Observed, Redaction, exchange_of, path_shown, session_of};

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
    /// A writer for `target`; `Err` names a redaction pattern that is not a regex.
    pub fn new(target: Target, redact: &RedactArgs) -> Result<Self, String> {
        let redaction = Redaction::new(&redact.redact_header, &redact.redact_body)?;
        Ok(Self { target, redaction, recordings: BTreeMap::new() })
    }

    /// Records one observed exchange (model calls answered with success;
    /// others pass unrecorded) and rewrites its session's files. Returns
    /// what to log.
    pub fn add(&mut self, observed: &Observed) -> anyhow::Result<Option<String>> {
        let exchange = match exchange_of(observed, &self.redaction) {
            Ok(Some(exchange)) => exchange,
            Ok(None) => return Ok(None),
            Err(error) => return Ok(Some(format!("{}: not recorded: {error}", path_shown(&observed.path)))),
        };
        let (dir, name) = match &self.target {
            Target::Prefix(prefix) => {
                let name = prefix.file_name().map_or_else(|| "recorded".into(), |n| n.to_string_lossy().into_owned());
                (prefix.parent().map(PathBuf::from).unwrap_or_default(), name)
            }
            Target::PerSession(dir) => (dir.clone(), session_of(&observed.path).unwrap_or(reloop_mock::DEFAULT_SESSION).replace(['/', '\\'], "_")),
        };
        let recording = self.recordings.entry(name.clone()).or_insert_with(|| Recording { redacted: self.redaction.describe(), ..Recording::default() });
        let raw_dropped = exchange.raw.is_none();
        recording.exchanges.push(exchange);
        if let Some(refused) = refuse_a_match(&self.redaction, recording, raw_dropped) {
            return Ok(Some(format!("{}: {refused}", path_shown(&observed.path))));
        }
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(&dir)?;
        }
        let recording_path = dir.join(recording_file_name(&name));
        reloop_eval::recording_file::write_recording(&recording_path, recording)?;
        let first = recording.exchanges[0].request.as_ref().map(|request| skeleton_of_request(&request.path, &request.body)).unwrap_or_default();
        let scenario = skeleton_scenario(&first, &name, &recording_file_name(&name), recording);
        write_yaml(&dir.join(format!("{name}.yaml")), &scenario)?;
        Ok(Some(format!("{}: exchange {} recorded to {}", path_shown(&observed.path), recording.exchanges.len(), recording_path.display())))
    }
}

/// The last line before the recording with its newest exchange is written:
/// notes in `redacted:` when that exchange lost its raw bytes (a secret
/// only its joined parts showed), and takes the exchange back out, saying
/// so, if a body pattern still matches anywhere in the text to be written.
fn refuse_a_match(redaction: &Redaction, recording: &mut Recording, raw_dropped: bool) -> Option<String> {
    let number = recording.exchanges.len();
    if raw_dropped {
        recording.redacted.push(Redaction::raw_dropped(number));
    }
    if !redaction.finds(&reloop_eval::recording_file::to_yaml(recording)) {
        return None;
    }
    recording.exchanges.pop();
    if raw_dropped {
        recording.redacted.pop();
    }
    Some("not recorded: a --redact-body pattern still matched the text to be written".into())
}
