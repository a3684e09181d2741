//! Phase 3: act on the model's decision. No tool call means the text is the
//! final answer (unless a follow-up is queued); otherwise the calls run in
//! order: pseudo-tools by the loop itself, runs of real calls through
//! [`super::execute`]. A steering message skips what is left of the batch.

use reloop_wire::{ModelTurn, ToolCall};

use super::AgentLoop;
use super::execute::BatchEnd;
use crate::event::LoopEvent;
use crate::message::Message;
use crate::outcome::Outcome;
use crate::state::{LoopState, LoopStatus};
use crate::task_store::is_task_tool;
use crate::tools::{ToolOutput, pseudo};

/// The result given to calls skipped by a steering message (pi-mono's text).
pub const SKIPPED_FOR_STEERING: &str = "Skipped due to queued user message.";

impl AgentLoop<'_> {
    pub(super) async fn act(&mut self, state: &mut LoopState, turn: ModelTurn, final_turn: bool) {
        state.transcript.push(Message::Assistant {
            text: turn.text.clone(),
            tool_calls: turn.tool_calls.clone(),
            reasoning: turn.reasoning.clone(),
        });
        if turn.tool_calls.is_empty() {
            state.final_answer = Some(turn.text);
            if let Some(message) = self.finish_with_answer(state) {
                state.transcript.push(Message::user(message));
            }
            return;
        }
        if final_turn {
            // Tools are forbidden now, but an answer given through a
            // pseudo-tool is still an answer.
            match turn.tool_calls.iter().find(|call| pseudo::is_pseudo(&call.name)) {
                Some(call) => {
                    // No follow-up on the last turn: the budget is spent.
                    let mut ignored = None;
                    self.run_pseudo_tool(state, call, &mut ignored);
                }
                None => state.error = Some("the model kept calling tools on the step budget's last turn".into()),
            }
            if state.status == LoopStatus::Running {
                state.finish(Outcome::StepBudgetExhausted);
            }
            return;
        }

        // A follow-up queued by a `final_answer` call joins the conversation
        // once every call of the batch has its result.
        let mut follow_up = None;
        let mut rest: &[ToolCall] = &turn.tool_calls;
        while let Some(first) = rest.first() {
            if state.status != LoopStatus::Running {
                // The run ended; later calls stay unanswered.
                return;
            }
            if pseudo::is_pseudo(&first.name) {
                if let Some(output) = self.run_pseudo_tool(state, first, &mut follow_up) {
                    self.push_result(state, first, output);
                }
                rest = &rest[1..];
                continue;
            }
            if self.deps.settings.task_tools && is_task_tool(&first.name) {
                let output = state.tasks.handle(&first.name, &first.arguments);
                self.push_result(state, first, output);
                rest = &rest[1..];
                continue;
            }
            let loop_answers = |name: &str| pseudo::is_pseudo(name) || (self.deps.settings.task_tools && is_task_tool(name));
            let real = rest.iter().take_while(|call| !loop_answers(&call.name)).count();
            let (batch, after) = rest.split_at(real);
            rest = after;
            match self.run_real_calls(state, batch).await {
                BatchEnd::Completed => {}
                BatchEnd::Cancelled => return,
                BatchEnd::Steered { message, skipped } => {
                    for call in skipped.iter().chain(rest) {
                        self.push_result(state, call, ToolOutput::error(SKIPPED_FOR_STEERING));
                    }
                    state.transcript.push(Message::user(message));
                    return;
                }
            }
        }
        if let Some(message) = follow_up {
            state.transcript.push(Message::user(message));
        }
    }

    /// Ends with the answer, unless the user queued a follow-up (pi-mono's
    /// outer loop): then the run goes on, and the follow-up is returned for
    /// the caller to add once the turn's results are in.
    fn finish_with_answer(&mut self, state: &mut LoopState) -> Option<String> {
        let follow_up = self.deps.user.follow_up();
        match &follow_up {
            Some(message) => self.emit(state, LoopEvent::FollowUpQueued { message: message.clone() }),
            None => state.finish(Outcome::FinalAnswer),
        }
        follow_up
    }

    /// Appends the result of `call` to the transcript.
    pub(super) fn push_result(&mut self, state: &mut LoopState, call: &ToolCall, output: ToolOutput) {
        self.strategy.on_tool_result(state.transcript.len());
        state.transcript.push(Message::ToolResult {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: output.content,
            is_error: output.is_error,
        });
    }

    /// Handles a pseudo-tool; `Some` is the tool result when the run goes on.
    fn run_pseudo_tool(&mut self, state: &mut LoopState, call: &ToolCall, follow_up: &mut Option<String>) -> Option<ToolOutput> {
        let field = |name: &str| string_field(&call.arguments, name);
        match call.name.as_str() {
            pseudo::FINAL_ANSWER => {
                state.final_answer = Some(field("answer"));
                *follow_up = self.finish_with_answer(state);
                follow_up.is_some().then(|| ToolOutput::ok("Answer delivered."))
            }
            pseudo::FAIL => {
                state.error = Some(field("reason"));
                state.finish(Outcome::Fail);
                None
            }
            _ => {
                let question = field("question");
                match self.deps.user.reply(&question) {
                    Some(reply) => {
                        self.emit(state, LoopEvent::UserReplied { question, reply: reply.clone() });
                        Some(ToolOutput::ok(reply))
                    }
                    None => {
                        state.pending_question = Some(question);
                        state.finish(Outcome::AskUser);
                        None
                    }
                }
            }
        }
    }
}

fn string_field(arguments: &str, name: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|value| value.get(name).and_then(|v| v.as_str()).map(str::to_owned))
        .unwrap_or_else(|| arguments.to_owned())
}
