//! An `Agent` call: a child loop (depth 1) with its own history and step
//! budget, on the run's clock and provider, bounded by the sub-agent
//! timeout. Its calls join the parent's records, linked to the parent's
//! step and call; its events follow the parent's, stamped with its step.

use std::time::Duration;

use reloop_wire::ToolCall;

use super::{AgentLoop, LoopDeps, UserChannel};
use crate::clock::{BoxFuture, with_timeout};
use crate::event::LoopEvent;
use crate::state::{LoopState, SubAgentLink};
use crate::sub_agent::{child_result, delegated_task, timeout_result};
use crate::tools::ToolOutput;

impl AgentLoop<'_> {
    /// Runs the `Agent` call `call` and returns the parent's tool result.
    /// Boxed, with a named type: the child's steps run this very code, and
    /// a recursive future must be boxed to have a size and to be `Send`.
    pub(super) fn delegate<'s>(&'s mut self, state: &'s mut LoopState, call: &'s ToolCall) -> BoxFuture<'s, ToolOutput> {
        Box::pin(async move {
            if self.depth > 0 {
                return ToolOutput::error("a sub-agent cannot start another sub-agent (depth limit 1)");
            }
            let Some(task) = delegated_task(&call.arguments) else {
                return ToolOutput::error("`Agent` needs a `prompt`: the task to delegate");
            };
            let settings = self.deps.settings.sub_agent;
            self.emit(state, LoopEvent::SubAgentStarted { call_id: call.id.to_string(), task: task.clone(), step_budget: settings.step_budget });
            let started_ms = self.deps.clock.now_ms();
            let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
            let mut child_state = LoopState::new(&task, settings.step_budget);
            let mut user = NoUser;
            let finished = {
                let mut child = AgentLoop::new(LoopDeps {
                    client: self.deps.client.clone(),
                    settings: self.deps.settings.sub_agent_settings(),
                    system_prompt: self.deps.system_prompt,
                    tools: self.deps.tools,
                    user: &mut user,
                    approvals: &mut *self.deps.approvals,
                    clock: self.deps.clock.clone(),
                    events,
                });
                child.depth = 1;
                let timeout = Duration::from_secs(settings.timeout_secs);
                with_timeout(self.deps.clock.as_ref(), timeout, child.drive(&mut child_state)).await.is_some()
            };
            while let Ok(mut event) = received.try_recv() {
                event.step = state.step_index;
                if let Some(change) = event.event.view_change_mut() {
                    change.sub_agent = Some(state.sub_agents.len());
                }
                let _ = self.deps.events.send(event);
            }
            let output = if finished { child_result(&child_state, settings.result_max_chars) } else { timeout_result(settings.timeout_secs) };
            self.emit(
                state,
                LoopEvent::SubAgentFinished {
                    call_id: call.id.to_string(),
                    outcome: child_state.outcome(),
                    steps: child_state.steps_used(),
                    timed_out: !finished,
                    elapsed_ms: self.deps.clock.now_ms() - started_ms,
                },
            );
            adopt(state, child_state, &call.id);
            output
        })
    }
}

/// Moves the child's calls into the parent's records, linked to the
/// parent's step and call, and adds its usage and counts to the run's.
fn adopt(parent: &mut LoopState, mut child: LoopState, call_id: &str) {
    let link = SubAgentLink { child: parent.sub_agents.len(), parent_step: parent.step_index, parent_call_id: call_id.to_owned() };
    for mut record in std::mem::take(&mut child.calls) {
        record.sub_agent = Some(link.clone());
        parent.calls.push(record);
    }
    parent.add_usage(&child.usage);
    parent.llm_retries += child.llm_retries;
    parent.tool_calls += child.tool_calls;
    parent.tool_errors += child.tool_errors;
    parent.cache_breaks += child.cache_breaks;
    parent.max_parallel_tools = parent.max_parallel_tools.max(child.max_parallel_tools);
    parent.sub_agents.push(child);
}

/// A child's user: there is none, so questions end the child and nothing
/// is steered, followed up or interrupted.
struct NoUser;

impl UserChannel for NoUser {
    fn reply(&mut self, _question: &str) -> Option<String> {
        None
    }
}
