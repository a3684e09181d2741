//! The step loop (Roku's `execute_tool_loop`), as a sequence of small named
//! phases: [`prepare`] the context, [`call`] the model, [`act`] on its
//! decision (tools, pseudo-tools), then record the step. Each phase is its
//! own module; this file owns the loop and the run's machinery.

mod act;
mod call;
mod compact;
mod delegate;
mod execute;
mod prepare;

pub use act::SKIPPED_FOR_STEERING;

use std::collections::HashMap;
use std::time::Duration;

use reloop_wire::Usage;

use crate::cache_break::CacheBreakDetector;
use crate::client::ProviderClient;
use crate::clock::SharedClock;
use crate::config::LoopSettings;
use crate::context::{ContextStrategy, ContextView};
use crate::doom_loop::DoomLoopDetectors;
use crate::estimate::Calibration;
use crate::event::{LoopEvent, LoopEventSender, TimedEvent};
use crate::price_table::estimated_cost_usd;
use crate::risk::ApprovalGate;
use crate::state::{LoopState, LoopStatus};
use crate::tool_schema::Freezer;
use crate::tools::ToolRuntime;

/// The user's side of a run: replies, steering, follow-ups, interrupts
/// (pi-mono's queues, Codex's interrupt). A harness scripts them; an
/// application connects them to a person.
pub trait UserChannel: Send {
    /// The reply to an `ask_user` question; `None` ends the run waiting.
    fn reply(&mut self, question: &str) -> Option<String>;
    /// A steering message queued once `tool_calls_done` tool calls have
    /// finished: the batch's remaining calls are skipped for it.
    fn steering(&mut self, tool_calls_done: u32) -> Option<String> {
        let _ = tool_calls_done;
        None
    }
    /// A follow-up for when the loop would stop with an answer.
    fn follow_up(&mut self) -> Option<String> {
        None
    }
    /// Whether the user's side (the person, or the harness around the
    /// agent that takes its submission) ends the run once `steps_done`
    /// steps have finished, and how: `stopped` or `submitted`. A replayed
    /// session ends where its recording ends, after its last tool round.
    fn ends_after(&mut self, steps_done: u32) -> Option<crate::outcome::Outcome> {
        let _ = steps_done;
        None
    }
    /// Whether the user interrupts tool call `call_index` (0-based over the
    /// run), and after how long it has run.
    fn interrupt_during(&mut self, call_index: u32) -> Option<Duration> {
        let _ = call_index;
        None
    }
}

/// Builds the system prompt for a step (Roku rebuilds it every step from
/// the environment and memory, which is how prompts drift mid-run).
pub trait SystemPromptSource: Send + Sync {
    /// The prompt for step `step`.
    fn system_prompt(&self, step: u32) -> String;
}

/// What the loop is given from outside.
pub struct LoopDeps<'a> {
    /// The provider.
    pub client: ProviderClient,
    /// Settings.
    pub settings: LoopSettings,
    /// System prompt per step.
    pub system_prompt: &'a dyn SystemPromptSource,
    /// Real tools.
    pub tools: &'a dyn ToolRuntime,
    /// The user's side: replies, steering, follow-ups, interrupts.
    pub user: &'a mut dyn UserChannel,
    /// Decides calls that need approval.
    pub approvals: &'a mut dyn ApprovalGate,
    /// The run's time.
    pub clock: SharedClock,
    /// Where events go.
    pub events: LoopEventSender,
}

/// One run of the agent loop.
pub struct AgentLoop<'a> {
    deps: LoopDeps<'a>,
    /// The frozen tool schema. Code that changes the visible tool set
    /// (deferred tools, plan mode) calls its `visible_tools_changed`.
    tools: Freezer,
    cache: CacheBreakDetector,
    doom: DoomLoopDetectors,
    view: ContextView,
    /// The previous step's rendering of the view, given back after its
    /// call: the next rendering keeps the messages it still shows instead
    /// of copying the whole history again.
    last_view: Vec<crate::message::Message>,
    strategy: Box<dyn ContextStrategy>,
    breaker: compact::CircuitBreaker,
    /// Scales the token estimate by what the provider reported.
    calibration: Calibration,
    /// The system prompt last estimated (its index in the state) and its
    /// unrounded estimate.
    system_estimate: (usize, f64),
    /// Doom-loop warnings to append to the results of these call ids.
    pending_warnings: HashMap<String, String>,
    /// 0 for the main loop, 1 for a sub-agent (which cannot delegate).
    depth: u8,
}

impl<'a> AgentLoop<'a> {
    /// Prepares a run.
    pub fn new(deps: LoopDeps<'a>) -> Self {
        let doom = DoomLoopDetectors::new(deps.settings.doom_loop.clone());
        let strategy = crate::context::build(deps.settings.strategy, &deps.settings.strategies);
        let tools = deps.client.tool_freezer();
        Self {
            deps,
            tools,
            cache: CacheBreakDetector::default(),
            doom,
            view: ContextView::new(),
            last_view: Vec::new(),
            strategy,
            breaker: compact::CircuitBreaker::default(),
            calibration: Calibration::new(),
            system_estimate: (usize::MAX, 0.0),
            pending_warnings: HashMap::new(),
            depth: 0,
        }
    }

    /// Runs `task` to the end and returns the final state.
    pub async fn run(mut self, task: &str) -> LoopState {
        let mut state = LoopState::new(task, self.deps.settings.step_budget);
        self.drive(&mut state).await;
        let usage: Usage = state.usage;
        self.emit(
            &state,
            LoopEvent::TokenUsage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_tokens: usage.cache_read_tokens,
                cache_write_tokens: usage.cache_write_tokens,
                estimated_cost_usd: estimated_cost_usd(self.deps.client.model(), &usage),
            },
        );
        if let Some(outcome) = state.outcome() {
            self.emit(&state, LoopEvent::LoopFinished { outcome });
        }
        state
    }

    /// Steps until the run ends. `state` is the caller's, so a run cut off
    /// by a deadline (a sub-agent's timeout) leaves its records behind.
    async fn drive(&mut self, state: &mut LoopState) {
        while state.status == LoopStatus::Running {
            self.step(state).await;
        }
    }

    async fn step(&mut self, state: &mut LoopState) {
        let mut prepared = self.prepare(state).await;
        let turn = self.call(state, &mut prepared).await;
        self.last_view = std::mem::take(&mut prepared.view);
        let Some(turn) = turn else { return };
        self.act(state, turn, prepared.final_turn).await;
        if state.status == LoopStatus::Running
            && let Some(outcome) = self.deps.user.ends_after(state.step_index + 1)
        {
            state.finish(outcome);
        }
        if state.status == LoopStatus::Running {
            state.step_index += 1;
            state.remaining_step_budget -= 1;
        }
        self.emit(state, LoopEvent::StepComplete { remaining_step_budget: state.remaining_step_budget });
    }

    fn emit(&self, state: &LoopState, event: LoopEvent) {
        // A closed receiver only means nobody listens any more.
        let _ = self.deps.events.send(TimedEvent { step: state.step_index, at_ms: self.deps.clock.now_ms(), event });
    }
}
