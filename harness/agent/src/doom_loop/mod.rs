//! Doom-loop detection: three detectors over the sequence of tool calls.
//!
//! - [`identical`]: OpenCode's rule, the same call `threshold` times in a row;
//! - [`cycle`]: ZeroClaw's cycles, a pattern of 2..k calls repeated m times;
//! - [`no_progress`]: ZeroClaw's varying calls whose results stop changing.
//!
//! The detectors are pure functions over a slice of [`DoomCall`]s (tool name,
//! canonical arguments, result hash), so anything that sees tool calls can
//! run them: the loop through [`DoomLoopDetectors`], the black-box runner over
//! the requests an external agent sends, the `reloop detectors` table.

pub mod canonical;
pub mod cycle;
pub mod identical;
pub mod no_progress;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use canonical::{canonical_arguments, result_hash};
pub use cycle::CycleConfig;
pub use no_progress::NoProgressConfig;

/// What the loop does when it detects a doom loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DoomLoopReaction {
    /// Tell the model it is repeating itself, and go on.
    #[default]
    Warn,
    /// End the run with outcome `doom_loop_stopped`.
    Stop,
}

/// Which detector fired; the name is the report's `doom_loop_kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DoomLoopKind {
    /// The same call repeated.
    IdenticalCalls,
    /// A pattern of calls repeated.
    Cycle,
    /// Varying calls with an unchanging result.
    NoProgress,
}

impl DoomLoopKind {
    /// Every kind, in the order the loop checks them.
    pub const ALL: [Self; 3] = [Self::IdenticalCalls, Self::Cycle, Self::NoProgress];

    /// The snake-case name used in reports and scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::IdenticalCalls => "identical_calls",
            Self::Cycle => "cycle",
            Self::NoProgress => "no_progress",
        }
    }
}

/// Settings of the three detectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DoomLoopConfig {
    /// Identical consecutive calls that make a loop (OpenCode: 3).
    pub threshold: usize,
    /// What to do about it.
    pub reaction: DoomLoopReaction,
    /// The detectors that run (all three by default).
    pub detectors: Vec<DoomLoopKind>,
    /// The cycle detector's settings.
    pub cycle: CycleConfig,
    /// The no-progress detector's settings.
    pub no_progress: NoProgressConfig,
}

impl Default for DoomLoopConfig {
    fn default() -> Self {
        Self {
            threshold: 3,
            reaction: DoomLoopReaction::Warn,
            detectors: DoomLoopKind::ALL.to_vec(),
            cycle: CycleConfig::default(),
            no_progress: NoProgressConfig::default(),
        }
    }
}

/// One tool call as the detectors see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoomCall {
    /// The tool's name.
    pub tool: String,
    /// The arguments in [`canonical_arguments`] form.
    pub arguments: String,
    /// The [`result_hash`] of its result; `None` until it ran, or when the
    /// result says nothing about progress (a write's acknowledgement).
    pub result_hash: Option<u64>,
}

impl DoomCall {
    /// The same tool with the same arguments (results aside).
    pub fn same_call(&self, other: &Self) -> bool {
        self.tool == other.tool && self.arguments == other.arguments
    }

    /// The same call, and where both results are known, the same result: a
    /// poll whose answer changes is waiting, not looping.
    pub fn repeats(&self, earlier: &Self) -> bool {
        let results_agree = match (self.result_hash, earlier.result_hash) {
            (Some(now), Some(then)) => now == then,
            _ => true,
        };
        self.same_call(earlier) && results_agree
    }
}

/// A detected loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoomLoop {
    /// The detector that fired.
    pub kind: DoomLoopKind,
    /// The first tool of the repeated call or pattern (the newest call's tool
    /// for no progress).
    pub tool: String,
    /// Calls in the run (identical, no progress) or patterns (cycle).
    pub repeats: usize,
    /// The pattern's length (1 unless a cycle).
    pub period: usize,
    /// Index in the history of the loop's first call: where it began.
    pub started_at: usize,
}

impl DoomLoop {
    /// A loop of the newest `run` calls of `history`, each its own pattern
    /// (identical calls, no progress).
    pub fn of_run(kind: DoomLoopKind, history: &[DoomCall], run: usize) -> Option<Self> {
        let last = history.last()?;
        Some(Self { kind, tool: last.tool.clone(), repeats: run, period: 1, started_at: history.len() - run })
    }
}

/// The loop's history of calls and the detectors run over it.
#[derive(Debug)]
pub struct DoomLoopDetectors {
    config: DoomLoopConfig,
    history: Vec<DoomCall>,
}

impl DoomLoopDetectors {
    /// Detectors with `config`, over an empty history.
    pub fn new(config: DoomLoopConfig) -> Self {
        Self { config, history: Vec::new() }
    }

