//! Responses API compaction: `context_management` past `compact_threshold`
//! on `POST /v1/responses`, and `POST /v1/responses/compact`.
//!
//! A compacted window is the user messages kept verbatim and one
//! `compaction` item standing for everything else ([`window`]), as the API
//! returns it. When an item comes back, the model reads its summary where it
//! stands and nothing else that came before it but the user messages:
//! whether the client sends the window as returned, or keeps its older items
//! and appends the output (stateless chaining), the model sees the same
//! compacted history, as the API documents.

use reloop_wire::Prompt;
use reloop_wire::context_management::{COMPACTION_ITEM, ResponsesContextManagement, compaction_item, compaction_item_content, extra_field};
use reloop_wire::openai_chat::MessageContent;
use reloop_wire::openai_responses::{InputItem, MessageItem, ResponsesRequest, Role};
use serde_json::{Map, Value};

use super::sealed::Sealed;
use super::{Compaction, Prepared, Refusal, ServerSide, summary};
use crate::replay::tokens::{TokenCounter, content_hash};

/// Expands the compaction items `request` carries and, when it asks for
/// `context_management` compaction and its prompt passes the threshold,
/// compacts it: the model then reads the compacted window, which the reply
/// returns as its first output item.
///
/// # Errors
///
/// `context_management` does not parse or names another type, or a
/// compaction item was not made by this mock.
pub fn prepare(mut request: ResponsesRequest, counter: &TokenCounter) -> Result<Prepared, Refusal> {
    let management: Option<Vec<ResponsesContextManagement>> = extra_field(&request.extra, "context_management")?;
    request.extra.remove("context_management");
    let mut notes = Vec::new();
    let mut history = None;
    if let Some((dropped, whole)) = expand(&mut request)? {
        notes.push(format!("compaction item read: {dropped} earlier items dropped"));
        history = Some(ResponsesRequest { input: whole, ..request.clone() }.to_prompt());
    }
    let mut side = ServerSide::default();
    if let Some(compaction) = triggered(&mut request) {
        notes.push(format!("compaction_trigger: {} items compacted", request.input.len()));
        side.compaction = Some(compaction);
        side.note = Some(notes.join("; "));
        return Ok(Prepared { prompt: request.to_prompt(), breakpoints: None, side, history });
    }
    let mut threshold = None;
    for entry in management.iter().flatten() {
        if entry.kind != COMPACTION_ITEM {
            return Err(format!("context_management[].type: `{}` is not supported; the only type is `{COMPACTION_ITEM}`", entry.kind));
        }
        threshold = threshold.or(entry.compact_threshold);
    }
    if let Some(threshold) = threshold {
        let before = counter.count_prompt(&request.to_prompt()).total;
        if before > threshold {
            history = history.or_else(|| Some(request.to_prompt()));
            let (window, sealed, returned) = window(&request.input, false);
            request.input = window;
            expand(&mut request)?;
            let after = counter.count_prompt(&request.to_prompt()).total;
            notes.push(format!(
                "context_management compaction past {threshold} tokens: {} items compacted ({} tokens)",
                sealed.replaced.len(),
                before.saturating_sub(after)
            ));
            side.compaction = Some(Compaction { summary: sealed.summary, returned });
        }
    }
    side.note = (!notes.is_empty()).then(|| notes.join("; "));
    Ok(Prepared { prompt: request.to_prompt(), breakpoints: None, side, history })
}

/// The item Codex ends its input with to ask for a compaction on an
/// ordinary `POST /v1/responses` ("remote compaction v2").
const COMPACTION_TRIGGER: &str = "compaction_trigger";

/// A request whose input ends with a `compaction_trigger` item asks the
/// server to compact that input: the reply is the compaction item alone
/// (paused, like `/responses/compact`), and the prompt read is the whole
/// input without the trigger.
fn triggered(request: &mut ResponsesRequest) -> Option<Compaction> {
    let last = request.input.last()?;
    let InputItem::Other(item) = last else { return None };
    if item.get("type").and_then(Value::as_str) != Some(COMPACTION_TRIGGER) {
        return None;
    }
    request.input.pop();
    let (_, sealed, returned) = window(&request.input, true);
    Some(Compaction { summary: sealed.summary, returned })
}

