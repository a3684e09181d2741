//! Strategies as plug-ins (`docs/strategies.md`) through the real binary:
//! the Python re-implementation of `masking` gives the built-in's figures,
//! and every way a plug-in can fail ends only its own run, as
//! `strategy_error` with a message naming the step and what came back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::tables::{Row, read_rows};
use crate::util::{reloop, repo, stderr, stdout, write};

/// Columns that may differ between two runs of the same strategy: the
/// variant's label, the strategy's name, and wall-clock time.
const NAMING_AND_TIMING: [&str; 3] = ["variant", "strategy", "wall_ms"];

/// `rows` of one variant with the naming and timing columns left out and
/// the plug-in's name read as the built-in's where text quotes it (a cache
/// break's cause names the strategy whose edit caused it).
fn comparable(rows: &[Row], variant: &str, plugin_name: &str) -> Vec<BTreeMap<String, String>> {
    rows.iter()
        .filter(|row| row["variant"] == variant)
        .map(|row| {
            row.iter()
                .filter(|(column, _)| !NAMING_AND_TIMING.contains(&column.as_str()))
                .map(|(column, cell)| (column.clone(), cell.replace(plugin_name, "masking")))
                .collect()
        })
        .collect()
}

#[test]
fn the_python_masking_plugin_gives_the_builtin_figures_on_a_long_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let scenario = repo().join("scenarios/long/refactor-log-to-tracing.yaml");
    let output =
        reloop(&repo(), &["sweep", scenario.to_str().unwrap(), "--strategies", "masking,examples/strategies/masking.py", "--out", out.to_str().unwrap()]);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
    for table in ["runs", "steps", "events"] {
        let rows = read_rows(&out.join(format!("{table}.parquet")));
        let builtin = comparable(&rows, "masking", "masking-py");
        let plugin = comparable(&rows, "masking-py", "masking-py");
        assert!(!builtin.is_empty(), "{table}: the built-in's rows are there");
        assert_eq!(builtin.len(), plugin.len(), "{table}: as many rows");
        for (i, (a, b)) in builtin.iter().zip(&plugin).enumerate() {
            assert_eq!(a, b, "{table} row {i}: the plug-in's row equals the built-in's");
        }
    }
    let runs = read_rows(&out.join("runs.parquet"));
    let mut strategies: Vec<(&str, &str)> = runs.iter().map(|r| (r["variant"].as_str(), r["strategy"].as_str())).collect();
    // Rows are written as runs finish.
    strategies.sort_unstable();
    assert_eq!(strategies, [("masking", "masking"), ("masking-py", "masking-py")], "named by its handshake");
    let masked: u64 = runs[0]["compactions_layer0"].parse().unwrap();
    assert!(masked > 0, "masking masked something, so the comparison compares edits");
}

