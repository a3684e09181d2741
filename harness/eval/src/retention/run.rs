//! A run's retention (`docs/metrics.md`, "Retention"): the references its
//! actions needed and those its context no longer held, from the server
//! session's [`SentLog`], for the built-in loop and black-box agents alike.
//!
//! The log holds each request as the provider kept it (after `native`'s
//! server-side clearing), so a result the provider cleared counts as gone.
//! Each distinct part is searched once for every span any action of the
//! run uses ([`SpanTable`]); a step then asks only which of its parts hold
//! a span, never rescanning their text.

use std::collections::{HashMap, HashSet};

use reloop_agent::TimedEvent;
use reloop_mock::RequestRecord;
use reloop_mock::sent::{SentLog, SentPart};
use reloop_wire::Message;
use serde_json::{Value, json};

use super::spans::{SpanTable, action_spans, part_texts};
use crate::FastHash;
use crate::result::{EventRow, RunMetrics, StepRow};

/// Who edits the context a run's requests were made from, to name what
/// removed a lost reference's tool result.
#[derive(Debug, Clone, Copy)]
pub enum Editor<'a> {
    /// The built-in loop, with its events (its compactions among them).
    Loop(&'a [TimedEvent]),
    /// A black-box agent: its edits are out of sight.
    Agent,
}

/// The run's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retention {
    /// References the run's actions used.
    pub needed: u64,
    /// Of those, the ones not in what their step sent.
    pub lost: u64,
    /// The first step that lost one.
    pub first_lost_step: Option<u64>,
    /// One `reference_lost` event per loss.
    pub events: Vec<EventRow>,
}

impl Retention {
    /// `1 − lost / needed`; `None` when nothing was needed.
    pub fn ratio(&self) -> Option<f64> {
        (self.needed > 0).then(|| 1.0 - self.lost as f64 / self.needed as f64)
    }

    /// Writes the run's figures into `metrics`.
    pub fn fill(&self, metrics: &mut RunMetrics) {
        metrics.references_needed = self.needed;
        metrics.references_lost = self.lost;
        metrics.retention = self.ratio();
        metrics.references_first_lost_step = self.first_lost_step;
    }
}

/// The tool result that first held a span.
#[derive(Debug, Clone)]
struct Introduction {
    hash: u64,
    call_index: usize,
    tool: String,
    call_id: String,
}

/// Where a span was first seen in the run.
#[derive(Debug, Clone, Copy)]
enum Origin {
    /// In the original of a tool result (an index into the introductions).
    Result(usize),
    /// In the system prompt, a user message, the model's own turn, or an
    /// edited tool result: no reference to a tool result.
    Elsewhere,
}

/// The calls whose request shows a context (summary and auxiliary calls
/// send something else); `parent_call_id` tells a sub-agent's apart.
fn shows_context(row: &StepRow) -> bool {
    matches!(row.purpose.as_str(), "main" | "final_turn" | "escalation")
}

