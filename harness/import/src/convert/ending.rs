//! How an imported session ended, and how its replay ends the same way
//! (`docs/import.md`, "Endings"). A session ends with an answer, after a
//! tool round the user stopped (or the log stops), on a submit call, or on
//! a failed model call (the context overflowed, or another provider error).
//! The scenario's `ending` names it; the runner stops the replay after the
//! recorded steps, and a failed last call is replayed by a fault, so no
//! replay asks for a call the session did not make.

use reloop_agent::Outcome;
use reloop_recording::fault::FaultSpec;
use reloop_recording::fault::HttpFault;
use reloop_recording::{Exchange, Part};

use crate::report::ImportReport;
use crate::session::{Exit, ImportedSession, Item, ProviderError};

use super::{FAILED_CALL_TEXT, SESSION_END_TEXT, has_tool_calls, text_part};

/// Attempts of a retryable failed call the fault answers: the default retry
/// policy's first attempt and its 5 retries, so the run ends `llm_error`.
pub(crate) const RETRYABLE_ATTEMPTS: u32 = 6;

/// Attempts of an overflowing call the fault answers: the call and its
/// retry after the loop's reactive compaction.
const OVERFLOW_ATTEMPTS: u32 = 2;

/// What ended the session, taken out of its items.
#[derive(Debug, Default)]
pub(super) struct End {
    /// The last thing in the session is the user stopping the agent.
    stopped_by_user: bool,
    /// The last model call failed.
    error: Option<ProviderError>,
    /// The source says the harness took the agent's submission.
    submitted: bool,
}

/// How the scenario replays the ending.
#[derive(Debug)]
pub(super) struct Replay {
    /// The run's outcome.
    pub outcome: Outcome,
    /// The failed last call's fault.
    pub fault: Option<FaultSpec>,
}

/// Takes the ending out of the items. An interrupt or a failed call with
/// nothing said after it ends the session. One the session went on after
/// stays only as what the model saw: Claude Code's interrupt marker becomes
/// a user message, a failed call the agent retried is dropped (a warning).
pub(super) fn settle(session: &mut ImportedSession) -> End {
    let last_said = session.items.iter().rposition(|item| matches!(item, Item::Assistant(_) | Item::User { .. }));
    let mut end = End::default();
    for (index, item) in std::mem::take(&mut session.items).into_iter().enumerate() {
        let last = last_said.is_none_or(|said| index > said);
        match item {
            Item::ProviderError(error) if last => {
                if let Some(earlier) = end.error.replace(error) {
                    session.lines.warn(earlier.line, format!("model call failed ({}), then again: the later failure ends the session", earlier.message));
                }
            }
            Item::ProviderError(error) => {
                session.lines.warn(error.line, format!("model call failed ({}) and the session went on: the failure is not replayed", error.message))
            }
            Item::Interrupted { .. } if last => end.stopped_by_user = true,
            Item::Interrupted { text: Some(text), line } => session.items.push(Item::User { text, line }),
            Item::Interrupted { text: None, .. } => {}
            item => session.items.push(item),
        }
    }
    match session.exit.take() {
        Some(Exit::Failed(error)) if end.error.is_none() => end.error = Some(error),
        Some(Exit::Submitted) => end.submitted = true,
        _ => {}
    }
    end
}