#[test]
fn a_sweep_refuses_a_plugin_path_that_is_not_a_file_naming_the_strategies() {
    let scenario = repo().join("scenarios/one-shot-answer.yaml");
    let output = reloop(&repo(), &["sweep", scenario.to_str().unwrap(), "--strategies", "masking,maskng"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("`maskng` is neither a strategy (roku, opencode, codex, masking, none, native) nor a plug-in's file"),
        "{}",
        stderr(&output)
    );
}

/// A variants file names plug-ins by command (with settings) or by a file
/// relative to it; a plug-in told `keep: 2` masks as the built-in tuned so.
#[test]
fn a_variants_file_names_plugins_by_command_or_by_a_file_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo().join("examples/strategies"), dir.path().join("strategies")).unwrap();
    let script = repo().join("examples/strategies/masking.py");
    let variants = write(
        dir.path(),
        "variants.yaml",
        &format!(
            "variants:\n  - {{ name: builtin-keep-2, strategy: masking, strategies: {{ masking: {{ keep: 2 }} }} }}\n  - {{ name: plugin-keep-2, strategy: {{ command: [python3, {}], settings: {{ keep: 2 }} }} }}\n  - {{ name: plugin-file, strategy: strategies/masking.py }}\n",
            script.display()
        ),
    );
    let out = dir.path().join("sweep");
    let scenario = repo().join("scenarios/long-session-microcompaction.yaml");
    let output = reloop(dir.path(), &["sweep", scenario.to_str().unwrap(), "--variants", variants.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
    let runs = read_rows(&out.join("runs.parquet"));
    let run = |variant: &str| runs.iter().find(|r| r["variant"] == variant).unwrap_or_else(|| panic!("{variant}: {runs:?}"));
    for variant in ["plugin-keep-2", "plugin-file"] {
        assert_eq!(run(variant)["strategy"], "masking-py", "{variant} ran the plug-in: {:?}", run(variant)["error"]);
    }
    for column in ["input_tokens_total", "compactions_layer0", "cache_breaks_simulated"] {
        assert_eq!(run("plugin-keep-2")[column], run("builtin-keep-2")[column], "{column}: the settings reached the plug-in");
    }
    assert_ne!(run("plugin-keep-2")["input_tokens_total"], run("plugin-file")["input_tokens_total"], "keep 2 is not the default 10");
}

/// A scenario names a plug-in by a file beside it, which runs in the
/// scenario's folder whatever reloop's own working directory.
#[test]
fn a_plugin_file_named_by_a_scenario_runs_in_the_scenarios_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("the-scenarios-folder");
    // Raw protocol: it names itself after its working directory, then never edits.
    let plugin = "import json, os, sys\nsys.stdin.readline()\nprint(json.dumps({'type': 'hello', 'protocol': 1, 'name': os.path.basename(os.getcwd())}), flush=True)\nfor line in sys.stdin:\n    print(json.dumps({'type': 'edit', 'edit': None}), flush=True)\n";
    write(&folder, "where_am_i.py", plugin);
    let base = std::fs::read_to_string(repo().join("scenarios/one-shot-answer.yaml")).unwrap();
    let recording = repo().join("recordings/one-shot-answer.yaml");
    let text = base
        .replace("recording: ../recordings/one-shot-answer.yaml", &format!("recording: {}", recording.display()))
        .replace("loop:\n  step_budget: 8\n", "loop:\n  step_budget: 8\n  strategy: where_am_i.py\n");
    assert!(text.contains("where_am_i.py") && text.contains(&recording.display().to_string()), "the base scenario has these lines");
    let scenario = write(&folder, "s.yaml", &text);
    let out = dir.path().join("report");
    let output = reloop(dir.path(), &["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let runs = read_rows(&out.join("runs.parquet"));
    assert_eq!((runs[0]["outcome"].as_str(), runs[0]["strategy"].as_str()), ("final_answer", "the-scenarios-folder"));
}

/// The long microcompaction scenario, in `dir`, under the misbehaving
/// fixture plug-in with `fault` at `at_step`, answering within 5 s (time
/// enough for a Python to start on a loaded machine).
fn misbehaving_scenario(dir: &Path, fault: &str, at_step: u32) -> PathBuf {
    let base = std::fs::read_to_string(repo().join("scenarios/long-session-microcompaction.yaml")).unwrap();
    let recording = repo().join("recordings/long-session-microcompaction.yaml");
    let plugin = repo().join("harness/cli/tests/data/strategies/misbehaving.py");
    let strategy = format!("  strategy: {{ command: [python3, {}], timeout_secs: 5, settings: {{ fault: {fault}, at_step: {at_step} }} }}\n", plugin.display());
    let text = base
        .replace("name: long-session-microcompaction", &format!("name: plugin-{fault}"))
        .replace("recording: ../recordings/long-session-microcompaction.yaml", &format!("recording: {}", recording.display()))
        .replace("loop:\n  step_budget: 25\n", &format!("loop:\n  step_budget: 25\n{strategy}"));
    assert!(text.contains("misbehaving.py") && text.contains(&recording.display().to_string()), "the base scenario still has these lines");
    write(dir, &format!("{fault}.yaml"), &text)
}

#[test]
fn each_plugin_failure_ends_only_its_run_as_strategy_error_naming_the_step_and_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    let faults = [
        ("crash", 2, "at step 2: exited (exit status: 1) without answering; its stderr ends: "),
        ("garbage", 0, "at step 0: answered `certainly! here is the edit you asked for`, which is not a protocol line (expected value"),
        (
            "wrong_shape",
            0,
            "at step 0: answered `{\"type\": \"edit\", \"edit\": {\"kind\": \"fold\", \"range\": [0, 1]}}`, which is not a protocol line (unknown variant `fold`",
        ),
        ("wrong_version", 0, "at step 0: its hello speaks protocol 2; this reloop speaks 1"),
        ("silent", 0, "at step 0: did not answer within 5 s"),
        ("missing", 0, "at step 0: asked for an edit that cannot be made: mask names message 999, which does not exist (the transcript has 1)"),
    ];
    for (fault, at_step, _) in faults {
        misbehaving_scenario(&suite, fault, at_step);
    }
    std::fs::copy(repo().join("scenarios/long-session-microcompaction.yaml"), suite.join("healthy.yaml")).unwrap();
    let healthy = std::fs::read_to_string(suite.join("healthy.yaml")).unwrap();
    let recording = repo().join("recordings/long-session-microcompaction.yaml");
    write(
        &suite,
        "healthy.yaml",
        &healthy.replace("recording: ../recordings/long-session-microcompaction.yaml", &format!("recording: {}", recording.display())),
    );

    let out = dir.path().join("report");
    let output = reloop(dir.path(), &["run", suite.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "the failed runs fail the batch: {}", stderr(&output));
    let printed = stdout(&output);
    assert!(printed.contains("at step 2: exited (exit status: 1) without answering"), "the terminal says why, under the run: {printed}");

    let runs = read_rows(&out.join("runs.parquet"));
    let run = |name: &str| runs.iter().find(|r| r["scenario"] == name).unwrap_or_else(|| panic!("{name} has a row: {runs:?}"));
    assert_eq!(run("long-session-microcompaction")["outcome"], "final_answer", "the healthy run of the batch went on");
    for (fault, _, expected) in faults {
        let row = run(&format!("plugin-{fault}"));
        assert_eq!(row["outcome"], "strategy_error", "{fault}: {row:?}");
        let error = &row["error"];
        assert!(error.starts_with("strategy plug-in `python3 ") && error.contains(expected), "{fault}: {error}");
    }
    assert!(run("plugin-crash")["error"].contains("RuntimeError: planted crash at step 2"), "the stderr's tail is quoted");
    let steps = read_rows(&out.join("steps.parquet"));
    assert_eq!(steps.iter().filter(|s| s["scenario"] == "plugin-crash").count(), 2, "the steps before the crash are kept");

    // Every plug-in was killed and reaped with its run: none is left running.
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains("misbehaving.py"))
        .collect();
    assert!(left.is_empty(), "plug-ins left running: {left:?}");
}
