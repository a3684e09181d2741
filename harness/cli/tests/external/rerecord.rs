//! Re-recording (`--upstream`) with a black-box agent on the official
//! OpenAI SDK: its live steps go through the same mock.

use std::path::Path;
use std::process::Stdio;

use crate::prerequisite::{OPENAI, Test};
use crate::tables::read_rows;
use crate::util::{Serve, reloop_env, stderr, texts};

pub fn tests() -> Vec<Test> {
    vec![crate::test!(OPENAI, a_black_box_agent_goes_live_through_the_same_mock)]
}

fn a_black_box_agent_goes_live_through_the_same_mock(python: &Path) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/black-box");
    let dir = tempfile::tempdir().unwrap();
    let upstream = Serve::start_with(&data.join("sdk-agent.recording.yaml"), &[], Stdio::null());
    let bin = python.parent().filter(|dir| !dir.as_os_str().is_empty()).map(Path::to_owned);
    let path = std::env::join_paths(bin.into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let rerecorded = dir.path().join("agent.yaml");
    let scenario = data.join("sdk-agent.yaml");
    let args = [
        "run",
        scenario.to_str().unwrap(),
        "--out",
        "out",
        "--upstream",
        &upstream.addr,
        "--record-mode",
        "all",
        "--rerecord-to",
        rerecorded.to_str().unwrap(),
    ];
    let run = reloop_env(dir.path(), &args, &[("PATH", path.to_str().unwrap())]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let runs = read_rows(&dir.path().join("out/runs.parquet"));
    assert_eq!((runs[0]["system_under_test"].as_str(), runs[0]["live_steps"].as_str()), ("python3", "2"));
    assert_eq!(texts(&rerecorded), texts(&data.join("sdk-agent.recording.yaml")), "what the upstream served, recorded afresh");
}