impl End {
    /// The replay of this ending over the built `exchanges`. A session with
    /// no model call gets one: the failed call when its only call failed,
    /// else a final answer. `unanswered_user`: a user message came after the
    /// last model call.
    pub(super) fn replay(self, exchanges: &mut Vec<Exchange>, unanswered_user: bool, session: &mut ImportedSession, report: &mut ImportReport) -> Replay {
        let calls_after_last = exchanges.last().is_none_or(has_tool_calls) || unanswered_user;
        if exchanges.is_empty() && !(self.error.is_some() && calls_after_last) {
            exchanges.push(Exchange { parts: vec![text_part(SESSION_END_TEXT.into())], ..Default::default() });
            report.synthetic.push("a final answer exchange: the session holds no model call".into());
        }
        let replay = match self.error {
            Some(error) if calls_after_last => failed_call(error, exchanges, report),
            error => {
                let last = exchanges.last().expect("an exchange was added above to a session without one");
                if let Some(error) = error {
                    session
                        .lines
                        .warn(error.line, format!("model call failed ({}) after the final answer with no user message between: not replayed", error.message));
                }
                let submits =
                    self.submitted || last.parts.iter().any(|part| matches!(part, Part::ToolCall(call) if session.submit_tools.contains(&call.name.as_str())));
                let outcome = if self.stopped_by_user || unanswered_user {
                    Outcome::Stopped
                } else if !has_tool_calls(last) {
                    Outcome::FinalAnswer
                } else if submits {
                    Outcome::Submitted
                } else {
                    Outcome::Stopped
                };
                Replay { outcome, fault: None }
            }
        };
        report.ending = replay.outcome.as_str();
        replay
    }
}

/// The failed last call: an exchange for it, and the fault that answers
/// every attempt of it as the provider did.
fn failed_call(error: ProviderError, exchanges: &mut Vec<Exchange>, report: &mut ImportReport) -> Replay {
    let exchange = exchanges.len();
    exchanges.push(Exchange { parts: vec![text_part(format!("{FAILED_CALL_TEXT} {}", error.message))], ..Default::default() });
    report.synthetic.push(format!("an exchange for the failed last model call (line {}), answered by a fault", error.line));
    let fault = |times, context_length_exceeded, http| FaultSpec {
        exchange,
        times,
        http,
        cut_after_events: None,
        stall: None,
        garble_after_events: None,
        truncate_arguments: false,
        context_length_exceeded,
        stream_error: None,
    };
    let (outcome, fault) = if error.context_overflow {
        (Outcome::ContextExceeded, fault(OVERFLOW_ATTEMPTS, true, None))
    } else {
        let status = error.status.unwrap_or(500);
        (Outcome::LlmError, fault(RETRYABLE_ATTEMPTS, false, Some(HttpFault { status, headers: Default::default(), body: None })))
    };
    Replay { outcome, fault: Some(fault) }
}

#[cfg(test)]
mod tests {
    use crate::convert::{ConvertOptions, Converted, FAILED_CALL_TEXT, convert};
    use crate::session::{Arguments, AssistantTurn, Exit, ImportedSession, Item, ProviderError, ToolCall, ToolResult};
    use reloop_recording::{Exchange, Part, Purpose};

    /// The text of an exchange's first part.
    fn text(exchange: &Exchange) -> &str {
        match exchange.parts.first() {
            Some(Part::Text { text, .. }) => text,
            _ => "",
        }
    }

    fn user(text: &str) -> Item {
        Item::User { text: text.into(), line: 1 }
    }

    fn answer(text: &str) -> Item {
        Item::Assistant(AssistantTurn { text: text.into(), ..Default::default() })
    }

    fn call(id: &str, name: &str) -> [Item; 2] {
        let call = ToolCall { id: id.into(), name: name.into(), arguments: Arguments::Json(serde_json::json!({ "n": id })) };
        [
            Item::Assistant(AssistantTurn { tool_calls: vec![call], ..Default::default() }),
            Item::ToolResult(ToolResult { call_id: id.into(), output: "ok".into(), is_error: false, line: 1 }),
        ]
    }

    fn failed(message: &str) -> Item {
        Item::ProviderError(ProviderError::from_message(message, None, 9))
    }

    fn converted(items: Vec<Item>, configure: impl FnOnce(&mut ImportedSession)) -> Converted {
        let mut session = ImportedSession { format: "pi", items, ..Default::default() };
        configure(&mut session);
        convert(session, ConvertOptions { name: "s".into(), ..Default::default() })
    }

