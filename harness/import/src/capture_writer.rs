//! The files `reloop record` and `serve --capture` keep up to date while
//! traffic passes: per session, the v2 recording (`NAME.recording.yaml`,
//! rewritten atomically by a thread of its own as exchanges complete, so an
//! interrupted capture still leaves a readable file) and the scenario skeleton `NAME.yaml`
//! (tools, system prompt and task from the first request).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use reloop_files::recording_file::{to_yaml, write_recording};
use reloop_recording::Recording;
use reloop_recording::capture::{Observed, Redaction, exchange_of, path_shown};
use reloop_recording::session_path::{file_stem_of, session_named};

use crate::{ImportError, recording_file_name, skeleton_of_request, skeleton_scenario, write_yaml};

/// Where the files of a session go.
#[derive(Debug, Clone)]
pub enum Target {
    /// `reloop record --out PREFIX`: every exchange into `PREFIX.recording.yaml`.
    Prefix(PathBuf),
    /// `serve --capture DIR`: one pair of files per session, named after it.
    PerSession(PathBuf),
}

/// Takes observed exchanges from the proxy and has a thread of its own
/// write them, so no redaction, serialization or fsync runs on the proxy's
/// runtime while streams pass. The thread takes everything queued at once
/// and rewrites each session touched once (the newest state wins), so a
/// burst costs one write per session, and each file stays a valid recording
/// of every exchange complete when it was written.
#[derive(Debug)]
pub struct CaptureWriter {
    queue: std::sync::mpsc::Sender<Observed>,
    thread: std::thread::JoinHandle<Result<(), ImportError>>,
}

impl CaptureWriter {
    /// A writer for `target`; `Err` names a redaction pattern that is not a
    /// regex, or, unless `force`, a file of an earlier capture it would
    /// overwrite (it starts empty, so its first write would replace it).
    pub fn new(target: Target, redaction: Redaction, force: bool) -> Result<Self, String> {
        if let Some(existing) = existing_file(&target).filter(|_| !force) {
            return Err(format!("{}: exists already (an earlier capture?); give --force to overwrite it", existing.display()));
        }
        let files = SessionFiles { target, redaction, recordings: BTreeMap::new() };
        let (queue, observed) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("capture-writer".into())
            .spawn(move || files.write_as_they_come(&observed))
            .map_err(|e| format!("cannot start the capture writer: {e}"))?;
        Ok(Self { queue, thread })
    }

    /// Queues one observed exchange (model calls answered with success are
    /// recorded, others pass) and returns at once.
    pub fn add(&self, observed: Observed) {
        // The thread ends only when the queue does, or on a panic that
        // `finish` reports.
        let _ = self.queue.send(observed);
    }

    /// Waits until everything queued is written; `Err` is the first write
    /// that failed (each is also logged as it fails).
    pub fn finish(self) -> Result<(), ImportError> {
        drop(self.queue);
        self.thread.join().map_err(|_| ImportError::Io { path: PathBuf::new(), source: std::io::Error::other("the capture writer panicked") })?
    }
}

/// The recordings captured so far, by file name, and where they go: the
/// writer thread's own state.
struct SessionFiles {
    target: Target,
    redaction: Redaction,
    recordings: BTreeMap<String, Recording>,
}

