//! The scenario file as written (`docs/scenario-format.md`): the serde
//! types that read it, write it (`reloop import`, the skeletons of `record`
//! and `serve --capture`) and give its JSON Schema. Loading it with its
//! recording, and the checks across files, are `reloop_eval::scenario`'s.

pub mod agent;
pub mod spec;

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::spec::ScenarioSpec;
    use crate::kind::{FileKind, files_below};

    /// Every bundled scenario (faults, agents, loop settings, fixtures of
    /// every shape) reads, writes and reads back equal: the one type writes
    /// what it reads.
    #[test]
    fn every_bundled_scenario_writes_and_reads_back_equal() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let (files, _) = files_below(&root, FileKind::Scenario, true).unwrap();
        assert!(files.len() > 20, "the bundled suite is there: {files:?}");
        for file in files {
            let read: ScenarioSpec = crate::yaml::load(&file).unwrap();
            let written = serde_saphyr::to_string(&read).unwrap();
            let again: ScenarioSpec =
                crate::yaml::parse(&PathBuf::from("written.yaml"), &written).unwrap_or_else(|e| panic!("{}: {e}\n{written}", file.display()));
            assert_eq!(again, read, "{}:\n{written}", file.display());
        }
    }

    #[test]
    fn a_written_scenario_says_only_what_it_sets() {
        let text = "model: m\ntask: t\nrecording: r.yaml\nloop: { step_budget: 7, strategies: { roku: { keep_recent_rounds: 2 } } }\n";
        let spec: ScenarioSpec = crate::yaml::parse(Path::new("s.yaml"), text).unwrap();
        let written = serde_saphyr::to_string(&spec).unwrap();
        let expected_lines = [
            "wire: openai-chat",
            "model: m",
            "context_window: 128000",
            "task: t",
            "recording: r.yaml",
            "loop:",
            "  step_budget: 7",
            "  strategies:",
            "    roku:",
            "      keep_recent_rounds: 2",
        ];
        assert_eq!(written.lines().collect::<Vec<_>>(), expected_lines, "{written}");
    }
}
