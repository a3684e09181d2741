//! Runs that go live (`reloop run --upstream`, `docs/rerecord.md`): the
//! run's mock session sends some calls to an upstream
//! ([`reloop_mock::live`]); once the run ends, its steps say which were
//! live, and the recording it leaves (the exchanges it replayed, then the
//! live ones) is written beside the old one, which stays as it was.

use std::path::{Path, PathBuf};

use reloop_mock::Session;
use reloop_recording::capture::{InjectedSecrets, Redaction};
use reloop_recording::tool_side::ShellCommand;
use reloop_recording::workspace::WorkspaceRecord;

use crate::recording_file::{to_yaml, write_recording};
use crate::result::RunReport;
use crate::scenario::{DEFAULT_VARIANT, Scenario};

/// `NAME.rerecorded.yaml` beside the scenario's recording `NAME.recording.yaml`
/// (or `NAME.yaml`); a scenario run on several wires or under a variant
/// adds them (`NAME.anthropic.masking.rerecorded.yaml`), so the runs of a
/// batch never write the same file.
pub fn rerecording_path(scenario: &Scenario) -> PathBuf {
    let recording = scenario.file.parent().unwrap_or(Path::new(".")).join(&scenario.spec.recording);
    let file = recording.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = file.strip_suffix(".recording.yaml").or_else(|| file.strip_suffix(".yaml")).unwrap_or(&file);
    let wire = scenario.name.contains('@').then(|| scenario.wire.as_str());
    let variant = Some(scenario.variant.as_str()).filter(|variant| *variant != DEFAULT_VARIANT);
    let parts: Vec<&str> = std::iter::once(stem).chain(wire).chain(variant).chain(["rerecorded", "yaml"]).collect();
    recording.with_file_name(parts.join("."))
}

/// What a black-box agent's world did in a recorded run (`agent.tools:
/// record` or `--record-mode all`), numbered as the re-recording is, not
/// yet redacted.
#[derive(Debug, Clone, Default)]
pub struct WorldSide {
    /// Every command its shell ran.
    pub tool_side: Vec<ShellCommand>,
    /// Its workspace at the start and after each turn.
    pub workspace: Option<WorkspaceRecord>,
}

/// After a run of `scenario` on `session`: when any of its steps went live
/// (`live_steps`), or a black-box agent's world was recorded (`world`),
/// writes the re-recording, with that world in place of the recording's
/// `tool_side:` and `workspace:` (a failure to write fails the run, naming
/// the file).
pub fn finish(scenario: &Scenario, session: &Session, report: &mut RunReport, world: Option<WorldSide>) {
    let live = scenario.live.as_deref();
    if live.is_some() {
        blame_the_harness(session, report);
    }
    if report.metrics.live_steps == 0 && world.is_none() {
        return;
    }
    let path = live.and_then(|live| live.rerecord_to.clone()).unwrap_or_else(|| rerecording_path(scenario));
    // Without an upstream, a recorded shell's output is still scrubbed of the keys reloop holds.
    let redaction = live.map_or_else(
        || Redaction::new(&[], &[]).expect("no pattern to refuse").with_secrets(InjectedSecrets::from_environment()),
        |live| live.upstream.redaction().clone(),
    );
    match write_rerecording(&path, scenario, session, &redaction, world) {
        Ok(()) => eprintln!("reloop: {}: re-recorded into {}", scenario.name, path.display()),
        Err(error) => {
            report.passed = false;
            report.failed_expectations.push(format!("rerecord: {}: {error}", path.display()));
        }
    }
}

/// A run that failed while its upstream could not be reached failed for
/// the harness's reasons, not the agent's: it ends `harness_error`, so
/// verdicts over trials leave it out of the rates and count it apart
/// (`docs/metrics.md`, "Trials").
fn blame_the_harness(session: &Session, report: &mut RunReport) {
    if report.passed {
        return;
    }
    if let Some(why) = session.upstream_unreachable() {
        report.outcome = reloop_agent::Outcome::HarnessError;
        report.error = Some(format!("the upstream could not be reached ({why}); the run says nothing of the agent"));
    }
}

/// Refuses, before anything is sent upstream, a `--rerecord-to` `path`
/// that names the recording the scenario `scenario_file` replays (the
/// write checks again; this spares the live calls a refused write would
/// waste). A scenario that cannot be read is left to the batch's checks.
pub fn check_rerecord_to(path: &Path, scenario_file: &Path) -> Result<(), String> {
    let Ok(spec) = crate::yaml::load::<reloop_files::scenario::spec::ScenarioSpec>(scenario_file) else { return Ok(()) };
    let recording = scenario_file.parent().unwrap_or(Path::new(".")).join(&spec.recording);
    if same_file(path, &recording) {
        return Err(format!("--rerecord-to {}: is the recording the scenario replays; the old recording stays intact (give another path)", path.display()));
    }
    Ok(())
}

/// Whether `path` names the existing file `recording`, through `..`,
/// symlinks or another spelling: `std::path::absolute` resolves neither, so
/// `dir/../dir/x.yaml` would pass for another file and be replaced.
fn same_file(path: &Path, recording: &Path) -> bool {
    match (std::fs::canonicalize(path), std::fs::canonicalize(recording)) {
        (Ok(path), Ok(recording)) => path == recording,
        // A path that does not exist yet is not the recording, which does.
        _ => false,
    }
}

/// Writes the session's re-recording to `path`, atomically, never over the
/// recording it replayed, and never with a match of a redaction pattern;
/// `world`, redacted (a file's text as a command's output is), replaces
/// the recording's.
fn write_rerecording(path: &Path, scenario: &Scenario, session: &Session, redaction: &Redaction, world: Option<WorldSide>) -> Result<(), String> {
    let recording = scenario.file.parent().unwrap_or(Path::new(".")).join(&scenario.spec.recording);
    if same_file(path, &recording) {
        return Err("is the recording replayed; the old recording stays intact (give another --rerecord-to)".into());
    }
    let mut rerecorded = session.rerecorded(&redaction.describe());
    if let Some(world) = world {
        rerecorded.tool_side = world.tool_side.into_iter().map(|command| redaction.shell_command(command)).collect();
        rerecorded.workspace = world.workspace.map(|workspace| workspace.redacted(|text| redaction.text(text)));
    }
    if redaction.finds(&to_yaml(&rerecorded)) {
        return Err("a --redact-body pattern still matches; nothing written".into());
    }
    write_recording(path, &rerecorded).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recording_is_recognized_under_any_spelling_and_a_new_file_is_not_it() {
        let dir = tempfile::tempdir().unwrap();
        let recording = dir.path().join("x.recording.yaml");
        std::fs::write(&recording, "exchanges: []\n").unwrap();
        let roundabout = dir.path().join("..").join(dir.path().file_name().unwrap()).join("x.recording.yaml");
        assert!(same_file(&roundabout, &recording));
        #[cfg(unix)]
        {
            let link = dir.path().join("link.yaml");
            std::os::unix::fs::symlink(&recording, &link).unwrap();
            assert!(same_file(&link, &recording));
        }
        assert!(!same_file(&dir.path().join("x.rerecorded.yaml"), &recording));
    }
}