impl SessionFiles {
    /// Records what arrives until the queue closes, a batch at a time.
    fn write_as_they_come(mut self, observed: &std::sync::mpsc::Receiver<Observed>) -> Result<(), ImportError> {
        let mut first_error = None;
        while let Ok(first) = observed.recv() {
            let mut recorded = Vec::new();
            for exchange in std::iter::once(first).chain(observed.try_iter()) {
                match self.add(&exchange) {
                    Ok(name) => {
                        let number = self.recordings[&name].exchanges.len();
                        recorded.push((exchange.path, name, number));
                    }
                    Err(Some(line)) => eprintln!("{line}"),
                    Err(None) => {}
                }
            }
            let touched: BTreeSet<&String> = recorded.iter().map(|(_, name, _)| name).collect();
            let mut written = BTreeMap::new();
            for name in touched {
                match self.write(name) {
                    Ok(path) => {
                        written.insert(name.clone(), path);
                    }
                    Err(error) => {
                        eprintln!("error: {error}");
                        first_error.get_or_insert(error);
                    }
                }
            }
            for (path, name, number) in &recorded {
                if let Some(file) = written.get(name) {
                    eprintln!("{}: exchange {number} recorded to {}", path_shown(path), file.display());
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Adds one observed exchange to its session's recording; returns the
    /// session's file name, or what to log instead (`None`: nothing, a
    /// request that is not a model call answered with success).
    fn add(&mut self, observed: &Observed) -> Result<String, Option<String>> {
        let exchange = match exchange_of(observed, &self.redaction) {
            Ok(Some(exchange)) => exchange,
            Ok(None) => return Err(None),
            Err(error) => return Err(Some(format!("{}: not recorded: {error}", path_shown(&observed.path)))),
        };
        let name = match &self.target {
            Target::Prefix(prefix) => split_prefix(prefix).1,
            // The name as the server decoded it, encoded once for the file.
            Target::PerSession(_) => file_stem_of(&session_named(&observed.path)),
        };
        let recording = self.recordings.entry(name.clone()).or_insert_with(|| Recording { redacted: self.redaction.describe(), ..Recording::default() });
        let raw_dropped = exchange.raw.is_none();
        recording.exchanges.push(exchange);
        if let Some(refused) = refuse_a_match(&self.redaction, recording, raw_dropped) {
            return Err(Some(format!("{}: {refused}", path_shown(&observed.path))));
        }
        Ok(name)
    }

    /// Rewrites the skeleton and recording of session file `name`; returns
    /// the recording's path. The skeleton goes first: whoever sees the
    /// recording's newest exchange (a test polling it, a user who stops the
    /// proxy then) finds the skeleton of that state beside it, not of the
    /// one before (whose tool fixtures lack the newest results).
    fn write(&self, name: &str) -> Result<PathBuf, ImportError> {
        let dir = match &self.target {
            Target::Prefix(prefix) => split_prefix(prefix).0,
            Target::PerSession(dir) => dir.clone(),
        };
        let recording = &self.recordings[name];
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(&dir).map_err(|source| ImportError::Io { path: dir.clone(), source })?;
        }
        let first = recording.exchanges[0].request.as_ref().map(|request| skeleton_of_request(&request.path, &request.body)).unwrap_or_default();
        let scenario = skeleton_scenario(&first, name, &recording_file_name(name), recording);
        write_yaml(&dir.join(format!("{name}.yaml")), &scenario)?;
        if let Some((preset, agent)) = crate::agent_scenario::agent_scenario(recording, &scenario) {
            write_yaml(&dir.join(format!("{name}.{}.yaml", preset.as_str())), &agent)?;
        }
        let recording_path = dir.join(recording_file_name(name));
        write_recording(&recording_path, recording).map_err(|source| ImportError::Io { path: recording_path.clone(), source })?;
        Ok(recording_path)
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
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .ok()?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|file| file.extension().is_some_and(|ext| ext == "yaml"))
                .collect();
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

/// The last line before the recording with its newest exchange is written:
/// notes in `redacted:` when that exchange lost its raw bytes (a secret
/// only its joined parts showed), and takes the exchange back out, saying
/// so, if a body pattern still matches anywhere in the text to be written.
fn refuse_a_match(redaction: &Redaction, recording: &mut Recording, raw_dropped: bool) -> Option<String> {
    let number = recording.exchanges.len();
    if raw_dropped {
        recording.redacted.push(Redaction::raw_dropped(number));
    }
    if !redaction.finds(&to_yaml(recording)) {
        return None;
    }
    recording.exchanges.pop();
    if raw_dropped {
        recording.redacted.pop();
    }
    Some("not recorded: a --redact-body pattern still matched the text to be written".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat_call(path: &str) -> Observed {
        let chunk = |delta: &str, finish: &str| {
            format!(
                r#"data: {{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
            )
        };
        let body = format!("{}\n\n{}\n\ndata: [DONE]\n\n", chunk(r#"{"role":"assistant","content":"hi"}"#, "null"), chunk("{}", r#""stop""#));
        Observed {
            path: path.into(),
            request_headers: vec![("content-type".into(), "application/json".into())],
            request_body: br#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"}]}"#.to_vec().into(),
            status: 200,
            response_headers: vec![("content-type".into(), "text/event-stream".into())],
            response_body: body.into_bytes(),
        }
    }

    #[test]
    fn every_exchange_queued_is_written_by_finish() {
        let dir = tempfile::tempdir().unwrap();
        let writer = CaptureWriter::new(Target::PerSession(dir.path().into()), Redaction::new(&[], &[]).unwrap(), false).unwrap();
        for call in 0..30 {
            writer.add(chat_call(&format!("/s/a/r/{}/v1/chat/completions", call % 2)));
        }
        writer.finish().unwrap();
        for run in 0..2 {
            let recording: Recording = reloop_files::yaml::load(&dir.path().join(format!("a%2Fr%2F{run}.recording.yaml"))).unwrap();
            assert_eq!(recording.exchanges.len(), 15, "run {run}");
        }
    }

    /// Regression (issue 32): the skeleton `record` wrote ran the built-in
    /// loop, not the agent recorded, and nothing said so.
    #[test]
    fn a_session_of_a_known_agent_gets_an_agent_scenario_beside_the_skeleton() {
        let dir = tempfile::tempdir().unwrap();
        let writer = CaptureWriter::new(Target::Prefix(dir.path().join("rec")), Redaction::new(&[], &[]).unwrap(), false).unwrap();
        let mut call = chat_call("/v1/chat/completions");
        call.request_headers.push(("user-agent".into(), "opencode/1.18.33".into()));
        writer.add(call);
        writer.add(chat_call("/v1/chat/completions"));
        writer.finish().unwrap();
        let agent: reloop_files::scenario::spec::ScenarioSpec = reloop_files::yaml::load(&dir.path().join("rec.opencode.yaml")).unwrap();
        assert_eq!(agent.agent.and_then(|a| a.preset), Some(reloop_files::agent_presets::AgentPreset::Opencode));
        assert_eq!((agent.name.as_deref(), agent.recording.to_str(), agent.task.as_str()), (Some("rec-opencode"), Some("rec.recording.yaml"), "hello"));
        let plain = tempfile::tempdir().unwrap();
        let writer = CaptureWriter::new(Target::Prefix(plain.path().join("rec")), Redaction::new(&[], &[]).unwrap(), false).unwrap();
        writer.add(chat_call("/v1/chat/completions"));
        writer.finish().unwrap();
        assert!(!plain.path().join("rec.opencode.yaml").exists() && plain.path().join("rec.yaml").exists());
    }

    #[test]
    fn a_write_that_fails_is_reported_by_finish() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let writer = CaptureWriter::new(Target::Prefix(dir.path().join("file/rec")), Redaction::new(&[], &[]).unwrap(), false).unwrap();
        writer.add(chat_call("/v1/chat/completions"));
        assert!(writer.finish().is_err(), "a recording that could not be written is not lost silently");
    }
}
