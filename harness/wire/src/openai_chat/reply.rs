//! OpenAI Chat Completions from the neutral parts. Chat has one message per
//! reply, so the parts collapse into its fields: the text parts into
//! `content`, reasoning and thinking text into `reasoning_content` (as the
//! Chat-compatible reasoning providers send it), refusals into `refusal`,
//! tool calls into `tool_calls`; a stream sends them in that order
//! (`docs/recording-format.md` lists what Chat drops).

use serde::Serialize;
use serde_json::{Value, json};

use crate::openai_chat::{ChatCompletion, ChatUsage, CompletionChoice, CompletionMessage};
use crate::parts::{Part, lay_over};
use crate::reply::{CREATED, IdShape, Reply, ReplyMeta};
use crate::split::{argument_pieces, text_pieces};
use crate::{Format, sse};

mod laid_out;

/// The whole `chat.completion` body.
pub fn completion(reply: &Reply, meta: &ReplyMeta) -> Value {
    let mut completion = envelope(reply, meta);
    let mut message = json!({ "role": "assistant", "content": content(reply) });
    let reasoning = reasoning(reply);
    if !reasoning.is_empty() {
        message["reasoning_content"] = json!(reasoning.concat());
    }
    let refusal: Vec<&str> = refusals(reply).collect();
    message["refusal"] = if refusal.is_empty() { Value::Null } else { json!(refusal.concat()) };
    let recorded_here = reply.extra_for(Format::OpenaiChat).is_some();
    let calls: Vec<Value> = reply
        .tool_calls()
        .map(|call| {
            let mut whole = json!({ "id": call.id, "type": "function", "function": { "name": call.name, "arguments": call.arguments.to_wire() } });
            if recorded_here {
                lay_over(&mut whole, &call.extra);
            }
            whole
        })
        .collect();
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    let annotations: Vec<&Value> =
        reply.parts.iter().flat_map(|part| if let Part::Text { annotations, .. } = part { annotations.as_slice() } else { &[] }).collect();
    if !annotations.is_empty() {
        message["annotations"] = json!(annotations);
    }
    if let Some(extra) = reply.extra_for(Format::OpenaiChat) {
        lay_over(&mut message, &extra.message);
        lay_over(&mut completion["choices"][0], &extra.choice);
    }
    completion["choices"][0]["message"] = message;
    completion
}

/// The stream: a role chunk, reasoning, content and refusal deltas, each
/// tool call (id and name first, then its arguments), the finish chunk,
/// the usage chunk when the client asked for it, `[DONE]`; or, for a reply
/// recorded in another layout (`extra.chunks`), the recorded chunks.
pub fn stream(reply: &Reply, meta: &ReplyMeta) -> Vec<String> {
    if let Some(extra) = reply.extra_for(Format::OpenaiChat)
        && !extra.chunks.is_empty()
        && let Some(frames) = laid_out::stream(reply, meta, &extra.chunks)
    {
        return frames;
    }
    let whole = envelope(reply, meta);
    let mut frames = ChunkFrames::around(&whole);
    let recorded_here = reply.extra_for(Format::OpenaiChat).is_some();
    frames.push(&json!({ "role": "assistant", "content": content(reply).map(|_| ""), "refusal": null }), None);
    for part in &reply.parts {
        if let Part::Reasoning { .. } | Part::Thinking { .. } = part {
            let (text, chunks) = reasoning_of(part);
            for piece in text_pieces(&text, chunks) {
                frames.push(&Delta::ReasoningContent(piece), None);
            }
        }
    }
    for part in &reply.parts {
        if let Part::Text { text, chunks: sizes, .. } = part {
            for piece in text_pieces(text, sizes) {
                frames.push(&Delta::Content(piece), None);
            }
        }
    }
    for refusal in refusals(reply) {
        for piece in text_pieces(refusal, &[]) {
            frames.push(&Delta::Refusal(piece), None);
        }
    }
    for (index, call) in reply.tool_calls().enumerate() {
        let mut opening = json!({ "index": index, "id": call.id, "type": "function", "function": { "name": call.name, "arguments": "" } });
        if recorded_here {
            lay_over(&mut opening, &call.extra);
        }
        frames.push(&json!({ "tool_calls": [opening] }), None);
        let arguments = call.arguments.to_wire();
        for piece in argument_pieces(&arguments, &call.chunks) {
            frames.push(&Delta::ToolCalls([ArgumentsDelta { index, function: ArgumentsPiece { arguments: piece } }]), None);
        }
    }
    frames.push(&json!({}), Some(reply.finish_reason.as_openai_str()));
    let mut frames = frames.done;
    if meta.include_usage && !reply.no_usage {
        let mut usage = whole;
        usage["object"] = json!("chat.completion.chunk");
        usage["choices"] = json!([]);
        frames.push(sse::encode_frame(None, &crate::compact_json::compact_json(&usage)));
    }
    frames.push(sse::encode_frame(None, "[DONE]"));
    frames
}

/// `content`: the text parts joined; `null` when the reply only calls tools.
fn content(reply: &Reply) -> Option<String> {
    let text = reply.text();
    (!text.is_empty() || reply.tool_calls().next().is_none()).then_some(text)
}

fn refusals(reply: &Reply) -> impl Iterator<Item = &str> {
    reply.parts.iter().filter_map(|part| if let Part::Refusal { refusal } = part { Some(refusal.as_str()) } else { None })
}

