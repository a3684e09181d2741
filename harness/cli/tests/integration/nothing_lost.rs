//! Nothing is lost (issue 9 §3): `--out` is checked before the first run,
//! SIGTERM stops a batch the way Ctrl-C does, and a `reloop run` killed at
//! any moment leaves the output folder holding a complete set: the previous
//! one or the new one, never a mix.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::tables::read_rows;
use crate::util::{reloop, repo, stderr, stdout, write};

const TABLES: [&str; 3] = ["runs.parquet", "steps.parquet", "events.parquet"];

/// The `(scenario, variant)` of every row of a Parquet table.
fn keys(file: &Path) -> Vec<(String, String)> {
    read_rows(file).into_iter().map(|row| (row["scenario"].clone(), row["variant"].clone())).collect()
}

/// Reads the three tables of `dir` and checks they are one set: the runs
/// are distinct, and every step and event belongs to one of them. Returns
/// the runs.
fn read_set(dir: &Path) -> BTreeSet<(String, String)> {
    let runs = keys(&dir.join("runs.parquet"));
    let distinct: BTreeSet<_> = runs.iter().cloned().collect();
    assert_eq!(distinct.len(), runs.len(), "{}: a run appears twice", dir.display());
    for table in &TABLES[1..] {
        for key in keys(&dir.join(table)) {
            assert!(distinct.contains(&key), "{}/{table}: {key:?} is not among its runs", dir.display());
        }
    }
    distinct
}

fn variants(set: &BTreeSet<(String, String)>) -> BTreeSet<&str> {
    set.iter().map(|(_, variant)| variant.as_str()).collect()
}

#[test]
fn an_unwritable_out_exits_2_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "not-a-directory", "");
    let output = reloop(
        &repo(),
        &["run", "scenarios/", "--out", dir.path().join("not-a-directory/out").to_str().unwrap(), "--junit", dir.path().join("junit.xml").to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--out") && stderr(&output).contains("not-a-directory/out"), "{}", stderr(&output));
    assert_eq!(stdout(&output), "", "no run happened, so no table");
    assert!(!dir.path().join("junit.xml").exists(), "no run happened, so no JUnit");
}

#[test]
fn sigterm_finishes_the_runs_in_flight_and_writes_what_finished() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Every bundled scenario under 5 strategies: many seconds in a debug build.
    let child = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .current_dir(repo())
        .args(["sweep", "scenarios/", "--strategies", "roku,opencode,codex,masking,none", "--jobs", "2", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    let finished = read_set(&out);
    let said = stderr(&output);
    let prefix = format!("interrupted: {} of ", finished.len());
    let total: usize = said
        .split_once(&prefix)
        .and_then(|(_, rest)| rest.split_once(" runs finished"))
        .and_then(|(total, _)| total.parse().ok())
        .unwrap_or_else(|| panic!("no `{prefix}N runs finished` in: {said}"));
    assert!(finished.len() < total, "the batch stopped early");
    assert!(!dir.path().join("out.partial").exists(), "the parts were compacted into the report");
}

/// A small random generator, so the kill moments differ from run to run
/// yet can be replayed from the printed seed.
struct Moments(u64);

impl Moments {
    fn next_below(&mut self, bound: Duration) -> Duration {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        bound.mul_f64((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

#[test]
fn a_run_killed_at_any_moment_leaves_the_previous_set_or_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = |variant: &str| {
        Command::new(env!("CARGO_BIN_EXE_reloop"))
            .current_dir(repo())
            .args(["run", "scenarios/doom-loops/", "--jobs", "2", "--variant", variant, "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let started = Instant::now();
    assert_eq!(run("before").wait().unwrap().code(), Some(0));
    let whole_run = started.elapsed();
    let complete = read_set(&out).len();
    let mut published = "before".to_owned();

    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let mut moments = Moments(seed);
    for attempt in 0..20 {
        let label = format!("after-{attempt}");
        let mut child = run(&label);
        // Moments past the whole run land after the publication too.
        let moment = moments.next_below(whole_run.mul_f64(1.2));
        std::thread::sleep(moment);
        child.kill().unwrap();
        child.wait().unwrap();
        let context = format!("seed {seed}, kill {attempt} at {moment:?} of a {whole_run:?} run");
        let set = read_set(&out);
        let labels = variants(&set);
        assert_eq!(set.len(), complete, "{context}: a complete set, got {labels:?}");
        assert!(labels.len() == 1, "{context}: one batch's runs, got {labels:?}");
        let label_found = labels.into_iter().next().unwrap().to_owned();
        assert!(label_found == published || label_found == label, "{context}: {label_found} is neither {published} nor {label}");
        published = label_found;
        // What the killed batch checkpointed is readable too, part by part:
        // each part holds runs of one batch (this one's, or an earlier killed
        // batch's when this one died before it cleared the folder).
        let partial = dir.path().join("out.partial");
        for part in std::fs::read_dir(&partial).into_iter().flatten().map(|e| e.unwrap().path()) {
            if part.file_name().unwrap().to_string_lossy().starts_with("part-") {
                let runs = read_set(&part);
                assert_eq!(variants(&runs).len(), 1, "{context}: {} holds {runs:?}", part.display());
            }
        }
    }
}

/// Regression (issue 28): a second `run` to the same `--out` deleted the
/// first's `OUT.partial/`, and the first ended with exit 3 and every run
/// lost. `OUT` is locked for the batch: the second is refused at once
/// (exit 2, naming the first's PID) and the first loses nothing.
#[test]
fn a_second_run_to_the_same_out_is_refused_at_once_and_the_first_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let script = format!("touch {}; sleep 2", started.display());
    let file = crate::util::shell_scenario(dir.path(), "slow", &script, 60, "{ exit_code: 0 }");
    let out = dir.path().join("out");
    let args = ["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()];
    let first = Command::new(env!("CARGO_BIN_EXE_reloop")).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the first run's agent never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let begun = Instant::now();
    let second = reloop(dir.path(), &args);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(begun.elapsed() < Duration::from_secs(2), "refused at once, not after waiting");
    assert!(stderr(&second).contains(&format!("reloop PID {}", first.id())), "{}", stderr(&second));
    let first = first.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(keys(&out.join("runs.parquet")), [("slow".to_owned(), "default".to_owned())]);
}
