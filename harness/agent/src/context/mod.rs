//! The context economy (`docs/architecture.md`, "Adding a strategy"): named
//! compaction strategies behind one trait, so researchers can compare them
//! on the same recordings.
//!
//! Each step the loop asks its [`ContextStrategy`] for edits to the
//! [`ContextView`] until it has none, applying each and measuring it; after
//! a context-window error it asks once for a reactive edit (Layer 4) and
//! retries the call once. An LLM summary ([`Edit::Summarize`]) is requested
//! through the same provider; when it fails, times out, or the circuit
//! breaker has tripped, the mechanical session memory takes its place.
//!
//! Strategies: [`roku`] (layers 0–4, the default), [`opencode`], [`codex`],
//! [`masking`], `none`, and [`native`] (the provider's own context
//! management, asked for by the client). Each keeps its constants in its own module,
//! with their source. A [`plugin`] is a strategy in another process, in any
//! language, behind the same trait (`docs/strategies.md`).

pub mod codex;
pub mod masking;
pub mod microcompact;
pub mod native;
pub mod notes;
pub mod opencode;
pub mod plugin;
pub mod roku;
mod rounds;
mod spec;
pub mod view;

use std::ops::Range;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use rounds::Rounds;
pub use spec::StrategySpec;
pub use view::{ContextView, ShownItem, ViewItem};

use crate::message::Message;

/// A change to the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Show these tool results (transcript index, placeholder) masked.
    Mask {
        /// 0 when planned, 4 when reactive.
        layer: u8,
        /// What to mask.
        results: Vec<(usize, String)>,
    },
    /// Replace each of these view ranges (tool rounds) by a one-line note
    /// per call (Layer 1).
    Collapse {
        /// Disjoint item ranges, in order.
        rounds: Vec<Range<usize>>,
    },
    /// Replace a view range by the mechanical session memory (Layer 2).
    Memory {
        /// The item range.
        range: Range<usize>,
    },
    /// Replace a view range by a model-written summary (Layer 3, or 4 when
    /// reactive), keeping some user messages verbatim before it.
    Summarize {
        /// 3 when planned, 4 when reactive.
        layer: u8,
        /// The item range summarized.
        range: Range<usize>,
        /// Transcript indices of user messages kept whole, before the summary.
        keep_users: Vec<usize>,
    },
}

impl Edit {
    /// The compaction layer the edit belongs to, as reported.
    pub fn layer(&self) -> u8 {
        match self {
            Self::Mask { layer, .. } | Self::Summarize { layer, .. } => *layer,
            Self::Collapse { .. } => 1,
            Self::Memory { .. } => 2,
        }
    }
}

/// What a strategy sees when it plans.
#[derive(Debug)]
pub struct StrategyContext<'a> {
    /// The full transcript.
    pub transcript: &'a [Message],
    /// The view as it stands.
    pub view: &'a ContextView,
    /// The loop's estimate of the whole request (system and tools included).
    pub estimated_tokens: u64,
    /// The model's context window.
    pub window: u64,
    /// The output slot requested per call.
    pub max_output_tokens: u32,
    /// The current step.
    pub step: u32,
}

impl StrategyContext<'_> {
    /// The view's tool rounds and cut points.
    pub fn rounds(&self) -> Rounds {
        Rounds::of(self.view, self.transcript)
    }

    /// Estimated tokens of view item `position`, framing included.
    pub fn item_tokens(&self, position: usize) -> u64 {
        self.view.item_tokens(position)
    }
}

/// Why a strategy could not plan: only a [`plugin`] fails (it crashed,
/// answered garbage, timed out or named a message that does not exist); the
/// run ends with outcome `strategy_error` and this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StrategyError(pub String);

/// What planning gives: the next edit, none when the view is ready, or the
/// strategy's failure.
pub type Planned = Result<Option<Edit>, StrategyError>;

