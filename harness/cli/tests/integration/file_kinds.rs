//! Files know their kind by their `format` field, parsed as YAML (block,
//! flow or JSON): `run` and `sweep` over a
//! folder skip the recordings below it, `serve --recording` over a folder
//! skips the scenarios in it (each saying how many), so an import's output
//! folder runs and serves as it is; a session is named after its file
//! without `.recording`, and the old name keeps working.

use std::process::Stdio;

use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, Serve, post, reloop, repo, stderr, stdout, write};

/// A one-message chat request.
const CHAT: &str = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"What is the answer?"}]}"#;

/// The HTTP status line of a chat request to session `name`.
fn chat_status(server: &Serve, name: &str) -> String {
    let (head, _) = post(&server.addr, &format!("/s/{name}/v1/chat/completions"), "", CHAT);
    head.lines().next().unwrap_or_default().to_owned()
}

/// What `serve` prints, up to the line of session `last_session` (the last
/// one listed: sessions are printed in name order).
fn banner(server: &mut Serve, last_session: &str) -> String {
    let last = format!("/s/{last_session}/v1");
    let mut printed = Vec::new();
    for line in server.stdout.by_ref().map_while(Result::ok) {
        let done = line.contains(&last);
        printed.push(line);
        if done {
            break;
        }
    }
    printed.join("\n")
}

/// `reloop import session.jsonl --out d`, then `reloop serve --recording d`
/// used to fail on the skeleton beside the recording ("unknown field
/// `name`"); `reloop run d` runs the imported scenario as it is.
#[test]
fn an_imports_output_folder_serves_and_runs_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    let session = repo().join("harness/import/tests/fixtures/sessions/pi/agent-history__pi-session-01.redacted.jsonl");
    let imported = reloop(dir.path(), &["import", session.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(imported.status.code(), Some(0), "{}", stderr(&imported));

    let mut server = Serve::start_with(&out, &[], Stdio::null());
    let printed = banner(&mut server, "agent-history-pi-session-01-redacted");
    assert!(printed.contains("skipped 1 scenario"), "{printed}");
    assert!(printed.contains("  agent-history-pi-session-01-redacted  http://"), "{printed}");
    assert!(chat_status(&server, "agent-history-pi-session-01-redacted").contains(" 200 "), "the imported recording is served");
    drop(server);

    let run = reloop(dir.path(), &["run", out.to_str().unwrap(), "--out", dir.path().join("reports").to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "{}\n{}", stdout(&run), stderr(&run));
    assert!(stderr(&run).contains("skipped 1 recording"), "{}", stderr(&run));
}

/// A suite laid out as `suite/*.yaml` with its recordings in `suite/rec/`
/// runs and sweeps; each skip is counted on one line.
#[test]
fn run_and_sweep_over_a_suite_skip_the_recordings_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    write(&suite, "answer.yaml", &MINIMAL_SCENARIO.replace("recording: recording.yaml", "recording: rec/answer.recording.yaml"));
    write(&suite, "rec/answer.recording.yaml", ONE_TEXT_RECORDING);
    write(&suite, "rec/other.recording.yaml", &ONE_TEXT_RECORDING.replace("reloop.recording/v1", "reloop.recording/v2"));
    let run = reloop(dir.path(), &["run", "suite", "--out", "reports"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let log = stderr(&run);
    let skipped: Vec<&str> = log.lines().filter(|line| line.contains("skipped")).collect();
    assert_eq!(skipped, ["suite: skipped 2 recordings (files tagged `format: reloop.recording/...`)"]);
    let sweep = reloop(dir.path(), &["sweep", "suite", "--strategies", "none", "--out", "sweep"]);
    assert_eq!(sweep.status.code(), Some(0), "{}", stderr(&sweep));
    assert!(stderr(&sweep).contains("skipped 2 recordings"), "{}", stderr(&sweep));
}

/// `NAME.recording.yaml` is served as session `NAME`; `NAME.recording`
/// still answers, as it did before.
#[test]
fn a_session_is_named_after_its_file_without_recording() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "c1-chat.recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "plain.yaml", ONE_TEXT_RECORDING);
    let mut server = Serve::start_with(dir.path(), &[], Stdio::null());
    let printed = banner(&mut server, "plain");
    assert!(printed.contains("  c1-chat  http://"), "{printed}");
    assert!(!printed.contains("c1-chat.recording"), "{printed}");
    for name in ["c1-chat", "c1-chat.recording", "c1-chat/r/2", "c1-chat.recording/r/2", "plain"] {
        assert!(chat_status(&server, name).contains(" 200 "), "session {name}");
    }
    assert!(chat_status(&server, "c1").contains(" 404 "));
}

/// A scenario named where a recording is expected is bad input: only a
/// folder's files are sorted by kind.
#[test]
fn a_scenario_given_as_the_recording_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(dir.path(), "s.yaml", MINIMAL_SCENARIO);
    let output = reloop(dir.path(), &["serve", "--port", "0", "--recording", scenario.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("is a scenario, not a recording"), "{}", stderr(&output));
}

/// Issue 41: a recording written as JSON (as scripts write it: keys sorted,
/// so `format` after `exchanges`), below a scenario folder, after a comment
/// and on the line of its document marker. `run DIR` failed on it ("unknown field
/// `format`") and `serve --recording DIR` skipped it: the kind was read
/// from the text `format:` at the start of a line. Now `run` skips it as a
/// recording and `serve` serves it.
#[test]
fn a_json_recording_below_a_scenario_folder_is_skipped_by_run_and_served_by_serve() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    let json = r#"{"exchanges": [{"text": "The answer is 42."}], "format": "reloop.recording/v1"}"#;
    write(&suite, "rec/answer.recording.yaml", &format!("# written by a script\n--- {json}\n"));
    write(&suite, "answer.yaml", &MINIMAL_SCENARIO.replace("recording: recording.yaml", "recording: rec/answer.recording.yaml"));

    let run = reloop(dir.path(), &["run", "suite", "--out", "reports"]);
    assert_eq!(run.status.code(), Some(0), "{}\n{}", stdout(&run), stderr(&run));
    assert!(stderr(&run).contains("suite: skipped 1 recording (files tagged `format: reloop.recording/...`)"), "{}", stderr(&run));
    assert!(stdout(&run).contains("final_answer"), "the scenario ran over the JSON recording: {}", stdout(&run));

    let mut server = Serve::start_with(&suite.join("rec"), &[], Stdio::null());
    let printed = banner(&mut server, "answer");
    assert!(printed.contains("  answer  http://"), "{printed}");
    let (head, body) = post(&server.addr, "/s/answer/v1/chat/completions", "", CHAT);
    assert!(head.contains(" 200 "), "{head}");
    assert!(String::from_utf8_lossy(&body).contains("The answer is 42."), "{}", String::from_utf8_lossy(&body));
}