/// Measures `steps` (whose `call_index` is the request's place in `sent`
/// and `log`) and fills their `references_*` columns.
pub fn measure(steps: &mut [StepRow], sent: &SentLog, log: &[RequestRecord], editor: Editor<'_>) -> Retention {
    // An action per (context, step): the last call of the step answered (a retry repeats it).
    let mut acting: HashMap<(Option<&str>, u64), usize> = HashMap::new();
    for (row_index, row) in steps.iter().enumerate() {
        let answered = row.error.is_none() && sent.replies.get(row.call_index as usize).copied().flatten().is_some();
        if shows_context(row) && answered {
            acting.insert((row.parent_call_id.as_deref(), row.step), row_index);
        }
    }
    let mut table = SpanTable::default();
    let mut actions: HashMap<usize, Vec<u32>> = HashMap::new();
    for &row_index in acting.values() {
        let call = steps[row_index].call_index as usize;
        if let Some(Some(SentPart::Message(reply))) = sent.replies[call].map(|hash| sent.bodies.get(&hash)) {
            actions.insert(call, action_spans(reply).iter().map(|span| table.intern(span)).collect());
        }
    }
    let row_of: HashMap<usize, usize> = steps.iter().enumerate().map(|(index, row)| (row.call_index as usize, index)).collect();
    let mut walk = Walk {
        sent,
        table: &table,
        seen: HashSet::default(),
        holders: vec![Vec::new(); table.len()],
        origins: vec![None; table.len()],
        introductions: Vec::new(),
        results_seen: HashSet::new(),
    };
    // Per context, the calls whose requests showed it, in order.
    let mut context_calls: HashMap<Option<String>, Vec<usize>> = HashMap::new();
    let mut retention = Retention::default();
    for call in 0..sent.requests.len() {
        walk.request(call);
        // A request no step row stands for still sends parts and gets a reply.
        if let Some(row_index) = row_of.get(&call).copied() {
            let context = steps[row_index].parent_call_id.clone();
            if shows_context(&steps[row_index]) {
                context_calls.entry(context.clone()).or_default().push(call);
            }
            if let Some(spans) = actions.get(&call) {
                let references = walk.references(call, spans);
                let used = references.len() as u64;
                let mut lost_spans = Vec::new();
                for (span, intro) in references.into_iter().flatten() {
                    let intro = &walk.introductions[intro];
                    let calls = &context_calls[&context];
                    // The first request of this context after the original's that no longer sent it.
                    let removed = calls.iter().filter(|c| **c > intro.call_index).find(|c| !sent.requests[**c].contains(&intro.hash));
                    let in_context = calls.iter().any(|c| sent.requests[*c].contains(&intro.hash));
                    let removed_row = removed.filter(|_| in_context).and_then(|c| row_of.get(c)).map(|r| &steps[*r]);
                    lost_spans.push(table.name(span).to_owned());
                    let intro_row = row_of.get(&intro.call_index).map(|r| &steps[*r]);
                    retention.events.push(loss_event(&steps[row_index], table.name(span), (intro, intro_row), removed_row, log, editor));
                }
                let lost = lost_spans.len() as u64;
                let row = &mut steps[row_index];
                row.references_used = used;
                row.references_lost = lost;
                row.references_lost_spans = (!lost_spans.is_empty()).then(|| json!(lost_spans).to_string());
                retention.needed += used;
                retention.lost += lost;
                if lost > 0 && retention.first_lost_step.is_none() {
                    retention.first_lost_step = Some(row.step);
                }
            }
        }
        walk.reply(call);
    }
    retention
}

/// The walk through the log in the order parts were first sent.
struct Walk<'a> {
    sent: &'a SentLog,
    table: &'a SpanTable,
    /// The parts seen so far.
    seen: HashSet<u64, FastHash>,
    /// Per span, the parts that hold it, in the order first seen.
    holders: Vec<Vec<u64>>,
    origins: Vec<Option<Origin>>,
    introductions: Vec<Introduction>,
    /// Tool calls whose result has been sent: a later version is an edit.
    results_seen: HashSet<String>,
}

impl Walk<'_> {
    /// Takes in the parts request `call` is the first to send.
    fn request(&mut self, call: usize) {
        for hash in &self.sent.requests[call] {
            self.first_sight(*hash, call);
        }
    }

    /// Takes in the reply to request `call`: the model's own turn.
    fn reply(&mut self, call: usize) {
        if let Some(hash) = self.sent.replies[call] {
            self.first_sight(hash, call);
        }
    }

    fn first_sight(&mut self, hash: u64, call: usize) {
        if !self.seen.insert(hash) {
            return;
        }
        let (spans, origin) = match self.sent.bodies.get(&hash) {
            Some(SentPart::System(text)) => (self.table.find_in_all([text.as_str()]), Origin::Elsewhere),
            Some(SentPart::Message(message)) => {
                let texts = part_texts(message);
                let spans = self.table.find_in_all(texts.iter().map(|text| text.as_ref()));
                let origin = match message {
                    Message::ToolResult { call_id, tool_name, .. } if self.results_seen.insert(call_id.to_string()) => {
                        self.introductions.push(Introduction { hash, call_index: call, tool: tool_name.to_string(), call_id: call_id.to_string() });
                        Origin::Result(self.introductions.len() - 1)
                    }
                    _ => Origin::Elsewhere,
                };
                (spans, origin)
            }
            None => (Vec::new(), Origin::Elsewhere),
        };
        for span in &spans {
            self.origins[*span as usize].get_or_insert(origin);
            self.holders[*span as usize].push(hash);
        }
    }

    /// The references among an action's `spans` at request `call`, each
    /// with its introduction when the request no longer held it.
    fn references(&self, call: usize, spans: &[u32]) -> Vec<Option<(u32, usize)>> {
        let hashes = &self.sent.requests[call];
        spans
            .iter()
            .filter_map(|span| match self.origins[*span as usize] {
                Some(Origin::Result(intro)) => {
                    // The newest holder first: a kept reference is found sooner.
                    let held = self.holders[*span as usize].iter().rev().any(|holder| hashes.contains(holder));
                    Some((!held).then_some((*span, intro)))
                }
                _ => None,
            })
            .collect()
    }
}

