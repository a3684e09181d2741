//! Stable tool-call ids: a replay matches the calls and results a client
//! sends back by their content, not by the ids it puts on them. Some
//! clients give the calls they receive ids of their own (Gemini's calls
//! have none on the wire, and an agent may renumber them), new on every
//! run; matched by id, such a request would diverge, and counted with its
//! ids, its tokens and cache prefixes would change from run to run. So
//! before anything else, a request's calls that the server did not send
//! under their id are matched by name and arguments to the calls it
//! served, in order, and take the served id, with every result that names
//! them. An agent that sends the served ids back is left as it is.

use std::collections::HashMap;

use reloop_wire::{Message, Prompt, Text, ToolCall};

/// The calls a session served on its main purpose, in order, as rendered.
#[derive(Debug, Default)]
pub struct ServedCalls {
    calls: Vec<ToolCall>,
    /// Each served id's position in `calls`; looked up for every call of
    /// every request, so foldhash rather than SipHash.
    positions: HashMap<Text, usize, foldhash::fast::RandomState>,
}

impl ServedCalls {
    /// Notes the calls of a turn just served.
    pub fn extend(&mut self, calls: &[ToolCall]) {
        for call in calls {
            self.positions.entry(call.id.clone()).or_insert(self.calls.len());
            self.calls.push(call.clone());
        }
    }

    /// `request` with the ids its client gave to served calls replaced by
    /// the served ones; `None` when every call already carries a served id
    /// (or none was served), the common case, which costs no copy.
    pub fn with_served_ids(&self, request: &Prompt) -> Option<Prompt> {
        let renamed = self.renames(request);
        if renamed.is_empty() {
            return None;
        }
        let mut request = request.clone();
        for message in &mut request.messages {
            match message {
                Message::Assistant { tool_calls, .. } => {
                    for call in tool_calls {
                        if let Some(id) = renamed.get(call.id.as_str()) {
                            call.id.clone_from(id);
                        }
                    }
                }
                Message::ToolResult { call_id, .. } => {
                    if let Some(id) = renamed.get(call_id.as_str()) {
                        call_id.clone_from(id);
                    }
                }
                Message::User { .. } => {}
            }
        }
        Some(request)
    }

    /// Client id → served id, for the request's calls whose id the server
    /// never sent: each takes the first later served call of the same name
    /// and arguments not yet taken (calls keep their order in a conversation).
    fn renames(&self, request: &Prompt) -> HashMap<Text, Text> {
        let mut renamed = HashMap::new();
        let mut next = 0;
        let calls = request.messages.iter().flat_map(|message| match message {
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        });
        for call in calls {
            if let Some(position) = self.positions.get(call.id.as_str()) {
                next = next.max(position + 1);
                continue;
            }
            let later = &self.calls[next.min(self.calls.len())..];
            let Some(offset) = later.iter().position(|served| same_call(served, call)) else { continue };
            renamed.insert(call.id.clone(), later[offset].id.clone());
            next += offset + 1;
        }
        renamed
    }
}

/// Same tool, same arguments (as JSON values when both parse, so key order
/// and spacing do not matter).
fn same_call(served: &ToolCall, sent: &ToolCall) -> bool {
    let json = |text: &str| serde_json::from_str::<serde_json::Value>(text).ok();
    served.name == sent.name
        && match (json(&served.arguments), json(&sent.arguments)) {
            (Some(a), Some(b)) => a == b,
            _ => served.arguments == sent.arguments,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    fn conversation(calls: Vec<ToolCall>) -> Prompt {
        let results = calls.iter().map(|c| Message::ToolResult { call_id: c.id.clone(), tool_name: c.name.clone(), content: "r".into(), is_error: false });
        let assistant = Message::Assistant { text: "".into(), tool_calls: calls.clone(), reasoning: Vec::new() };
        Prompt { messages: std::iter::once(Message::user("go")).chain([assistant]).chain(results).collect(), ..Prompt::default() }
    }

    #[test]
    fn calls_renamed_by_the_client_take_the_served_ids_by_content_and_order() {
        let served_calls = [call("call_000_0", "read", r#"{"path":"a"}"#), call("call_000_1", "read", r#"{"path":"b"}"#)];
        let mut served = ServedCalls::default();
        served.extend(&served_calls);
        let sent = conversation(vec![call("uuid-2", "read", r#"{ "path": "b" }"#), call("uuid-1", "read", r#"{"path":"a"}"#)]);
        let fixed = served.with_served_ids(&sent).unwrap();
        let ids: Vec<&str> = fixed
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::ToolResult { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        // Order is kept: `b` is found first, so `a` (served before it) is not renamed.
        assert_eq!(ids, ["call_000_1", "uuid-1"]);
        let in_order = conversation(vec![call("x", "read", r#"{"path":"a"}"#), call("y", "read", r#"{"path":"b"}"#)]);
        assert_eq!(served.with_served_ids(&in_order), Some(conversation(served_calls.to_vec())));
        assert_eq!(served.with_served_ids(&conversation(served_calls.to_vec())), None, "served ids are kept as sent");
        assert_eq!(served.with_served_ids(&conversation(vec![call("z", "write", r#"{"path":"a"}"#)])), None, "a call never served keeps its id");
    }
}
