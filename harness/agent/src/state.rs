//! The loop's mutable state (Roku's `LoopState`) and its per-step records.

use reloop_wire::{FinishReason, Usage};

use crate::doom_loop::{DoomLoop, DoomLoopKind};
use crate::message::Message;
use crate::outcome::Outcome;

/// Whether the loop goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopStatus {
    /// Another step follows.
    Running,
    /// The run ended this way.
    Finished(Outcome),
}

/// Why a model call was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallPurpose {
    /// A main-loop decision.
    Main,
    /// The step budget's last, tool-less turn.
    FinalTurn,
    /// The same request again with a larger output slot after `length`.
    Escalation,
    /// A summary for compaction (Layers 3 and 4).
    Compaction,
}

impl CallPurpose {
    /// Every purpose, in the reports' column order.
    pub const ALL: [Self; 4] = [Self::Main, Self::FinalTurn, Self::Escalation, Self::Compaction];

    /// The purpose named `name` in a report ([`CallPurpose::as_str`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|purpose| purpose.as_str() == name)
    }

    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::FinalTurn => "final_turn",
            Self::Escalation => "escalation",
            Self::Compaction => "compaction",
        }
    }
}

/// One HTTP call to the model (retries are calls of their own) and what
/// came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// 0-based step index.
    pub step: u32,
    /// Why the call was made.
    pub purpose: CallPurpose,
    /// 0 for the first try, then 1, 2, … for retries.
    pub attempt: u32,
    /// The failure class when the call failed.
    pub error: Option<&'static str>,
    /// How many transcript messages the request covered; with
    /// `system_prompt` this rebuilds the uncompacted request exactly.
    pub transcript_len: usize,
    /// Index into [`LoopState::system_prompts`] of the prompt sent.
    pub system_prompt: usize,
    /// Index into [`LoopState::tool_sets`] of the tools declared.
    pub tool_set: usize,
    /// The loop's estimate of the prompt it sent.
    pub estimated_input_tokens: u64,
    /// The loop's estimate (uncalibrated) of the same call with nothing
    /// compacted: a running sum kept beside the transcript, so free.
    pub estimated_uncompacted_input_tokens: u64,
    /// Usage as the provider reported it (absent if the call failed).
    pub usage: Option<Usage>,
    /// Why the model stopped (absent if the call failed).
    pub finish_reason: Option<FinishReason>,
    /// Names of the tools the model called, in order.
    pub tool_calls: Vec<String>,
    /// The causes when the loop's detector saw this request break the
    /// prompt cache (`tools`, `system`, `model`, `history`).
    pub cache_break: Option<Vec<&'static str>>,
    /// Clock at the start of the call, ms.
    pub started_ms: u64,
    /// Clock when the response was complete, ms.
    pub finished_ms: u64,
    /// Set when a sub-agent made the call: which one, for which parent call.
    pub sub_agent: Option<SubAgentLink>,
}

/// Where a sub-agent's call sits in its parent's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubAgentLink {
    /// Index of the child's state in [`LoopState::sub_agents`].
    pub child: usize,
    /// The parent's step whose `Agent` call started the child.
    pub parent_step: u32,
    /// The id of that `Agent` call.
    pub parent_call_id: String,
}

/// A doom loop as first detected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoomLoopHit {
    /// The step of detection.
    pub step: u32,
    /// What was detected.
    pub detected: DoomLoop,
}

/// Everything the loop knows about its run. The transcript only grows.
#[derive(Debug, Clone)]
pub struct LoopState {
    /// The current step (0-based).
    pub step_index: u32,
    /// Model decisions left, the current one included.
    pub remaining_step_budget: u32,
    /// Running or how it ended.
    pub status: LoopStatus,
    /// The full conversation (without the system prompt).
    pub transcript: Vec<Message>,
    /// One record per model call, retries included.
    pub calls: Vec<CallRecord>,
    /// Distinct system prompts in the order they were first used.
    pub system_prompts: Vec<String>,
    /// The tool sets declared, each kept once while it lasts (a set changes
    /// with discovered deferred tools; summaries declare none).
    pub tool_sets: Vec<Vec<crate::tools::ToolSpec>>,
    /// Summed provider usage.
    pub usage: Usage,
    /// The answer, when the run ended with one.
    pub final_answer: Option<String>,
    /// The question, when the run ended waiting for the user.
    pub pending_question: Option<String>,
    /// The error text, when the run ended on an error.
    pub error: Option<String>,
    /// The first doom loop detected, if any.
    pub doom_loop: Option<DoomLoopHit>,
    /// The step each detector first fired at, in the order they fired.
    pub doom_loop_first_steps: Vec<(DoomLoopKind, u32)>,
    /// Retries of failed model calls.
    pub llm_retries: u32,
    /// Real tool calls executed (pseudo-tools excluded).
    pub tool_calls: u32,
    /// Of those, how many returned an error.
    pub tool_errors: u32,
    /// Cache breaks the detector reported.
    pub cache_breaks: u32,
    /// Most tools that ran side by side.
    pub max_parallel_tools: u32,
    /// The task tools' checklist.
    pub tasks: crate::task_store::TaskStore,
    /// The sub-agents' own states (their transcripts and system prompts),
    /// in the order they ran; their calls are moved into [`Self::calls`].
    pub sub_agents: Vec<LoopState>,
    /// Deferred tools `tool_search` made visible, in the order found.
    pub discovered_tools: Vec<String>,
}

