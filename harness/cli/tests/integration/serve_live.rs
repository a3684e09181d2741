//! `reloop serve --upstream URL --rerecord-dir DIR` (`docs/rerecord.md`):
//! a session replays while its requests match, goes live from the first
//! one its recording lacks, and is written as the exchanges it replayed,
//! then the live ones, before the client has the live answer; the
//! re-recording then replays with the upstream gone.

use std::process::Stdio;

use crate::util::{Serve, post, texts, write};

/// A non-streamed Chat request asking `question`.
fn chat(question: &str) -> String {
    format!(r#"{{"model":"gpt-4o-mini","messages":[{{"role":"user","content":"{question}"}}]}}"#)
}

/// The text of a Chat completion.
fn answer(body: &[u8]) -> String {
    let reply: serde_json::Value = serde_json::from_slice(body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(body)));
    reply["choices"][0]["message"]["content"].as_str().unwrap_or_else(|| panic!("a text answer: {reply}")).to_owned()
}

const ONE_ANSWER: &str = "format: reloop.recording/v2\nexchanges:\n  - parts: [ { type: text, text: TEXT } ]\n";

#[test]
fn a_session_goes_live_where_its_recording_ends_and_is_written_before_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.recording.yaml", &ONE_ANSWER.replace("TEXT", "The old answer."));
    let live = write(dir.path(), "live.recording.yaml", &ONE_ANSWER.replace("TEXT", "A live answer."));
    let upstream = Serve::start_with(&live, &[], Stdio::null());
    let out = dir.path().join("rerecorded");
    let upstream_base = format!("{}/s/live", upstream.addr);
    let flags = ["--upstream", upstream_base.as_str(), "--rerecord-dir", out.to_str().unwrap()];
    let server = Serve::start_with(&old, &flags, Stdio::null());
    let path = "/s/old/r/1/v1/chat/completions";
    let (_, first) = post(&server.addr, path, "", &chat("first?"));
    assert_eq!(answer(&first), "The old answer.", "replayed while the recording holds the call");
    assert!(!out.join("old%2Fr%2F1.recording.yaml").exists(), "nothing went live yet");
    let (head, second) = post(&server.addr, path, "", &chat("second?"));
    assert!(head.starts_with("HTTP/1.0 200"), "{head}");
    assert_eq!(answer(&second), "A live answer.", "live where the recording ends");
    // Written before the answer was sent: no wait needed.
    let rerecorded = out.join("old%2Fr%2F1.recording.yaml");
    assert_eq!(texts(&rerecorded), ["The old answer.", "A live answer."]);
    assert!(server.interrupt().code() == Some(130));
    drop(upstream);
    let again = dir.path().join("again.recording.yaml");
    std::fs::copy(&rerecorded, &again).unwrap();
    let replay = Serve::start_with(&again, &[], Stdio::null());
    let replayed: Vec<String> = ["first?", "second?"].iter().map(|q| answer(&post(&replay.addr, "/s/again/v1/chat/completions", "", &chat(q)).1)).collect();
    assert_eq!(replayed, ["The old answer.", "A live answer."], "the re-recording replays with the upstream gone");
}

#[test]
fn upstream_needs_a_rerecord_dir_and_a_mode_that_goes_live() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.recording.yaml", &ONE_ANSWER.replace("TEXT", "x"));
    let run = |flags: &[&str]| crate::util::reloop(dir.path(), &[&["serve", "--recording", old.to_str().unwrap()], flags].concat());
    let missing = run(&["--upstream", "http://127.0.0.1:9"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(crate::util::stderr(&missing).contains("--rerecord-dir"), "{}", crate::util::stderr(&missing));
    let once = run(&["--upstream", "http://127.0.0.1:9", "--rerecord-dir", "out", "--record-mode", "once"]);
    assert_eq!(once.status.code(), Some(2));
    assert!(crate::util::stderr(&once).contains("nothing would go live"), "{}", crate::util::stderr(&once));
}
