//! `run --shard k/n` and `reloop merge`: three shards of the bundled suite
//! merged equal one full run, timing aside. Rows land in completion order,
//! so tables are compared as sorted rows.

use std::path::Path;

use crate::tables::{Row, read_rows};
use crate::util::{reloop, repo, stderr, stdout};

/// Table `name` of the report in `dir`, sorted, without the wall-clock column.
fn table(dir: &Path, name: &str) -> Vec<Row> {
    let mut rows = read_rows(&dir.join(format!("{name}.parquet")));
    for row in &mut rows {
        row.remove("wall_ms");
    }
    rows.sort();
    rows
}

/// Runs the bundled suite from the repository into `out`.
pub fn run_bundled_suite(out: &Path) {
    let run = reloop(&repo(), &["run", "scenarios/", "--out", out.to_str().expect("UTF-8 path")]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
}

#[test]
fn three_shards_merged_equal_a_full_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let repo = repo();
    run_bundled_suite(&dir.path().join("full"));
    let mut shard_runs = 0;
    for k in 1..=3 {
        let shard = reloop(&repo, &["run", "scenarios/", "--shard", &format!("{k}/3"), "--out", &out(&format!("shard{k}"))]);
        assert_eq!(shard.status.code(), Some(0), "{}", stderr(&shard));
        let runs = table(&dir.path().join(format!("shard{k}")), "runs").len();
        assert!(runs > 0, "shard {k} is empty");
        shard_runs += runs;
    }
    let merged = reloop(&repo, &["merge", &out("merged"), &out("shard1"), &out("shard2"), &out("shard3")]);
    assert_eq!(merged.status.code(), Some(0), "{}{}", stdout(&merged), stderr(&merged));
    for name in ["runs", "steps", "events"] {
        let (full, merged) = (table(&dir.path().join("full"), name), table(&dir.path().join("merged"), name));
        assert_eq!(full.len(), merged.len(), "{name}");
        assert!(full == merged, "{name}.parquet differs between the full run and the merged shards");
    }
    assert_eq!(shard_runs, table(&dir.path().join("full"), "runs").len());
    let twice = reloop(&repo, &["merge", &out("twice"), &out("shard1"), &out("shard1")]);
    assert_eq!(twice.status.code(), Some(2), "a run in two shards is refused");
    assert!(stderr(&twice).contains("appears in more than one shard"), "{}", stderr(&twice));
}

/// The scenarios of shard `k/3` of the bundled suite, run with `env`.
fn shard_scenarios(out: &Path, shard: &str, env: &[(&str, &str)]) -> Vec<String> {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_reloop"));
    command.current_dir(repo()).args(["run", "scenarios/", "--shard", shard, "--out", out.to_str().unwrap()]).env("NO_COLOR", "1");
    for name in ["RELOOP_SHARD", "RELOOP_SHARD_COUNT", "JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"] {
        command.env_remove(name);
    }
    let run = command.envs(env.iter().copied()).output().expect("the reloop binary runs");
    assert_eq!(run.status.code(), Some(0), "--shard {shard} {env:?}: {}", stderr(&run));
    let mut scenarios: Vec<String> = table(out, "runs").into_iter().map(|row| row["scenario"].clone()).collect();
    scenarios.sort();
    scenarios
}

/// One Job template for every shard: `--shard auto` takes shard 2 of 3
/// from a Kubernetes Indexed Job (0-based index), a Slurm array numbered
/// from 1, or RELOOP_SHARD, and each is the shard `--shard 2/3` runs.
#[test]
fn shard_auto_reads_the_engines_variables_and_runs_the_same_shard() {
    let dir = tempfile::tempdir().unwrap();
    let given = shard_scenarios(&dir.path().join("given"), "2/3", &[]);
    assert!(!given.is_empty());
    let engines: [(&str, &[(&str, &str)]); 3] = [
        ("kubernetes", &[("JOB_COMPLETION_INDEX", "1"), ("RELOOP_SHARD_COUNT", "3")]),
        ("slurm", &[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_COUNT", "3"), ("SLURM_ARRAY_TASK_MIN", "1")]),
        ("action", &[("RELOOP_SHARD", "2/3")]),
    ];
    for (engine, env) in engines {
        assert_eq!(shard_scenarios(&dir.path().join(engine), "auto", env), given, "{engine}");
    }
    let none = reloop(&repo(), &["run", "scenarios/", "--shard", "auto", "--out", dir.path().join("none").to_str().unwrap()]);
    if std::env::var_os("JOB_COMPLETION_INDEX").is_none() && std::env::var_os("SLURM_ARRAY_TASK_ID").is_none() && std::env::var_os("RELOOP_SHARD").is_none() {
        assert_eq!(none.status.code(), Some(2), "no engine's variables: bad input");
        assert!(stderr(&none).contains("no shard in the environment"), "{}", stderr(&none));
    }
}
