//! Phase 3: act on the model's decision. No tool call means the text is the
//! final answer; otherwise each call runs in order, pseudo-tools included
//! (`final_answer`, `fail` and an unanswered `ask_user` end the run).

use reloop_wire::{ModelTurn, ToolCall};

use super::AgentLoop;
use crate::config::doom_loop_warning;
use crate::doom_loop::DoomLoopReaction;
use crate::event::LoopEvent;
use crate::grounding::ground_paths;
use crate::message::Message;
use crate::outcome::Outcome;
use crate::state::{DoomLoopHit, LoopState, LoopStatus};
use crate::tools::{ToolInvocation, ToolOutput, pseudo};

/// How long a tool result summary in `ToolEnd` may be.
const RESULT_SUMMARY_CHARS: usize = 120;

impl AgentLoop<'_> {
    pub(super) async fn act(&mut self, state: &mut LoopState, turn: ModelTurn, final_turn: bool) {
        state.transcript.push(Message::Assistant { text: turn.text.clone(), tool_calls: turn.tool_calls.clone() });
        if turn.tool_calls.is_empty() {
            state.final_answer = Some(turn.text);
            state.finish(Outcome::FinalAnswer);
            return;
        }
        if final_turn {
            // Tools are forbidden now, but an answer given through a
            // pseudo-tool is still an answer.
            match turn.tool_calls.iter().find(|call| pseudo::is_pseudo(&call.name)) {
                Some(call) => {
                    self.run_pseudo_tool(state, call);
                }
                None => state.error = Some("the model kept calling tools on the step budget's last turn".into()),
            }
            if state.status == LoopStatus::Running {
                state.finish(Outcome::StepBudgetExhausted);
            }
            return;
        }
        for call in &turn.tool_calls {
            if state.status != LoopStatus::Running {
                // A pseudo-tool ended the run; later calls stay unanswered.
                break;
            }
            let output = if pseudo::is_pseudo(&call.name) {
                self.run_pseudo_tool(state, call)
            } else {
                self.run_tool(state, call).await
            };
            if let Some(output) = output {
                self.micro.note_tool_result(state.transcript.len());
                state.transcript.push(Message::ToolResult {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: output.content,
                    is_error: output.is_error,
                });
            }
        }
    }

    /// Handles a pseudo-tool; `Some` is the tool result when the run goes on.
    fn run_pseudo_tool(&mut self, state: &mut LoopState, call: &ToolCall) -> Option<ToolOutput> {
        let field = |name: &str| string_field(&call.arguments, name);
        match call.name.as_str() {
            pseudo::FINAL_ANSWER => {
                state.final_answer = Some(field("answer"));
                state.finish(Outcome::FinalAnswer);
                None
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

    /// Runs one real tool: grounding, doom-loop check, execution, events.
    async fn run_tool(&mut self, state: &mut LoopState, call: &ToolCall) -> Option<ToolOutput> {
        // Ground first, so `./a.rs` and `a.rs` are the same call to the
        // doom-loop detector as they are to the tool.
        let grounded = parse_arguments(&call.arguments).and_then(|mut arguments| {
            ground_paths(&mut arguments)?;
            Ok(arguments)
        });
        let fingerprint = grounded.as_ref().map_or_else(|_| call.arguments.clone(), |a| a.to_string());
        let warning = self.check_doom_loop(state, &call.name, &fingerprint)?;
        self.emit(state, LoopEvent::ToolStart {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        let started = self.deps.clock.now_ms();
        let mut output = match grounded {
            Err(error) => ToolOutput::error(error),
            Ok(arguments) => self.deps.tools.execute(ToolInvocation { name: call.name.clone(), arguments }).await,
        };
        state.tool_calls += 1;
        state.tool_errors += u32::from(output.is_error);
        self.emit(state, LoopEvent::ToolEnd {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            is_error: output.is_error,
            elapsed_ms: self.deps.clock.now_ms() - started,
            result_summary: output.content.chars().take(RESULT_SUMMARY_CHARS).collect(),
        });
        if let Some(warning) = warning {
            output.content = format!("{}\n\n{warning}", output.content);
        }
        Some(output)
    }

    /// `None` when the run must stop; `Some(Some(w))` when the result should
    /// carry warning `w`; `Some(None)` when all is well.
    fn check_doom_loop(&mut self, state: &mut LoopState, tool: &str, arguments: &str) -> Option<Option<String>> {
        let Some(detected) = self.doom.observe(tool, arguments) else { return Some(None) };
        let reaction = self.deps.settings.doom_loop.reaction;
        self.emit(state, LoopEvent::DoomLoopDetected {
            detector: detected.kind,
            tool: detected.tool.clone(),
            repeats: detected.repeats,
            reaction,
        });
        let warning = doom_loop_warning(&detected.tool, detected.repeats);
        if state.doom_loop.is_none() {
            state.doom_loop = Some(DoomLoopHit { step: state.step_index, detected });
        }
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

fn parse_arguments(raw: &str) -> Result<serde_json::Value, String> {
    if raw.trim().is_empty() {
        return Ok(serde_json::Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(raw).map_err(|e| format!("the tool arguments are not valid JSON ({e}); send a JSON object"))
}

fn string_field(arguments: &str, name: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|value| value.get(name).and_then(|v| v.as_str()).map(str::to_owned))
        .unwrap_or_else(|| arguments.to_owned())
}
