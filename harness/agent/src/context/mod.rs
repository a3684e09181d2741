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
//! with their source.

pub mod codex;
pub mod masking;
pub mod microcompact;
pub mod native;
pub mod notes;
pub mod opencode;
pub mod roku;
mod rounds;
pub mod view;

use std::ops::Range;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use rounds::Rounds;
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

/// A compaction strategy.
pub trait ContextStrategy: Send {
    /// The name reported with every compaction.
    fn name(&self) -> &'static str;
    /// Notes a tool result appended at transcript `index` (for incremental
    /// bookkeeping).
    fn on_tool_result(&mut self, index: usize) {
        let _ = index;
    }
    /// The next edit before a call, or `None` when the view is ready. Called
    /// repeatedly within a step, with a fresh context after each edit.
    fn plan(&mut self, context: &StrategyContext<'_>) -> Option<Edit>;
    /// The edit after the provider rejected the context (Layer 4); `None`
    /// gives up.
    fn plan_reactive(&mut self, context: &StrategyContext<'_>) -> Option<Edit>;
}

/// The strategies by name.
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
    fn name(&self) -> &'static str {
        self.name.as_str()
    }
    fn plan(&mut self, _: &StrategyContext<'_>) -> Option<Edit> {
        None
    }
    fn plan_reactive(&mut self, _: &StrategyContext<'_>) -> Option<Edit> {
        None
    }
}

/// The strategy `name` with its constants from `tuning`.
pub fn build(name: StrategyName, tuning: &StrategyTuning) -> Box<dyn ContextStrategy> {
    match name {
        StrategyName::Roku => Box::new(roku::Roku::new(tuning.roku)),
        StrategyName::Opencode => Box::new(opencode::Opencode::new(tuning.opencode)),
        StrategyName::Codex => Box::new(codex::Codex::new(tuning.codex)),
        StrategyName::Masking => Box::new(masking::Masking::new(tuning.masking)),
        StrategyName::None | StrategyName::Native => Box::new(NoCompaction { name }),
    }
}
