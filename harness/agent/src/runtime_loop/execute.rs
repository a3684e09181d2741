//! Running a batch of real tool calls: grounding, the doom-loop check, risk
//! and approval, then execution in groups (Codex's read/write lock: calls
//! marked parallel-safe share a group, the others run alone; ZeroClaw's
//! rule in `auto` mode: nothing runs in parallel when any call needs
//! approval). Results keep call order. Steering is checked after each group.

use std::time::Duration;

use futures_util::future::join_all;
use reloop_wire::ToolCall;
use reloop_wire::compact_json::compact_json;

use super::AgentLoop;
use crate::clock::{SharedClock, with_timeout};
use crate::config::ToolExecution;
use crate::doom_loop::{DoomLoop, DoomLoopKind, DoomLoopReaction, result_hash};
use crate::event::LoopEvent;
use crate::grounding::ground_paths;
use crate::outcome::Outcome;
use crate::prompts::doom_loop_warning;
use crate::risk::{Approval, Risk, classify_tool_risk};
use crate::state::{DoomLoopHit, LoopState};
use crate::tools::DeclaredRisk;
use crate::tools::{ToolContext, ToolInvocation, ToolOutput};

/// How long a tool result summary in `ToolEnd` may be.
const RESULT_SUMMARY_CHARS: usize = 120;

/// How a batch ended.
pub(super) enum BatchEnd {
    /// Every call has its result.
    Completed,
    /// The user steered; `skipped` calls never ran.
    Steered { message: String, skipped: Vec<ToolCall> },
    /// The user interrupted a running tool; the run is over.
    Cancelled,
}

/// A call ready to run, or already answered (refused, denied, malformed).
struct Prepared<'c> {
    call: &'c ToolCall,
    arguments: serde_json::Value,
    parallel_safe: bool,
    needs_approval: bool,
    answered: Option<ToolOutput>,
}

