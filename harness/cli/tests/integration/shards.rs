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
