//! Phase 3: act on the model's decision. No tool call means the text is the
//! final answer (unless a follow-up is queued); otherwise the calls run in
//! order: pseudo-tools by the loop itself, runs of real calls through
//! [`super::execute`]. A steering message skips what is left of the batch.

use reloop_wire::{ModelTurn, ToolCall};

use super::AgentLoop;
use super::execute::BatchEnd;
use crate::deferred_tools::{self, TOOL_SEARCH};
use crate::event::LoopEvent;
use crate::message::Message;
use crate::outcome::Outcome;
use crate::state::{LoopState, LoopStatus};
use crate::sub_agent::AGENT_TOOL;
use crate::task_store::is_task_tool;
use crate::text_tools::{self, MALFORMED_TOOL_CALL};
use crate::tool_set::{hidden_tools, searches_tools};
use crate::tools::{ToolOutput, pseudo};

/// The result given to calls skipped by a steering message (pi-mono's text).
pub const SKIPPED_FOR_STEERING: &str = "Skipped due to queued user message.";

impl AgentLoop<'_> {
    pub(super) async fn act(&mut self, state: &mut LoopState, mut turn: ModelTurn, final_turn: bool) {
        if self.deps.settings.text_tool_calling() && turn.tool_calls.is_empty() {
            turn.tool_calls = text_tools::tool_calls_in_text(&turn.text, state.step_index);
        }
        state.transcript.push(Message::Assistant { text: turn.text.as_str().into(), tool_calls: turn.tool_calls.clone(), reasoning: turn.reasoning.clone() });
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
            if first.name == MALFORMED_TOOL_CALL && self.deps.settings.text_tool_calling() {
                self.answer_malformed(state, first);
                rest = &rest[1..];
                continue;
            }
            if self.searches(&first.name) {
                let output = self.search_tools(state, first);
                self.push_result(state, first, output);
                rest = &rest[1..];
                continue;
            }
            if self.delegates(&first.name) {
                self.run_agent_call(state, first).await;
                rest = &rest[1..];
                continue;
            }
            let (task_tools, agent, search) = (self.deps.settings.task_tools, self.delegates(AGENT_TOOL), self.searches(TOOL_SEARCH));
            let loop_answers = |name: &str| {
                pseudo::is_pseudo(name)
                    || (task_tools && is_task_tool(name))
                    || name == MALFORMED_TOOL_CALL
                    || (agent && name == AGENT_TOOL)
                    || (search && name == TOOL_SEARCH)
            };
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
            content: output.content.into(),
            is_error: output.is_error,
        });
    }

    /// Whether a call of `name` is `tool_search`, declared because the
    /// runtime's schema is deferred.
    fn searches(&self, name: &str) -> bool {
        name == TOOL_SEARCH && searches_tools(self.deps.tools, &self.deps.settings)
    }

    /// Answers `tool_search`: the schemas of the hidden tools that match,
    /// which become visible from the next request on.
    fn search_tools(&mut self, state: &mut LoopState, call: &ToolCall) -> ToolOutput {
        let query = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .ok()
            .and_then(|arguments| arguments.get("query")?.as_str().map(str::to_owned))
            .unwrap_or_default();
        let hidden = hidden_tools(self.deps.tools, &self.deps.settings, &state.discovered_tools);
        let found = deferred_tools::search(&hidden, &query);
        let output = deferred_tools::search_result(&found, &hidden);
        let names: Vec<String> = found.iter().map(|spec| spec.name.clone()).collect();
        if !names.is_empty() {
            state.discovered_tools.extend(names.iter().cloned());
            self.tools.visible_tools_changed();
            self.emit(state, LoopEvent::ToolsDiscovered { call_id: call.id.to_string(), query, tools: names });
        }
        output
    }

    /// Whether a call of `name` is the loop's `Agent` tool: declared here,
    /// or called by a sub-agent (which gets the depth-limit error).
    fn delegates(&self, name: &str) -> bool {
        name == AGENT_TOOL && (self.deps.settings.sub_agent.enabled || self.depth > 0)
    }

    /// Runs an `Agent` call as a tool call of the run: its start and end
    /// events around the sub-agent's own, counted with the other calls.
    async fn run_agent_call(&mut self, state: &mut LoopState, call: &ToolCall) {
        self.emit(state, LoopEvent::ToolStart { call_id: call.id.to_string(), tool: call.name.to_string(), arguments: call.arguments.to_string() });
        let started_ms = self.deps.clock.now_ms();
        let output = self.delegate(state, call).await;
        state.tool_calls += 1;
        state.tool_errors += u32::from(output.is_error);
        self.emit(
            state,
            LoopEvent::ToolEnd {
                call_id: call.id.to_string(),
                tool: call.name.to_string(),
                is_error: output.is_error,
                elapsed_ms: self.deps.clock.now_ms() - started_ms,
                result_summary: output.content.chars().take(120).collect(),
            },
        );
        self.push_result(state, call, output);
    }

    /// Answers a text tool call that could not be read with the reason, as
    /// a tool error the model sees.
    fn answer_malformed(&mut self, state: &mut LoopState, call: &ToolCall) {
        self.emit(state, LoopEvent::TextToolCallMalformed { call_id: call.id.to_string(), reason: call.arguments.to_string() });
        state.tool_calls += 1;
        state.tool_errors += 1;
        self.push_result(state, call, ToolOutput::error(text_tools::malformed_message(&call.arguments)));
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
