//! How an imported session ended, and how its replay ends the same way
//! (`docs/import.md`, "Endings"). A session ends with an answer, after a
//! tool round the user stopped (or the log stops), on a submit call, or on
//! a failed model call (the context overflowed, or another provider error).
//! The scenario's `ending` names it; the runner stops the replay after the
//! recorded steps, and a failed last call is replayed by a fault, so no
//! replay asks for a call the session did not make.

use crate::output::{ExchangeOut, FaultOut, HttpFaultOut};
use crate::report::ImportReport;
use crate::session::{Exit, ImportedSession, Item, ProviderError};

use super::FAILED_CALL_TEXT;

/// Attempts of a retryable failed call the fault answers: the default retry
/// policy's first attempt and its 5 retries, so the run ends `llm_error`.
const RETRYABLE_ATTEMPTS: u32 = 6;

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
    pub outcome: &'static str,
    /// The failed last call's fault.
    pub fault: Option<FaultOut>,
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
            Item::ProviderError(error) => session.lines.warn(error.line, format!("model call failed ({}) and the session went on: the failure is not replayed", error.message)),
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
    /// The replay of this ending over the built `exchanges` (at least one).
    /// `unanswered_user`: a user message came after the last model call.
    pub(super) fn replay(self, exchanges: &mut Vec<ExchangeOut>, unanswered_user: bool, session: &mut ImportedSession, report: &mut ImportReport) -> Replay {
        let last = exchanges.last().expect("the converter adds an exchange to a session without one");
        let calls_after_last = !last.tool_calls.is_empty() || unanswered_user;
        let replay = match self.error {
            Some(error) if calls_after_last => failed_call(error, exchanges, report),
            error => {
                if let Some(error) = error {
                    session.lines.warn(error.line, format!("model call failed ({}) after the final answer with no user message between: not replayed", error.message));
                }
                let submits = self.submitted || last.tool_calls.iter().any(|call| session.submit_tools.contains(&call.name.as_str()));
                let outcome = if self.stopped_by_user || unanswered_user {
                    "stopped"
                } else if last.tool_calls.is_empty() {
                    "final_answer"
                } else if submits {
                    "submitted"
                } else {
                    "stopped"
                };
                Replay { outcome, fault: None }
            }
        };
        report.ending = replay.outcome;
        replay
    }
}

/// The failed last call: an exchange for it, and the fault that answers
/// every attempt of it as the provider did.
fn failed_call(error: ProviderError, exchanges: &mut Vec<ExchangeOut>, report: &mut ImportReport) -> Replay {
    let exchange = exchanges.len() as u64;
    exchanges.push(ExchangeOut { text: format!("{FAILED_CALL_TEXT} {}", error.message), ..Default::default() });
    report.synthetic.push(format!("an exchange for the failed last model call (line {}), answered by a fault", error.line));
    let (outcome, fault) = if error.context_overflow {
        ("context_exceeded", FaultOut { exchange, times: OVERFLOW_ATTEMPTS, context_length_exceeded: true, http: None })
    } else {
        let status = error.status.unwrap_or(500);
        ("llm_error", FaultOut { exchange, times: RETRYABLE_ATTEMPTS, context_length_exceeded: false, http: Some(HttpFaultOut { status }) })
    };
    Replay { outcome, fault: Some(fault) }
}

#[cfg(test)]
mod tests {
    use crate::convert::{ConvertOptions, Converted, FAILED_CALL_TEXT, convert};
    use crate::session::{Arguments, AssistantTurn, Exit, ImportedSession, Item, ProviderError, ToolCall, ToolResult};

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

    fn ending(converted: &Converted) -> (&'static str, u64, usize) {
        let ending = converted.scenario.ending.as_ref().expect("every import states its ending");
        assert_eq!(converted.scenario.expect.as_ref().unwrap().outcome, ending.outcome);
        assert_eq!(converted.scenario.loop_settings.step_budget, ending.steps + 1, "the budget's last turn is never reached");
        (ending.outcome, ending.steps, converted.recording.exchanges.iter().filter(|e| e.purpose.is_none()).count())
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
        assert!(converted.recording.exchanges.iter().all(|e| e.text != super::super::SESSION_END_TEXT));
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
        let overflow = converted([vec![user("go")], call("a", "read").to_vec(), vec![failed("prompt is too long: 201000 tokens > 200000 maximum")]].concat(), |_| {});
        assert_eq!(ending(&overflow), ("context_exceeded", 2, 2));
        let fault = &overflow.scenario.faults[0];
        assert!(fault.context_length_exceeded && fault.exchange == 1 && fault.http.is_none());
        assert!(overflow.recording.exchanges[1].text.starts_with(FAILED_CALL_TEXT));

        let error = converted([vec![user("go")], call("a", "read").to_vec(), vec![failed("API Error: 529 Overloaded")]].concat(), |_| {});
        assert_eq!(ending(&error), ("llm_error", 2, 2));
        assert_eq!(error.scenario.faults[0].http.as_ref().unwrap().status, 529);
    }

    #[test]
    fn a_failed_call_the_session_went_on_after_is_dropped_with_a_warning() {
        let converted = converted([vec![user("go"), failed("Connection error.")], call("a", "read").to_vec(), vec![answer("done")]].concat(), |_| {});
        assert_eq!(ending(&converted), ("final_answer", 2, 2));
        assert!(converted.report.lines.warnings.iter().any(|w| w.reason.contains("Connection error.") && w.reason.contains("went on")));
    }
}