impl AgentLoop<'_> {
    pub(super) async fn run_real_calls(&mut self, state: &mut LoopState, calls: &[ToolCall]) -> BatchEnd {
        let mut prepared = Vec::with_capacity(calls.len());
        for call in calls {
            match self.prepare_call(state, call) {
                Some(ready) => prepared.push(ready),
                // A doom loop with reaction `stop`: the run is over.
                None => return BatchEnd::Completed,
            }
        }
        let groups = plan_groups(&prepared, self.deps.settings.tool_execution);
        let mut done = 0;
        for group in groups {
            let batch = &prepared[done..done + group];
            done += group;
            let outcome = self.run_group(state, batch, prepared.len() - done).await;
            if state.is_finished() {
                return BatchEnd::Completed;
            }
            if outcome.cancelled {
                state.finish(Outcome::Cancelled);
                return BatchEnd::Cancelled;
            }
            if let Some(message) = self.deps.user.steering(state.tool_calls) {
                self.emit(state, LoopEvent::SteeringQueued { message: message.clone(), skipped_calls: prepared.len() - done });
                let skipped = prepared[done..].iter().map(|p| p.call.clone()).collect();
                return BatchEnd::Steered { message, skipped };
            }
        }
        BatchEnd::Completed
    }

    /// Grounds, checks for a doom loop, classifies and gates one call.
    /// `None` when a doom loop stopped the run.
    fn prepare_call<'c>(&mut self, state: &mut LoopState, call: &'c ToolCall) -> Option<Prepared<'c>> {
        // Ground first, so `./a.rs` and `a.rs` are the same call to the
        // doom-loop detector as they are to the tool.
        let workspace = self.deps.tools.workspace();
        let grounded = parse_arguments(&call.arguments).and_then(|mut arguments| {
            ground_paths(&mut arguments, workspace)?;
            Ok(arguments)
        });
        let fingerprint = grounded.as_ref().map_or_else(|_| call.arguments.clone(), |a| compact_json(a).into());
        let detected = self.doom.observe_call(&call.name, &fingerprint);
        let warning = self.react_to_doom_loop(state, detected)?;
        let traits = self.deps.tools.traits(&call.name);
        let mut ready = Prepared { call, arguments: serde_json::Value::Null, parallel_safe: traits.parallel_safe, needs_approval: false, answered: None };
        match grounded {
            Err(error) => ready.answered = Some(ToolOutput::error(error)),
            Ok(arguments) => {
                match classify_tool_risk(&call.name, &arguments, traits, workspace) {
                    Risk::Safe => {}
                    Risk::Denied => ready.answered = Some(ToolOutput::error("denied: this command is never allowed")),
                    Risk::RequiresApproval => {
                        ready.needs_approval = true;
                        if let Approval::Denied(reason) = self.deps.approvals.check(&call.name, &arguments) {
                            self.emit(state, LoopEvent::ToolDenied { call_id: call.id.to_string(), tool: call.name.to_string(), reason: reason.clone() });
                            ready.answered = Some(ToolOutput::error(format!("denied by the user: {reason}")));
                        }
                    }
                }
                ready.arguments = arguments;
            }
        }
        if let (Some(warning), None) = (warning, &ready.answered) {
            self.pending_warnings.insert(call.id.to_string(), warning);
        }
        Some(ready)
    }

    /// Runs one group side by side, each call on a fork of the clock;
    /// `calls_after` calls of the batch come after the group.
    async fn run_group(&mut self, state: &mut LoopState, group: &[Prepared<'_>], calls_after: usize) -> GroupOutcome {
        let runnable = group.iter().filter(|p| p.answered.is_none()).count() as u32;
        state.max_parallel_tools = state.max_parallel_tools.max(runnable);
        let forks: Vec<SharedClock> = group.iter().map(|_| self.deps.clock.fork()).collect();
        let mut interrupts = Vec::with_capacity(group.len());
        for (offset, prepared) in group.iter().enumerate() {
            let index = state.tool_calls + offset as u32;
            interrupts.push(if prepared.answered.is_none() { self.deps.user.interrupt_during(index) } else { None });
            self.emit(
                state,
                LoopEvent::ToolStart {
                    call_id: prepared.call.id.to_string(),
                    tool: prepared.call.name.to_string(),
                    arguments: prepared.call.arguments.to_string(),
                },
            );
        }
        let tools = self.deps.tools;
        let runs = group.iter().zip(&forks).zip(&interrupts).map(|((prepared, clock), interrupt)| async move {
            if let Some(answer) = &prepared.answered {
                return (answer.clone(), false);
            }
            let invocation = ToolInvocation { name: prepared.call.name.to_string(), arguments: prepared.arguments.clone() };
            let execution = tools.execute(invocation, ToolContext { clock: clock.clone() });
            match interrupt {
                None => (execution.await, false),
                Some(after) => match with_timeout(clock.as_ref(), *after, execution).await {
                    Some(output) => (output, false),
                    None => (ToolOutput::error(aborted_message(*after)), true),
                },
            }
        });
        let started = self.deps.clock.now_ms();
        let results = join_all(runs).await;
        let mut cancelled = false;
        for (offset, ((prepared, clock), (mut output, aborted))) in group.iter().zip(&forks).zip(results).enumerate() {
            cancelled |= aborted;
            // Guarded first, so no report (the event's summary included) keeps a secret.
            if prepared.answered.is_none() {
                output.content = self.guard_output(state, prepared.call, std::mem::take(&mut output.content));
            }
            state.tool_calls += 1;
            state.tool_errors += u32::from(output.is_error);
            self.emit(
                state,
                LoopEvent::ToolEnd {
                    call_id: prepared.call.id.to_string(),
                    tool: prepared.call.name.to_string(),
                    is_error: output.is_error,
                    elapsed_ms: clock.now_ms() - started,
                    result_summary: output.content.chars().take(RESULT_SUMMARY_CHARS).collect(),
                },
            );
            // Neither a write's acknowledgement nor the loop's own refusal
            // (denied, malformed) says anything about progress.
            let tool_answered = prepared.answered.is_none() && self.deps.tools.traits(&prepared.call.name).risk == DeclaredRisk::Safe;
            let progress_signal = tool_answered.then(|| result_hash(output.is_error, &output.content));
            let no_progress = self.doom.observe_result(calls_after + group.len() - 1 - offset, progress_signal);
            let warning = self.pending_warnings.remove(prepared.call.id.as_str()).or(self.react_to_doom_loop(state, no_progress).flatten());
            if let Some(warning) = warning {
                output.content = format!("{}\n\n{warning}", output.content);
            }
            self.push_result(state, prepared.call, output);
        }
        self.deps.clock.join(&forks);
        GroupOutcome { cancelled }
    }

    /// Scrubs and truncates one result, with an event for each guard that acted.
    fn guard_output(&mut self, state: &mut LoopState, call: &ToolCall, content: String) -> String {
        let guards = self.deps.settings.output_guards;
        let guarded = guards.apply(content);
        let (call_id, tool) = (call.id.clone(), call.name.clone());
        if guarded.redactions > 0 {
            self.emit(state, LoopEvent::ToolOutputScrubbed { call_id: call_id.to_string(), tool: tool.to_string(), redactions: guarded.redactions });
        }
        if let (Some(omitted), Some(budget)) = (guarded.omitted, guards.truncate) {
            self.emit(state, LoopEvent::ToolOutputTruncated { call_id: call_id.to_string(), tool: tool.to_string(), omitted, unit: budget.unit.as_str() });
        }
        guarded.content
    }

    /// Reacts to `detected` (if any): its event, the run's first hit, then
    /// `None` when the run must stop; `Some(Some(w))` when the result should
    /// carry warning `w`; `Some(None)` when all is well.
    fn react_to_doom_loop(&mut self, state: &mut LoopState, detected: Option<DoomLoop>) -> Option<Option<String>> {
        let Some(detected) = detected else { return Some(None) };
        let reaction = self.deps.settings.doom_loop.reaction;
        let (tool, repeats) = (detected.tool.clone(), detected.repeats);
        self.emit(
            state,
            match detected.kind {
                DoomLoopKind::IdenticalCalls => LoopEvent::DoomLoopDetected { detector: detected.kind.as_str(), tool, repeats, reaction },
                DoomLoopKind::Cycle => LoopEvent::DoomLoopCycleDetected { tool, period: detected.period, repeats, reaction },
                DoomLoopKind::NoProgress => LoopEvent::DoomLoopNoProgressDetected { tool, calls: repeats, reaction },
            },
        );
        let warning = doom_loop_warning(&detected);
        state.record_doom_loop(DoomLoopHit { step: state.step_index, detected });
        match reaction {
            DoomLoopReaction::Warn => Some(Some(warning)),
            DoomLoopReaction::Stop => {
                state.error = Some(warning);
                state.finish(Outcome::DoomLoopStopped);
                None
            }
        }
    }
}

