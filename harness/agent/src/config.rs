//! The loop's settings, with the constants of the systems they come from.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::doom_loop::DoomLoopConfig;

/// Loop settings that scenarios may tune.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LoopSettings {
    /// Main-loop model decisions allowed (Roku's step budget).
    pub step_budget: u32,
    /// The context window of the model, in tokens. Set by the embedding
    /// application (scenarios set it once, at top level), never in `loop:`.
    #[serde(skip)]
    pub context_window: u64,
    /// The output slot requested per call (`max_tokens`).
    pub max_output_tokens: u32,
    /// The compaction strategy: a built-in's name or a plug-in.
    pub strategy: crate::context::StrategySpec,
    /// Tuned constants of the strategies.
    pub strategies: crate::context::StrategyTuning,
    /// Where a plug-in strategy runs (its working directory): the
    /// scenario's folder. Set by the embedding application.
    #[serde(skip)]
    pub plugin_dir: std::path::PathBuf,
    /// How long a compaction summary may take, in seconds (Roku's
    /// `COMPACT_LLM_TIMEOUT`: 300); then the mechanical fallback is used.
    pub summary_timeout_secs: u64,
    /// Doom-loop rule and reaction.
    pub doom_loop: DoomLoopConfig,
    /// Advertise `final_answer`, `ask_user` and `fail` to the model.
    pub pseudo_tools: bool,
    /// Longest silence of a model stream, first byte included, in seconds
    /// (Codex: 300). Roku bounds the whole stream at 300 s instead; bounding
    /// silence does not cut a long answer that keeps streaming.
    pub stream_idle_timeout_secs: u64,
    /// Retries of failed model calls.
    pub retry: crate::client::RetryPolicy,
    /// Re-request a `length`-truncated answer with the model's largest
    /// output slot, where the provider honours a client-set slot.
    pub output_slot_escalation: bool,
    /// How a batch of tool calls is scheduled.
    pub tool_execution: ToolExecution,
    /// Where Anthropic requests carry `cache_control` breakpoints.
    pub cache_breakpoints: crate::client::cache_breakpoints::CacheBreakpointSettings,
    /// Advertise Roku's `task_create`, `task_list`, `task_update` and
    /// `task_get`, answered by the loop from the run's task store.
    pub task_tools: bool,
    /// Credential scrubbing and truncation of tool output.
    pub output_guards: crate::output_guard::OutputGuards,
    /// Native tool calls, or tools described in the prompt and calls read
    /// from the text (`text`, for models without native tools).
    pub tool_calling: crate::text_tools::ToolCalling,
    /// Roku's `Agent` sub-agents: whether the tool is declared, and the
    /// child's budget, timeout and result size.
    pub sub_agent: crate::sub_agent::SubAgentSettings,
    /// Roku's deferred tools: above a schema size, only core tools and
    /// `tool_search` are declared.
    pub deferred_tools: crate::deferred_tools::DeferredToolSettings,
}

/// How a batch of tool calls is scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolExecution {
    /// One after another (Roku).
    #[default]
    Serial,
    /// Parallel-safe calls share, others run alone; results keep call order (Codex).
    Parallel,
    /// As `parallel`, but serial when any call of the batch needs approval (ZeroClaw).
    Auto,
}

impl Default for LoopSettings {
    fn default() -> Self {
        Self {
            step_budget: 25,
            context_window: 128_000,
            max_output_tokens: 4_096,
            strategy: crate::context::StrategySpec::default(),
            strategies: crate::context::StrategyTuning::default(),
            plugin_dir: std::path::PathBuf::from("."),
            summary_timeout_secs: 300,
            doom_loop: DoomLoopConfig::default(),
            pseudo_tools: true,
            stream_idle_timeout_secs: 300,
            retry: crate::client::RetryPolicy::default(),
            output_slot_escalation: true,
            tool_execution: ToolExecution::Serial,
            cache_breakpoints: crate::client::cache_breakpoints::CacheBreakpointSettings::default(),
            task_tools: false,
            output_guards: crate::output_guard::OutputGuards::default(),
            tool_calling: crate::text_tools::ToolCalling::Native,
            sub_agent: crate::sub_agent::SubAgentSettings::default(),
            deferred_tools: crate::deferred_tools::DeferredToolSettings::default(),
        }
    }
}

impl LoopSettings {
    /// The stream idle timeout as a duration.
    pub fn stream_idle_timeout(&self) -> Duration {
        Duration::from_secs(self.stream_idle_timeout_secs)
    }

    /// A sub-agent's settings: these, with the child's step budget and
    /// without the `Agent` tool (depth 1).
    pub fn sub_agent_settings(&self) -> Self {
        let sub_agent = crate::sub_agent::SubAgentSettings { enabled: false, ..self.sub_agent };
        Self { step_budget: self.sub_agent.step_budget, sub_agent, ..self.clone() }
    }

    /// Whether tools are described in the prompt and calls read from text.
    pub fn text_tool_calling(&self) -> bool {
        self.tool_calling == crate::text_tools::ToolCalling::Text
    }
}