/// The `reference_lost` event of `span` at `row`: the tool result that
/// introduced it (at `intro_row`), the step that first sent the context
/// without it, and the edit that did it there.
fn loss_event(
    row: &StepRow,
    span: &str,
    (intro, intro_row): (&Introduction, Option<&StepRow>),
    removed: Option<&StepRow>,
    log: &[RequestRecord],
    editor: Editor<'_>,
) -> EventRow {
    let edit = removed.map(|removed| edit_at(removed, log, editor));
    let payload = json!({
        "kind": "reference_lost",
        "span": span,
        "call_index": row.call_index,
        "introduced_by": { "tool": intro.tool, "call_id": intro.call_id, "step": intro_row.map(|r| r.step) },
        "removed_at_step": removed.map(|r| r.step),
        "edit": edit,
    });
    EventRow {
        step: row.step,
        at_ms: row.started_ms,
        kind: "reference_lost".to_owned(),
        layer: edit.as_ref().and_then(|e| e["layer"].as_u64()),
        strategy: edit.as_ref().and_then(|e| e["strategy"].as_str().map(str::to_owned)),
        payload: payload.to_string(),
        ..EventRow::default()
    }
}

/// What edited the context at `row`'s request: the loop's compaction at
/// that step, else the provider's context management, else the black-box
/// agent itself.
fn edit_at(row: &StepRow, log: &[RequestRecord], editor: Editor<'_>) -> Value {
    if let Editor::Loop(events) = editor {
        let compaction =
            events.iter().filter(|e| row.agent_depth == 0 && u64::from(e.step) == row.step).find_map(|e| Some((e.event.kind(), e.event.compaction()?)));
        if let Some((kind, figures)) = compaction {
            return json!({ "by": "loop", "event": kind, "layer": figures.layer, "strategy": figures.strategy });
        }
    }
    if let Some(note) = log.get(row.call_index as usize).and_then(|record| record.server_edit.as_deref()) {
        return json!({ "by": "provider", "strategy": "provider", "note": note });
    }
    match editor {
        Editor::Loop(_) => json!({ "by": "unknown" }),
        Editor::Agent => json!({ "by": "agent" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_agent::LoopEvent;
    use reloop_agent::event::ViewChange;
    use reloop_wire::ToolCall;

    fn call(id: &str, arguments: &str) -> Message {
        Message::assistant("", vec![ToolCall { id: id.into(), name: "read".into(), arguments: arguments.into() }])
    }

    fn result(id: &str, content: &str) -> Message {
        Message::ToolResult { call_id: id.into(), tool_name: "read".into(), content: content.into(), is_error: false }
    }

    /// A session's log, request by request: the parts each sent, the reply it got.
    #[derive(Default)]
    struct Session {
        sent: SentLog,
    }

    impl Session {
        fn request(&mut self, parts: &[Message], reply: Message) -> &mut Self {
            let mut hash_of = |part: &Message| {
                let part = SentPart::Message(part.clone());
                let known = self.sent.bodies.iter().find(|(_, body)| **body == part).map(|(hash, _)| *hash);
                known.unwrap_or_else(|| {
                    let hash = self.sent.bodies.len() as u64 + 1;
                    self.sent.bodies.insert(hash, part);
                    hash
                })
            };
            let hashes: Vec<u64> = parts.iter().map(&mut hash_of).collect();
            let reply = hash_of(&reply);
            self.sent.requests.push(hashes);
            self.sent.replies.push(Some(reply));
            self
        }

        fn measure(&self, editor: Editor<'_>) -> (Retention, Vec<StepRow>) {
            let mut steps: Vec<StepRow> =
                (0..self.sent.requests.len()).map(|i| StepRow { step: i as u64, call_index: i as u64, purpose: "main".into(), ..StepRow::default() }).collect();
            (measure(&mut steps, &self.sent, &[], editor), steps)
        }
    }

    /// Reads a file naming `ledger_svc`, then one more; the third request
    /// shows the first result as `shown` and its reply greps for the name.
    fn session(shown: Message) -> Session {
        let task = Message::user("Find the export service.");
        let first = call("c1", r#"{"path": "deploy/a.yaml"}"#);
        let found = result("c1", "runs_on: ledger_svc");
        let second = call("c2", r#"{"path": "deploy/b.yaml"}"#);
        let mut session = Session::default();
        session
            .request(std::slice::from_ref(&task), first.clone())
            .request(&[task.clone(), first.clone(), found], second.clone())
            .request(&[task, first, shown, second, result("c2", "b")], call("c3", r#"{"pattern": "ledger_svc"}"#));
        session
    }

    fn masked() -> Message {
        result("c1", "[Observation omitted: read returned 1 lines]")
    }

    #[test]
    fn a_kept_reference_is_needed_and_not_lost() {
        let (retention, steps) = session(result("c1", "runs_on: ledger_svc")).measure(Editor::Agent);
        assert_eq!((retention.needed, retention.lost, retention.ratio()), (1, 0, Some(1.0)));
        assert_eq!((steps[2].references_used, steps[2].references_lost, steps[2].references_lost_spans.as_deref()), (1, 0, None));
        assert!(retention.events.is_empty());
    }

    #[test]
    fn a_masked_reference_is_lost_and_its_event_names_the_result_the_step_and_the_edit() {
        let events = [TimedEvent {
            step: 2,
            at_ms: 0,
            event: LoopEvent::MicrocompactRan { strategy: "masking".into(), cleared: 1, tokens_before: 9, tokens_after: 5, change: ViewChange::default() },
        }];
        let (retention, steps) = session(masked()).measure(Editor::Loop(&events));
        assert_eq!((retention.needed, retention.lost, retention.ratio(), retention.first_lost_step), (1, 1, Some(0.0), Some(2)));
        assert_eq!(steps[2].references_lost_spans.as_deref(), Some(r#"["ledger_svc"]"#));
        let payload: Value = serde_json::from_str(&retention.events[0].payload).unwrap();
        assert_eq!(payload["span"], "ledger_svc");
        assert_eq!(payload["introduced_by"], json!({ "tool": "read", "call_id": "c1", "step": 1 }));
        assert_eq!(payload["removed_at_step"], 2);
        assert_eq!(payload["edit"], json!({ "by": "loop", "event": "microcompact_ran", "layer": 0, "strategy": "masking" }));
        assert_eq!((retention.events[0].step, retention.events[0].layer, retention.events[0].strategy.as_deref()), (2, Some(0), Some("masking")));
    }

    #[test]
    fn a_span_the_task_held_is_no_reference() {
        let task = Message::user("Find what runs on ledger_svc.");
        let mut log = Session::default();
        log.request(std::slice::from_ref(&task), call("c1", r#"{"path": "deploy/a.yaml"}"#));
        log.request(&[task.clone(), masked()], call("c2", r#"{"pattern": "ledger_svc"}"#));
        let (retention, _) = log.measure(Editor::Agent);
        assert_eq!((retention.needed, retention.ratio()), (0, None));
    }

    #[test]
    fn a_span_the_model_wrote_after_reading_it_is_not_lost_when_the_result_is_masked() {
        let task = Message::user("Find the export service.");
        let first = call("c1", r#"{"path": "deploy/a.yaml"}"#);
        let turn = |text: &str| Message::assistant(text, vec![ToolCall { id: "c2".into(), name: "read".into(), arguments: "{}".into() }]);
        let (said, silent) = (turn("It is ledger_svc."), turn(""));
        for (turn, lost) in [(said, 0), (silent, 1)] {
            let mut log = Session::default();
            log.request(std::slice::from_ref(&task), first.clone());
            log.request(&[task.clone(), first.clone(), result("c1", "runs_on: ledger_svc")], turn.clone());
            log.request(&[task.clone(), first.clone(), masked(), turn], call("c3", r#"{"pattern": "ledger_svc"}"#));
            let (retention, _) = log.measure(Editor::Agent);
            assert_eq!((retention.needed, retention.lost), (1, lost));
        }
    }

    #[test]
    fn a_summary_holding_the_span_keeps_it() {
        let task = Message::user("Find the export service.");
        for (summary, lost) in [("So far: the export runs on ledger_svc.", 0), ("So far: one file read.", 1)] {
            let mut log = Session::default();
            log.request(std::slice::from_ref(&task), call("c1", r#"{"path": "deploy/a.yaml"}"#));
            log.request(
                &[task.clone(), call("c1", r#"{"path": "deploy/a.yaml"}"#), result("c1", "runs_on: ledger_svc")],
                call("c2", r#"{"path": "deploy/b.yaml"}"#),
            );
            log.request(&[task.clone(), Message::user(summary)], call("c3", r#"{"pattern": "ledger_svc"}"#));
            let (retention, _) = log.measure(Editor::Agent);
            assert_eq!((retention.needed, retention.lost), (1, lost), "{summary}");
            if lost == 1 {
                let payload: Value = serde_json::from_str(&retention.events[0].payload).unwrap();
                assert_eq!(payload["edit"], json!({ "by": "agent" }), "a black-box agent's edit is its own");
            }
        }
    }
}