/// The reasoning text of a reasoning or thinking part and its delta sizes.
fn reasoning_of(part: &Part) -> (String, &[usize]) {
    match part {
        Part::Reasoning { text, summary, chunks, .. } => (if text.is_empty() { summary.join("\n\n") } else { text.clone() }, chunks),
        Part::Thinking { thinking, chunks, .. } => (thinking.clone(), chunks),
        _ => (String::new(), &[]),
    }
}

fn reasoning(reply: &Reply) -> Vec<String> {
    reply.parts.iter().map(|part| reasoning_of(part).0).filter(|text| !text.is_empty()).collect()
}

/// The completion without its message: id, created, model, finish reason, usage.
fn envelope(reply: &Reply, meta: &ReplyMeta) -> Value {
    let message = CompletionMessage { role: "assistant".to_owned(), content: Some(String::new()), tool_calls: Vec::new(), refusal: None };
    let completion = ChatCompletion {
        id: reply.ids.response.clone().unwrap_or_else(|| IdShape::ChatCompletion.id(meta.request_index, 0)),
        object: "chat.completion".to_owned(),
        created: reply.ids.created.unwrap_or(CREATED),
        model: meta.model.clone(),
        choices: vec![CompletionChoice { index: 0, message, logprobs: None, finish_reason: reply.finish_reason.as_openai_str().to_owned() }],
        usage: None,
        system_fingerprint: None,
    };
    let mut completion = serde_json::to_value(completion).expect("plain JSON");
    completion["usage"] = reply.wire_usage_in(Format::OpenaiChat).cloned().unwrap_or_else(|| json!(ChatUsage::from_usage(&reply.usage)));
    if reply.no_usage
        && let Some(completion) = completion.as_object_mut()
    {
        completion.shift_remove("usage");
    }
    if let Some(fingerprint) = &reply.ids.system_fingerprint {
        completion["system_fingerprint"] = json!(fingerprint);
    }
    if let Some(extra) = reply.extra_for(Format::OpenaiChat) {
        lay_over(&mut completion, &extra.response);
    }
    completion
}

/// The frames of a stream's `chat.completion.chunk`s. Every chunk repeats
/// the envelope (id, created, model, fingerprint) around its one choice, so
/// the envelope is serialized once, as the text before and after the
/// choice, and each chunk writes only its delta and finish reason between.
struct ChunkFrames {
    /// `data: {"id":…,"object":"chat.completion.chunk",…,"choices":[`
    head: String,
    /// `]` and the envelope's fields after `choices` (usage aside), `}` and
    /// the blank line.
    tail: String,
    done: Vec<String>,
}

impl ChunkFrames {
    /// The frames of chunks carrying `whole`'s fields in its order, with
    /// `object` a chunk's and without `usage`.
    fn around(whole: &Value) -> Self {
        // Written field by field into the two texts, not through `format!`:
        // `Display` feeds its formatter a few bytes at a time.
        let (mut head, mut tail) = (b"data: {".to_vec(), b"]".to_vec());
        let mut past_choices = false;
        let chunk = json!("chat.completion.chunk");
        for (key, value) in whole.as_object().into_iter().flatten() {
            let value = match key.as_str() {
                "usage" => continue,
                "choices" => {
                    past_choices = true;
                    continue;
                }
                "object" => &chunk,
                _ => value,
            };
            let field = |text: &mut Vec<u8>| {
                serde_json::to_writer(&mut *text, key).expect("plain JSON");
                text.push(b':');
                serde_json::to_writer(&mut *text, value).expect("plain JSON");
            };
            if past_choices {
                tail.push(b',');
                field(&mut tail);
            } else {
                field(&mut head);
                head.push(b',');
            }
        }
        head.extend_from_slice(b"\"choices\":[");
        tail.extend_from_slice(b"}\n\n");
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("JSON is UTF-8");
        Self { head: text(head), tail: text(tail), done: Vec::new() }
    }

    /// One chunk: its choice's `delta`, and its `finish_reason` (`null` but on the last).
    fn push(&mut self, delta: &impl Serialize, finish_reason: Option<&str>) {
        let mut frame = Vec::with_capacity(self.head.len() + self.tail.len() + 96);
        frame.extend_from_slice(self.head.as_bytes());
        frame.extend_from_slice(b"{\"index\":0,\"delta\":");
        serde_json::to_writer(&mut frame, delta).expect("plain JSON");
        frame.extend_from_slice(b",\"logprobs\":null,\"finish_reason\":");
        serde_json::to_writer(&mut frame, &finish_reason).expect("plain JSON");
        frame.push(b'}');
        frame.extend_from_slice(self.tail.as_bytes());
        self.done.push(String::from_utf8(frame).expect("JSON is UTF-8"));
    }
}

/// A chunk's delta that carries one piece of the reply.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Delta<'a> {
    ReasoningContent(&'a str),
    Content(&'a str),
    Refusal(&'a str),
    ToolCalls([ArgumentsDelta<'a>; 1]),
}

/// A piece of one tool call's arguments.
#[derive(Serialize)]
struct ArgumentsDelta<'a> {
    index: usize,
    function: ArgumentsPiece<'a>,
}

/// The `function` of an [`ArgumentsDelta`]: only the arguments' next piece.
#[derive(Serialize)]
struct ArgumentsPiece<'a> {
    arguments: &'a str,
}