    fn ending(converted: &Converted) -> (&'static str, u32, usize) {
        let ending = converted.scenario.ending.as_ref().expect("every import states its ending");
        assert_eq!(converted.scenario.expect.outcome, Some(ending.outcome));
        assert_eq!(converted.scenario.loop_settings.step_budget, ending.steps + 1, "the budget's last turn is never reached");
        (ending.outcome.as_str(), ending.steps, converted.recording.exchanges.iter().filter(|e| e.purpose == Purpose::Main).count())
    }

    #[test]
    fn an_answer_ends_final_answer_with_nothing_added() {
        let converted = converted([vec![user("go")], call("a", "read").to_vec(), vec![answer("done")]].concat(), |_| {});
        assert_eq!(ending(&converted), ("final_answer", 2, 2));
        assert!(converted.scenario.faults.is_empty());
    }

    #[test]
    fn a_tool_round_last_ends_stopped_without_a_made_up_answer() {
        let converted = converted([vec![user("go")], call("a", "read").to_vec(), call("b", "bash").to_vec()].concat(), |_| {});
        assert_eq!(ending(&converted), ("stopped", 2, 2));
        assert!(converted.recording.exchanges.iter().all(|e| text(e) != super::super::SESSION_END_TEXT));
    }

    #[test]
    fn a_trailing_interrupt_is_the_stop_and_an_earlier_one_is_what_the_model_saw() {
        let marker = "[Request interrupted by user]";
        let items = [
            vec![user("go")],
            call("a", "read").to_vec(),
            vec![Item::Interrupted { text: Some(marker.into()), line: 4 }, user("now this")],
            call("b", "bash").to_vec(),
            vec![Item::Interrupted { text: Some(marker.into()), line: 8 }],
        ]
        .concat();
        let converted = converted(items, |_| {});
        assert_eq!(ending(&converted), ("stopped", 2, 2));
        assert_eq!(converted.scenario.steering.len(), 1);
        assert_eq!(converted.scenario.steering[0].message, format!("{marker}\n\nnow this"));
    }

    #[test]
    fn a_user_message_never_answered_is_delivered_and_the_run_stops() {
        let converted = converted([vec![user("go"), answer("done"), user("and then?")]].concat(), |_| {});
        assert_eq!(ending(&converted), ("stopped", 1, 1));
        assert_eq!(converted.scenario.follow_ups, ["and then?"]);
    }

    #[test]
    fn a_submit_call_last_ends_submitted_by_tool_or_by_the_stated_exit() {
        let converted_by_tool = converted([vec![user("go")], call("a", "submit").to_vec()].concat(), |s| s.submit_tools = &["submit"]);
        assert_eq!(ending(&converted_by_tool).0, "submitted");
        let by_exit = converted([vec![user("go")], call("a", "bash").to_vec()].concat(), |s| s.exit = Some(Exit::Submitted));
        assert_eq!(ending(&by_exit).0, "submitted");
        let other_tool = converted([vec![user("go")], call("a", "bash").to_vec()].concat(), |s| s.submit_tools = &["submit"]);
        assert_eq!(ending(&other_tool).0, "stopped");
    }

    #[test]
    fn a_failed_last_call_is_an_exchange_answered_by_its_fault() {
        let overflow =
            converted([vec![user("go")], call("a", "read").to_vec(), vec![failed("prompt is too long: 201000 tokens > 200000 maximum")]].concat(), |_| {});
        assert_eq!(ending(&overflow), ("context_exceeded", 2, 2));
        let fault = &overflow.scenario.faults[0];
        assert!(fault.context_length_exceeded && fault.exchange == 1 && fault.http.is_none());
        assert!(text(&overflow.recording.exchanges[1]).starts_with(FAILED_CALL_TEXT));

        let error = converted([vec![user("go")], call("a", "read").to_vec(), vec![failed("API Error: 529 Overloaded")]].concat(), |_| {});
        assert_eq!(ending(&error), ("llm_error", 2, 2));
        assert_eq!(error.scenario.faults[0].http.as_ref().unwrap().status, 529);
    }

