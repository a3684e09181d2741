//! The scenario's scripted user: replies to `ask_user`, approval answers,
//! steering, follow-ups and the interrupt, as the loop's [`UserChannel`] and
//! [`ApprovalGate`].

use std::collections::BTreeMap;
use std::time::Duration;

use reloop_agent::{Approval, ApprovalGate, Outcome, UserChannel};

use crate::scenario::{ApprovalAnswer, Ending, Interrupt, ScenarioSpec, Steering};

/// Plays the user's part from a scenario.
pub struct ScriptedUser {
    replies: std::vec::IntoIter<String>,
    steering: Vec<Steering>,
    follow_ups: std::vec::IntoIter<String>,
    interrupt: Option<Interrupt>,
    /// The steps after which the run ends, and how (the recording ends there).
    end_after_steps: Option<(u32, Outcome)>,
}

impl ScriptedUser {
    /// The script of `spec`.
    pub fn new(spec: &ScenarioSpec) -> Self {
        let mut steering = spec.steering.clone();
        steering.sort_by_key(|s| s.after_tool_calls);
        Self {
            replies: spec.user_replies.clone().into_iter(),
            steering,
            follow_ups: spec.follow_ups.clone().into_iter(),
            interrupt: spec.interrupt,
            end_after_steps: spec.ending.filter(|ending| Ending::ENDED_BY_USER.contains(&ending.outcome)).map(|ending| (ending.steps, ending.outcome)),
        }
    }
}

impl UserChannel for ScriptedUser {
    fn reply(&mut self, _question: &str) -> Option<String> {
        self.replies.next()
    }

    fn steering(&mut self, tool_calls_done: u32) -> Option<String> {
        let due = self.steering.iter().position(|s| s.after_tool_calls <= tool_calls_done)?;
        Some(self.steering.remove(due).message)
    }

    fn follow_up(&mut self) -> Option<String> {
        self.follow_ups.next()
    }

    fn ends_after(&mut self, steps_done: u32) -> Option<Outcome> {
        self.end_after_steps.filter(|(steps, _)| steps_done >= *steps).map(|(_, outcome)| outcome)
    }

    fn interrupt_during(&mut self, call_index: u32) -> Option<Duration> {
        let interrupt = self.interrupt.filter(|i| i.during_tool_call == call_index)?;
        self.interrupt = None;
        Some(Duration::from_millis(interrupt.after_ms))
    }
}

/// Approval answers by tool; unlisted tools are approved (an unattended run).
pub struct ScriptedApprovals {
    answers: BTreeMap<String, ApprovalAnswer>,
}

impl ScriptedApprovals {
    /// The answers of `spec`.
    pub fn new(spec: &ScenarioSpec) -> Self {
        Self { answers: spec.approvals.clone() }
    }
}

impl ApprovalGate for ScriptedApprovals {
    fn check(&mut self, tool: &str, _: &serde_json::Value) -> Approval {
        match self.answers.get(tool) {
            Some(ApprovalAnswer::Deny) => Approval::Denied(format!("`{tool}` is not approved in this session")),
            Some(ApprovalAnswer::Approve) | None => Approval::Approved,
        }
    }
}