    /// Records a call about to run; returns the loop it completes, judged by
    /// the detectors that need no result (identical calls, then cycles).
    pub fn observe_call(&mut self, tool: &str, arguments: &str) -> Option<DoomLoop> {
        self.history.push(DoomCall { tool: tool.to_owned(), arguments: canonical_arguments(arguments), result_hash: None });
        self.check(&[DoomLoopKind::IdenticalCalls, DoomLoopKind::Cycle])
    }

    /// Records the result of the `calls_back`-th newest call (0 = newest),
    /// `None` for a result that says nothing about progress; returns the
    /// no-progress loop it completes. Results of a batch arrive in call
    /// order after all of its calls were observed.
    pub fn observe_result(&mut self, calls_back: usize, result_hash: Option<u64>) -> Option<DoomLoop> {
        let index = self.history.len().checked_sub(calls_back + 1)?;
        self.history[index].result_hash = result_hash;
        detect(&self.config, DoomLoopKind::NoProgress, &self.history[..=index])
    }

    /// Runs the enabled detectors among `kinds`, in order, on the history.
    fn check(&self, kinds: &[DoomLoopKind]) -> Option<DoomLoop> {
        kinds.iter().find_map(|kind| detect(&self.config, *kind, &self.history))
    }

    /// Every loop found when `calls` (results known) are observed one by
    /// one: pairs of (index of the call that completed it, the loop). The
    /// entry point for anything that holds a finished sequence of calls.
    pub fn scan(config: &DoomLoopConfig, calls: &[DoomCall]) -> Vec<(usize, DoomLoop)> {
        (1..=calls.len())
            .flat_map(|n| DoomLoopKind::ALL.into_iter().filter_map(move |kind| detect(config, kind, &calls[..n]).map(|hit| (n - 1, hit))))
            .collect()
    }
}

/// Runs detector `kind` if `config` enables it.
fn detect(config: &DoomLoopConfig, kind: DoomLoopKind, history: &[DoomCall]) -> Option<DoomLoop> {
    if !config.detectors.contains(&kind) {
        return None;
    }
    match kind {
        DoomLoopKind::IdenticalCalls => identical::check(config.threshold, history),
        DoomLoopKind::Cycle => cycle::check(&config.cycle, history),
        DoomLoopKind::NoProgress => no_progress::check(&config.no_progress, history),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Calls named `names`, each with empty arguments and no result.
    pub(crate) fn calls(names: &[&str]) -> Vec<DoomCall> {
        names.iter().map(|name| DoomCall { tool: (*name).to_owned(), arguments: "{}".into(), result_hash: None }).collect()
    }

    #[test]
    fn key_order_does_not_hide_a_loop() {
        let mut d = DoomLoopDetectors::new(DoomLoopConfig::default());
        d.observe_call("grep", r#"{"a":1,"b":2}"#);
        d.observe_call("grep", r#"{ "b" : 2, "a":1}"#);
        let hit = d.observe_call("grep", r#"{"a":1,"b":2}"#).expect("third identical call");
        assert_eq!((hit.kind, hit.repeats), (DoomLoopKind::IdenticalCalls, 3));
    }

    #[test]
    fn results_of_a_batch_complete_a_no_progress_window() {
        let mut d = DoomLoopDetectors::new(DoomLoopConfig::default());
        for page in 0..4 {
            assert_eq!(d.observe_call("read", &format!(r#"{{"page":{page}}}"#)), None);
        }
        assert_eq!(d.observe_result(3, Some(9)), None);
        assert_eq!(d.observe_result(2, Some(9)), None);
        assert_eq!(d.observe_result(1, Some(9)), None);
        assert_eq!(d.observe_result(0, Some(9)).map(|hit| hit.kind), Some(DoomLoopKind::NoProgress));
    }

    #[test]
    fn a_detector_left_out_of_the_list_never_fires() {
        let config = DoomLoopConfig { detectors: vec![DoomLoopKind::Cycle], ..Default::default() };
        let mut d = DoomLoopDetectors::new(config);
        assert!((0..6).all(|_| d.observe_call("a", "{}").is_none()));
    }

    #[test]
    fn scan_reports_each_detector_where_it_fires() {
        let mut calls = calls(&["a", "b", "a", "b", "a", "b", "c", "c", "c"]);
        for call in &mut calls {
            call.result_hash = Some(u64::from(call.tool.as_bytes()[0]));
        }
        let found: Vec<(usize, DoomLoopKind)> = DoomLoopDetectors::scan(&DoomLoopConfig::default(), &calls).into_iter().map(|(i, hit)| (i, hit.kind)).collect();
        assert_eq!(found, vec![(5, DoomLoopKind::Cycle), (8, DoomLoopKind::IdenticalCalls)]);
    }
}