    /// The agent's own compactions become the scenario's recorded
    /// compactions: sizes the source states are kept, missing ones are the
    /// billed prompts of the calls either side.
    #[test]
    fn an_agents_compaction_keeps_its_stated_sizes_and_takes_the_rest_from_the_calls_around_it() {
        use crate::session::{Compaction, RecordedUsage};
        let billed = |input: u64, item: Item| match item {
            Item::Assistant(turn) => Item::Assistant(AssistantTurn { usage: Some(RecordedUsage { input_tokens: input, ..Default::default() }), ..turn }),
            other => other,
        };
        let [first, first_result] = call("a", "read");
        let [second, second_result] = call("b", "read");
        let compaction =
            |tokens_before, tokens_after| Item::Compaction(Compaction { tokens_before, tokens_after, ..Compaction::summary("so far: read a".into(), 5) });
        let items = vec![
            user("go"),
            billed(150_000, first),
            first_result,
            compaction(Some(160_000), None),
            billed(20_000, second),
            second_result,
            compaction(None, Some(9_000)),
            billed(10_000, answer("done")),
        ];
        let converted = converted(items, |_| {});
        let sizes: Vec<_> = converted.scenario.recorded_compactions.iter().map(|c| (c.after_calls, c.tokens_before, c.tokens_after)).collect();
        assert_eq!(sizes, [(1, Some(160_000), Some(20_000)), (2, Some(20_000), Some(9_000))]);
        // 140,000 less on each of calls 2 and 3, 11,000 less on call 3.
        assert_eq!(converted.report.tokens_saved_recorded, Some(140_000 * 2 + 11_000));
        assert_eq!(converted.report.compactions, converted.scenario.recorded_compactions);
    }

    /// A session that opens with the agent's compaction (Claude Code after an
    /// automatic compaction, or a file cut at its boundary) goes on from the
    /// summary: the agent sends it as a user message, so it is the task, not
    /// a made-up one, and a prompt typed next reaches the model with it.
    #[test]
    fn a_session_opening_with_a_compaction_has_its_summary_as_the_task() {
        use crate::session::Compaction;
        let summary = || Item::Compaction(Compaction::summary("This session is being continued: read a next.".into(), 2));
        let [first, first_result] = call("a", "read");
        let resumed = converted(vec![summary(), first, first_result], |_| {});
        assert_eq!(resumed.scenario.task, "This session is being continued: read a next.");
        assert!(resumed.report.synthetic.is_empty(), "{:?}", resumed.report.synthetic);
        let [first, first_result] = call("a", "read");
        let typed = converted(vec![summary(), user("continue implementation"), first, first_result], |_| {});
        assert_eq!(typed.scenario.task, "This session is being continued: read a next.\n\ncontinue implementation");
        assert!(typed.scenario.follow_ups.is_empty());
    }

    /// A session whose only model call failed was given a made-up final
    /// answer before the failed call, so its replay ended `final_answer`.
    #[test]
    fn a_session_whose_only_model_call_failed_ends_in_that_error() {
        let converted = converted(vec![user("go"), failed("API Error: 529 Overloaded")], |_| {});
        assert_eq!(ending(&converted), ("llm_error", 1, 1));
        assert_eq!(converted.scenario.faults[0].exchange, 0, "the fault answers the first and only call");
        assert!(text(&converted.recording.exchanges[0]).starts_with(FAILED_CALL_TEXT));
        assert!(converted.recording.exchanges.iter().all(|e| text(e) != super::super::SESSION_END_TEXT));
    }

    #[test]
    fn a_failed_call_the_session_went_on_after_is_dropped_with_a_warning() {
        let converted = converted([vec![user("go"), failed("Connection error.")], call("a", "read").to_vec(), vec![answer("done")]].concat(), |_| {});
        assert_eq!(ending(&converted), ("final_answer", 2, 2));
        assert!(converted.report.lines.warnings.iter().any(|w| w.reason.contains("Connection error.") && w.reason.contains("went on")));
    }
}
