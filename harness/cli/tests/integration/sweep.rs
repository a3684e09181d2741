//! `reloop sweep` compares strategies over the same scenarios.

use crate::util::{reloop, repo, stderr, stdout, write};

#[test]
fn strategies_and_variants_become_rows_of_one_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let variants = write(dir.path(), "variants.yaml", "variants:\n  - { name: masking-m1, strategy: masking, strategies: { masking: { keep: 1 } } }\n");
    let out = dir.path().join("sweep");
    let scenario = repo().join("scenarios/long-session-microcompaction.yaml");
    let output = reloop(
        &repo(),
        &["sweep", scenario.to_str().unwrap(), "--strategies", "roku,none", "--variants", variants.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    // Without compaction (and with masking keeping one result) the session
    // fails its expectations on purpose: exit 1, as `run`'s.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let table = stdout(&output);
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with('│')).collect();
    assert_eq!(rows.len(), 4, "header and three variants: {table}");
    assert!(rows[1].ends_with("1/1  │") && rows[2].ends_with("0/1  │"), "roku passes, none fails: {table}");
    assert!(rows[1].contains("roku") && rows[2].contains("none") && rows[3].contains("masking-m1"), "{table}");
    assert!(rows[2].contains("0.0%"), "no strategy, no savings: {table}");
    assert!(table.contains("like for like: 1 of 1 scenarios ended alike under every variant\n"), "{table}");
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

#[test]
fn a_sweep_compares_anthropic_breakpoint_placements() {
    let dir = tempfile::tempdir().unwrap();
    let variants = write(
        dir.path(),
        "placements.yaml",
        "variants:\n  - { name: careful, strategy: roku }\n  - { name: no-breakpoints, strategy: roku, cache_breakpoints: { at: [] } }\n  - { name: last-only-1h, strategy: roku, cache_breakpoints: { at: [last_message], ttl: 1h } }\n",
    );
    let out = dir.path().join("sweep");
    let scenario = repo().join("scenarios/anthropic-prompt-cache.yaml");
    let output = reloop(&repo(), &["sweep", scenario.to_str().unwrap(), "--variants", variants.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    // Without breakpoints the scenario's cache expectations fail: exit 1.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let rows = crate::tables::read_rows(&out.join("runs.parquet"));
    let by_variant = |name: &str| rows.iter().find(|r| r["variant"] == name).unwrap_or_else(|| panic!("{name}: {rows:?}"));
    let number = |name: &str, column: &str| by_variant(name)[column].parse::<f64>().unwrap();
    assert_eq!(number("no-breakpoints", "cache_write_tokens"), 0.0);
    assert!(number("careful", "cache_read_tokens") > 0.0 && number("last-only-1h", "cache_read_tokens") > 0.0);
    assert!(number("careful", "estimated_cost_usd") < number("no-breakpoints", "estimated_cost_usd"), "caching pays off");
    assert!(number("careful", "estimated_cost_usd") < number("last-only-1h", "estimated_cost_usd"), "1-hour writes cost more here");
}

#[test]
fn a_sweep_exits_as_run_does_when_a_run_fails() {
    // The bundled one-shot answer, with an expectation no variant can meet.
    let dir = tempfile::tempdir().unwrap();
    let bundled = std::fs::read_to_string(repo().join("scenarios/one-shot-answer.yaml")).unwrap();
    let failing = bundled
        .replace("name: one-shot-answer", "name: one-shot-impossible")
        .replace("recording: ../recordings/", &format!("recording: {}/recordings/", repo().display()))
        .replace("final_answer_contains: [", "final_answer_contains: [\"never in the answer\", ");
    let scenario = write(dir.path(), "impossible.yaml", &failing);
    let out = dir.path().join("sweep");
    let output = reloop(dir.path(), &["sweep", scenario.to_str().unwrap(), "--strategies", "roku,none", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("0/1"), "the table is printed all the same: {}", stdout(&output));
    assert!(out.join("runs.parquet").exists(), "and the reports written");
}

/// `sweep --strategies native` through the binary, over every wire: the
/// provider's own context management runs where the wire has it (Anthropic
/// context editing, Responses compaction, both applied by the mock), is
/// left out with a note where it has none, and its figures are the server's:
/// tokens saved against the uncompacted transcript, and the cache breaks the
/// server's edits cause.
#[test]
fn a_native_sweep_runs_the_providers_own_context_management_on_every_wire_that_has_it() {
    let dir = tempfile::tempdir().unwrap();
    // Early triggers, so the session's few rounds reach them.
    let early = "{ trigger_ratio: 0.05, clear_at_least_ratio: 0, keep_tool_uses: 2, compact_threshold_ratio: 0.12 }";
    let variants = write(dir.path(), "native.yaml", &format!("variants:\n  - {{ name: native-early, strategy: native, strategies: {{ native: {early} }} }}\n"));
    let out = dir.path().join("sweep");
    let scenario = repo().join("scenarios/long-session-microcompaction.yaml");
    let args = ["sweep", scenario.to_str().unwrap(), "--strategies", "native,none", "--variants", variants.to_str().unwrap()];
    let output = reloop(&repo(), &[&args[..], &["--wires", "openai-chat,anthropic,openai-responses", "--out", out.to_str().unwrap()]].concat());
    assert!(stderr(&output).contains("note: 2 native run(s) left out: their wire has no provider-side context management"), "{}", stderr(&output));
    let runs = crate::tables::read_rows(&out.join("runs.parquet"));
    let mut ran: Vec<String> = runs.iter().map(|r| format!("{} {}", r["scenario"], r["variant"])).collect();
    ran.sort();
    let name = "long-session-microcompaction";
    let expected = [
        "anthropic native",
        "anthropic native-early",
        "anthropic none",
        "openai-chat none",
        "openai-responses native",
        "openai-responses native-early",
        "openai-responses none",
    ];
    assert_eq!(ran, expected.map(|run| format!("{name}@{run}")));
    let run = |wire: &str, variant: &str| runs.iter().find(|r| r["scenario"] == format!("{name}@{wire}") && r["variant"] == variant).unwrap();
    for wire in ["anthropic", "openai-responses"] {
        let (native, none) = (run(wire, "native-early"), run(wire, "none"));
        assert_eq!(native["outcome"], none["outcome"], "{wire}: {native:?}");
        let number = |row: &crate::tables::Row, column: &str| row[column].parse::<f64>().unwrap();
        assert!(number(native, "input_tokens_total") < number(none, "input_tokens_total"), "{wire}: the server sent less to the model");
        assert!(number(native, "tokens_saved_total") > 0.0 && number(none, "tokens_saved_total") == 0.0, "{wire}: {native:?}");
        assert!(number(native, "compaction_calls") == 0.0, "{wire}: the loop made no summary call");
    }
    let steps = crate::tables::read_rows(&out.join("steps.parquet"));
    let edited =
        steps.iter().filter(|s| s["scenario"] == format!("{name}@anthropic") && s["variant"] == "native-early" && s["cache_break_simulated"] == "true");
    assert!(edited.count() > 0, "a cleared tool result changes the cached prefix");
    let compacted = steps.iter().filter(|s| s["scenario"] == format!("{name}@openai-responses") && s["variant"] == "native-early");
    let messages: Vec<u64> = compacted.map(|s| s["request_messages"].parse().unwrap()).collect();
    assert!(messages.windows(2).any(|pair| pair[1] < pair[0]), "after a compaction the request starts at its item: {messages:?}");
    // The server counts the prompt it edited, not the view the loop
    // estimated: the loop's estimator learns nothing from native runs.
    let events = crate::tables::read_rows(&out.join("events.parquet"));
    let calibrations = |variant: &str| events.iter().filter(|e| e["variant"] == variant && e["kind"] == "estimator_calibrated").count();
    assert_eq!(calibrations("native-early"), 0);
    assert!(calibrations("none") > 0);
}