impl LoopState {
    /// A fresh state for `task` with `step_budget` decisions.
    pub fn new(task: &str, step_budget: u32) -> Self {
        Self {
            step_index: 0,
            remaining_step_budget: step_budget,
            status: LoopStatus::Running,
            transcript: vec![Message::user(task)],
            calls: Vec::new(),
            system_prompts: Vec::new(),
            tool_sets: Vec::new(),
            usage: Usage::default(),
            final_answer: None,
            pending_question: None,
            error: None,
            doom_loop: None,
            doom_loop_first_steps: Vec::new(),
            llm_retries: 0,
            tool_calls: 0,
            tool_errors: 0,
            cache_breaks: 0,
            max_parallel_tools: 0,
            tasks: crate::task_store::TaskStore::default(),
            sub_agents: Vec::new(),
            discovered_tools: Vec::new(),
        }
    }

    /// Notes a detection: the run's first, and each detector's first.
    pub fn record_doom_loop(&mut self, hit: DoomLoopHit) {
        if !self.doom_loop_first_steps.iter().any(|(kind, _)| *kind == hit.detected.kind) {
            self.doom_loop_first_steps.push((hit.detected.kind, hit.step));
        }
        self.doom_loop.get_or_insert(hit);
    }

    /// Whether the run has ended.
    pub fn is_finished(&self) -> bool {
        matches!(self.status, LoopStatus::Finished(_))
    }

    /// Ends the run.
    pub fn finish(&mut self, outcome: Outcome) {
        self.status = LoopStatus::Finished(outcome);
    }

    /// The outcome, once finished.
    pub fn outcome(&self) -> Option<Outcome> {
        match self.status {
            LoopStatus::Running => None,
            LoopStatus::Finished(outcome) => Some(outcome),
        }
    }

    /// Index of `prompt` in `system_prompts`, adding it when new.
    pub fn intern_system_prompt(&mut self, prompt: String) -> usize {
        if let Some(index) = self.system_prompts.iter().position(|p| *p == prompt) {
            return index;
        }
        self.system_prompts.push(prompt);
        self.system_prompts.len() - 1
    }

    /// Main-loop decisions the model made (failed calls, retries and
    /// escalations excluded): the `steps_used` column of `docs/metrics.md`.
    pub fn steps_used(&self) -> u32 {
        let decided =
            self.calls.iter().filter(|c| c.error.is_none() && c.sub_agent.is_none() && matches!(c.purpose, CallPurpose::Main | CallPurpose::FinalTurn));
        decided.count() as u32
    }

    /// The transcript, system prompt and tools a call was made from: the
    /// run's, or its sub-agent's.
    pub fn context_of(&self, call: &CallRecord) -> (&[Message], &str, &[crate::tools::ToolSpec]) {
        let owner = call.sub_agent.as_ref().map_or(self, |link| &self.sub_agents[link.child]);
        (&owner.transcript, &owner.system_prompts[call.system_prompt], &owner.tool_sets[call.tool_set])
    }

    /// Index of `tools` in `tool_sets`: the last set when it is the same
    /// (the usual case, a comparison without a copy), else a new entry.
    pub fn intern_tool_set(&mut self, tools: &[crate::tools::ToolSpec]) -> usize {
        if self.tool_sets.last().is_none_or(|last| last.as_slice() != tools) {
            self.tool_sets.push(tools.to_vec());
        }
        self.tool_sets.len() - 1
    }

    /// Adds provider usage to the totals.
    pub fn add_usage(&mut self, usage: &Usage) {
        self.usage.input_tokens += usage.input_tokens;
        self.usage.output_tokens += usage.output_tokens;
        self.usage.cache_read_tokens += usage.cache_read_tokens;
        self.usage.cache_write_tokens += usage.cache_write_tokens;
    }
}