/// A compaction strategy.
pub trait ContextStrategy: Send {
    /// The name reported with every compaction (a plug-in's is the one its
    /// handshake declares).
    fn name(&self) -> &str;
    /// Notes a tool result appended at transcript `index` (for incremental
    /// bookkeeping).
    fn on_tool_result(&mut self, index: usize) {
        let _ = index;
    }
    /// The next edit before a call, or `None` when the view is ready. Called
    /// repeatedly within a step, with a fresh context after each edit.
    fn plan(&mut self, context: &StrategyContext<'_>) -> Planned;
    /// The edit after the provider rejected the context (Layer 4); `None`
    /// gives up.
    fn plan_reactive(&mut self, context: &StrategyContext<'_>) -> Planned;
}

/// The built-in strategies by name. A new one is a module and a variant
/// here (with its arm in [`StrategyName::ALL`], [`StrategyName::as_str`] and
/// [`build`]); the command line and the scenario format read this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StrategyName {
    /// Roku's layers 0–4 (the seeds' loop).
    #[default]
    Roku,
    /// OpenCode's pruning and summary on overflow.
    Opencode,
    /// Codex's auto-compaction at 90 %.
    Codex,
    /// Observation masking (keep the last M tool results).
    Masking,
    /// No compaction at all.
    None,
    /// The provider's own: Anthropic context editing, Responses compaction.
    Native,
}

impl StrategyName {
    /// Every built-in strategy, in the order `--help` lists them.
    pub const ALL: [StrategyName; 6] = [Self::Roku, Self::Opencode, Self::Codex, Self::Masking, Self::None, Self::Native];

    /// The strategy named `name`, if it is a built-in one.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|strategy| strategy.as_str() == name)
    }

    /// The name as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Roku => "roku",
            Self::Opencode => "opencode",
            Self::Codex => "codex",
            Self::Masking => "masking",
            Self::None => "none",
            Self::Native => "native",
        }
    }
}

/// Tuned constants of every strategy; only the chosen one is used.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct StrategyTuning {
    /// Roku's constants.
    pub roku: roku::RokuConfig,
    /// OpenCode's constants.
    pub opencode: opencode::OpencodeConfig,
    /// Codex's constants.
    pub codex: codex::CodexConfig,
    /// Masking's constants.
    pub masking: masking::MaskingConfig,
    /// The policy `native` asks the provider for.
    pub native: native::NativeConfig,
}

/// No compaction by the loop: `none`, the baseline every strategy is
/// compared with, and `native`, where the provider does it ([`native`]).
#[derive(Debug)]
pub struct NoCompaction {
    name: StrategyName,
}

impl ContextStrategy for NoCompaction {
    fn name(&self) -> &str {
        self.name.as_str()
    }
    fn plan(&mut self, _: &StrategyContext<'_>) -> Planned {
        Ok(None)
    }
    fn plan_reactive(&mut self, _: &StrategyContext<'_>) -> Planned {
        Ok(None)
    }
}

/// The strategy `spec` names, with the built-ins' constants from `tuning`
/// (a plug-in is sent them too); a plug-in runs in `plugin_dir`.
pub fn build(spec: &StrategySpec, tuning: &StrategyTuning, plugin_dir: &std::path::Path) -> Box<dyn ContextStrategy> {
    let plugin = |command| -> Box<dyn ContextStrategy> { Box::new(plugin::PluginStrategy::new(command, tuning.clone(), plugin_dir.to_owned())) };
    match spec {
        StrategySpec::Builtin(name) => build_builtin(*name, tuning),
        StrategySpec::File(file) => plugin(plugin::PluginCommand::for_file(file)),
        StrategySpec::Command(command) => plugin((**command).clone()),
    }
}

/// The built-in strategy `name` with its constants from `tuning`.
fn build_builtin(name: StrategyName, tuning: &StrategyTuning) -> Box<dyn ContextStrategy> {
    match name {
        StrategyName::Roku => Box::new(roku::Roku::new(tuning.roku)),
        StrategyName::Opencode => Box::new(opencode::Opencode::new(tuning.opencode)),
        StrategyName::Codex => Box::new(codex::Codex::new(tuning.codex)),
        StrategyName::Masking => Box::new(masking::Masking::new(tuning.masking)),
        StrategyName::None | StrategyName::Native => Box::new(NoCompaction { name }),
    }
}