/// `POST /v1/responses/compact`: the compacted window of `request`'s input
/// (its `output`), and the prompt the compaction read, which is what is
/// counted and priced (compaction items it carries expanded first).
///
/// # Errors
///
/// A compaction item it carries was not made by this mock.
pub fn compact(mut request: ResponsesRequest) -> Result<(Prompt, Vec<InputItem>, String), Refusal> {
    expand(&mut request)?;
    let (output, sealed, _) = window(&request.input, true);
    Ok((request.to_prompt(), output, sealed.summary))
}

/// The compacted window of `input`: its user messages, then one compaction
/// item sealing the summary of the whole input and the items it replaced;
/// with what the reply returns of that item (`pause`: it alone).
fn window(input: &[InputItem], pause: bool) -> (Vec<InputItem>, Sealed, reloop_wire::context_management::Compaction) {
    let (kept, replaced): (Vec<&InputItem>, Vec<&InputItem>) = input.iter().partition(|item| is_user_message(item));
    let whole = ResponsesRequest { input: input.to_vec(), ..empty_request() };
    let sealed = Sealed {
        summary: summary::of(&whole.to_prompt().messages, None),
        replaced: replaced.iter().filter_map(|item| serde_json::to_value(item).ok()).collect(),
    };
    let content = sealed.seal();
    let id = format!("cmp_{:016x}", content_hash(&content));
    let item = compaction_item(&id, &content);
    let window = kept.into_iter().cloned().chain([InputItem::Other(item)]).collect();
    (window, sealed, reloop_wire::context_management::Compaction { id: Some(id), content, pause })
}

fn is_user_message(item: &InputItem) -> bool {
    matches!(item, InputItem::Message(message) if message.role == Role::User)
}

fn empty_request() -> ResponsesRequest {
    ResponsesRequest {
        model: String::new(),
        instructions: None,
        input: Vec::new(),
        tools: Vec::new(),
        tool_choice: None,
        stream: false,
        max_output_tokens: None,
        store: None,
        extra: Map::new(),
    }
}

/// Reads the last compaction item of `request`'s input as the model does:
/// its summary in its place, and before it only the user messages. Returns,
/// when there was one, how many other items before it were dropped, and the
/// whole input: the user messages, the items the compaction replaced, then
/// those after it.
fn expand(request: &mut ResponsesRequest) -> Result<Option<(usize, Vec<InputItem>)>, Refusal> {
    let Some(at) = request.input.iter().rposition(|item| matches!(item, InputItem::Other(value) if compaction_item_content(value).is_some())) else {
        return Ok(None);
    };
    let InputItem::Other(item) = &request.input[at] else { return Ok(None) };
    let sealed = Sealed::open(compaction_item_content(item).unwrap_or_default())?;
    let before: Vec<InputItem> = request.input.drain(..=at).collect();
    let dropped = before.len() - 1 - before.iter().filter(|item| is_user_message(item)).count();
    let summary = InputItem::Message(MessageItem {
        kind: Some("message".into()),
        id: None,
        role: Role::User,
        content: MessageContent::Text(sealed.summary.into()),
        status: None,
        extra: Map::new(),
    });
    let kept: Vec<InputItem> = before.into_iter().filter(is_user_message).collect();
    let replaced = sealed.replaced.iter().filter_map(|item| serde_json::from_value::<InputItem>(item.clone()).ok());
    let whole = kept.iter().cloned().chain(replaced).chain(request.input.iter().cloned()).collect();
    request.input.splice(..0, kept.into_iter().chain([summary]));
    Ok(Some((dropped, whole)))
}

/// The body of a `/responses/compact` reply: the window as `output`, with
/// the usage the session accounted for the request.
pub fn compact_body(output: &[InputItem], record: &crate::RequestRecord) -> Value {
    serde_json::json!({
        "id": format!("resp_compact_{:05}", record.index),
        "object": "response.compaction",
        "created_at": reloop_wire::reply::CREATED,
        "output": output.iter().filter_map(|item| serde_json::to_value(item).ok()).collect::<Vec<Value>>(),
        "usage": {
            "input_tokens": record.input_tokens,
            "input_tokens_details": { "cached_tokens": record.cached_tokens },
            "output_tokens": record.output_tokens,
            "output_tokens_details": { "reasoning_tokens": 0 },
            "total_tokens": record.input_tokens + record.output_tokens,
        },
    })
}

#[cfg(test)]
mod tests;
