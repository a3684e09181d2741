//! `reloop sweep` compares strategies over the same scenarios.

use crate::util::{reloop, repo, stderr, stdout, write};

#[test]
fn strategies_and_variants_become_rows_of_one_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let variants = write(
        dir.path(),
        "variants.yaml",
        "variants:\n  - { name: masking-m1, strategy: masking, strategies: { masking: { keep: 1 } } }\n",
    );
    let out = dir.path().join("sweep");
    let scenario = repo().join("scenarios/long-session-microcompaction.yaml");
    let output = reloop(
        &repo(),
        &["sweep", scenario.to_str().unwrap(), "--strategies", "roku,none", "--variants", variants.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let table = stdout(&output);
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with('│')).collect();
    assert_eq!(rows.len(), 4, "header and three variants: {table}");
    assert!(rows[1].contains("roku") && rows[2].contains("none") && rows[3].contains("masking-m1"), "{table}");
    assert!(rows[2].contains("0.0%"), "no strategy, no savings: {table}");
    assert!(out.join("runs.parquet").exists());
}

#[test]
fn a_sweep_needs_variants_and_names_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = repo().join("scenarios/one-shot-answer.yaml");
    let none = reloop(dir.path(), &["sweep", scenario.to_str().unwrap()]);
    assert_eq!(none.status.code(), Some(2));
    let variants = write(dir.path(), "v.yaml", "variants:\n  - { name: a, strategy: roku }\n  - { name: a, strategy: none }\n");
    let twice = reloop(dir.path(), &["sweep", scenario.to_str().unwrap(), "--variants", variants.to_str().unwrap()]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(stderr(&twice).contains("field `variants[1].name`: `a` is used twice"), "{}", stderr(&twice));
}
