//! The replay workload the floor bench compares: `scenarios` generated
//! scenarios of `steps` model decisions each, one tool call per step whose
//! result is `result_chars` characters long, then a final answer. The same
//! conversation, step for step, is what the floor sends.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The system prompt of every generated conversation.
pub const SYSTEM: &str = "You are a coding agent.";
/// The user's task.
pub const TASK: &str = "Read every module.";
/// The one tool.
pub const TOOL: &str = "read_file";
/// The final answer.
pub const ANSWER: &str = "Every module is read; nothing to change.";

/// A batch of generated conversations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    /// Conversations (scenarios).
    pub scenarios: usize,
    /// Model decisions per conversation, the last one the answer.
    pub steps: u32,
    /// Characters of every tool result.
    pub result_chars: usize,
    /// The scenarios' context window in tokens: [`Workload::UNBOUNDED`]
    /// for the floor comparison, small enough to compact for a sweep.
    pub context_window: u64,
}

impl Workload {
    /// A window no generated conversation reaches: nothing is compacted.
    pub const UNBOUNDED: u64 = 100_000_000;

    /// The arguments of the tool call at `step` (1-based): a new path each
    /// step, so that no doom-loop detector fires.
    pub fn arguments(step: u32) -> String {
        format!("{{\"path\":\"src/module_{step}.rs\"}}")
    }

    /// The tool result every call gets: Rust-like source, `result_chars` long.
    pub fn tool_output(&self) -> String {
        const LINE: &str =
            "pub fn handle(request: &Request) -> Result<Response, Error> { let user = authenticate(request)?; Ok(Response::ok(render(&user))) }\n";
        LINE.chars().cycle().take(self.result_chars).collect()
    }

    /// Writes the recording and one scenario file per conversation into
    /// `dir` (strategy `none`, OpenAI Chat wire); returns the scenario paths.
    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        let mut recording = String::from("format: reloop.recording/v1\nexchanges:\n");
        for step in 1..self.steps {
            writeln!(recording, "  - tool_calls: [ {{ name: {TOOL}, arguments: {} }} ]", Self::arguments(step)).expect("a String takes writes");
        }
        writeln!(recording, "  - text: {ANSWER}").expect("a String takes writes");
        std::fs::write(dir.join("recording.yaml"), recording)?;
        let output = serde_json::to_string(&self.tool_output()).expect("a string serializes");
        (0..self.scenarios)
            .map(|index| {
                let scenario = format!(
                    "name: generated-{index:05}\nwire: openai-chat\nmodel: gpt-4o\ncontext_window: {window}\nsystem: {SYSTEM}\ntask: {TASK}\n\
                     recording: recording.yaml\nloop: {{ step_budget: {budget}, strategy: none }}\n\
                     tools:\n  {TOOL}:\n    description: Read a file\n    results: [ {{ output: {output} }} ]\n\
                     expect: {{ outcome: final_answer }}\n",
                    budget = self.steps + 1,
                    window = self.context_window,
                );
                let path = dir.join(format!("generated-{index:05}.yaml"));
                std::fs::write(&path, scenario)?;
                Ok(path)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use reloop_eval::sweep::{RunVariant, StrategyName, Variant};
    use reloop_eval::{Plan, RunOptions, run_all};

    use super::*;

    #[test]
    fn every_generated_scenario_replays_to_its_answer_in_its_steps() {
        let dir = tempfile::tempdir().unwrap();
        let workload = Workload { scenarios: 3, steps: 4, result_chars: 300, context_window: Workload::UNBOUNDED };
        assert_eq!(workload.tool_output().chars().count(), 300);
        assert_eq!(workload.write(dir.path()).unwrap().len(), 3);
        let variants = vec![RunVariant::Swept(Variant::of_strategy(StrategyName::None))];
        let plan = Plan::validate(&[dir.path().to_owned()], variants).unwrap();
        let reports = Mutex::new(Vec::new());
        run_all(&plan, &RunOptions { jobs: 2, cancel: Default::default(), live: None }, &|_, report| reports.lock().unwrap().push(report)).unwrap();
        let reports = reports.into_inner().unwrap();
        assert_eq!(reports.len(), 3);
        for report in reports {
            assert!(report.passed, "{:?} {:?}", report.outcome, report.failed_expectations);
            assert_eq!(report.metrics.steps_used, 4);
            assert_eq!(report.final_answer.as_deref(), Some(ANSWER));
            assert_eq!(report.metrics.tool_calls, 3);
        }
    }
}