struct GroupOutcome {
    cancelled: bool,
}

/// Sizes of consecutive groups, in call order.
fn plan_groups(calls: &[Prepared<'_>], mode: ToolExecution) -> Vec<usize> {
    let parallel = match mode {
        ToolExecution::Serial => false,
        ToolExecution::Parallel => true,
        ToolExecution::Auto => !calls.iter().any(|c| c.needs_approval),
    };
    let mut groups: Vec<usize> = Vec::new();
    let mut open = false;
    for call in calls {
        let shares = parallel && call.parallel_safe;
        match groups.last_mut() {
            Some(size) if shares && open => *size += 1,
            _ => groups.push(1),
        }
        open = shares;
    }
    groups
}

/// Codex's result for a tool the user interrupted: the model learns it was
/// aborted instead of seeing it vanish.
fn aborted_message(after: Duration) -> String {
    format!("aborted by the user after {:.1}s", after.as_secs_f64())
}

fn parse_arguments(raw: &str) -> Result<serde_json::Value, String> {
    if raw.trim().is_empty() {
        return Ok(serde_json::Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(raw).map_err(|e| format!("the tool arguments are not valid JSON ({e}); send a JSON object"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "t".into(), arguments: "{}".into() }
    }

    fn plan(flags: &[(bool, bool)], mode: ToolExecution) -> Vec<usize> {
        let calls: Vec<ToolCall> = (0..flags.len()).map(|i| call(&i.to_string())).collect();
        let prepared: Vec<Prepared<'_>> = calls
            .iter()
            .zip(flags)
            .map(|(call, (parallel_safe, needs_approval))| Prepared {
                call,
                arguments: serde_json::Value::Null,
                parallel_safe: *parallel_safe,
                needs_approval: *needs_approval,
                answered: None,
            })
            .collect();
        plan_groups(&prepared, mode)
    }

    #[test]
    fn readers_share_writers_run_alone() {
        let flags = [(true, false), (true, false), (false, false), (true, false), (true, false), (true, false)];
        assert_eq!(plan(&flags, ToolExecution::Parallel), vec![2, 1, 3]);
        assert_eq!(plan(&flags, ToolExecution::Serial), vec![1; 6]);
        assert_eq!(plan(&flags, ToolExecution::Auto), vec![2, 1, 3]);
    }

    #[test]
    fn auto_mode_is_serial_when_anything_needs_approval() {
        let flags = [(true, false), (true, true), (true, false)];
        assert_eq!(plan(&flags, ToolExecution::Auto), vec![1, 1, 1]);
        assert_eq!(plan(&flags, ToolExecution::Parallel), vec![3]);
    }
}
