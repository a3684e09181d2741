//! A Chat stream sent chunk for chunk as recorded: the reply's pieces, cut
//! as its parts' `chunks` say, placed in the recorded chunks with the
//! fields each repeated or left empty (see [`layout`](crate::openai_chat::layout)).
//! Faults apply as to any stream: the frames are cut, stalled or garbled
//! by the server, and arguments truncated by a fault are still all sent
//! (the last chunk of a call takes what its recorded ones do not hold; a
//! recorded chunk whose piece ran out sends it empty).

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Map, Value, json};

use super::{envelope, reasoning_of, refusals};
use crate::openai_chat::layout::{ChunkField, ChunkLayout, TEXT_FIELDS, tool_slot};
use crate::parts::{Part, lay_over};
use crate::reply::{Reply, ReplyMeta};
use crate::split::{argument_pieces, text_pieces};
use crate::sse;

/// The stream in `layout`, or None when the reply has a piece the layout
/// has no chunk for (an edited recording): it is then streamed OpenAI's way.
pub(super) fn stream(reply: &Reply, meta: &ReplyMeta, layout: &[ChunkLayout]) -> Option<Vec<String>> {
    let mut pieces = Pieces::of(reply, layout)?;
    let whole = envelope(reply, meta);
    let send_usage = meta.include_usage && !reply.no_usage;
    let mut frames = Vec::with_capacity(layout.len() + 1);
    for (at, chunk) in layout.iter().enumerate() {
        let piece = chunk.piece.as_deref().map(|slot| (slot, pieces.take(slot, at)));
        let usage = send_usage && chunk.has(ChunkField::Usage);
        let finish = chunk.has(ChunkField::FinishReason).then(|| reply.finish_reason.as_openai_str());
        let only_usage = chunk.has(ChunkField::NoChoice) || piece.is_none() && chunk.call.is_none() && finish.is_none();
        if chunk.has(ChunkField::Usage) && !usage && only_usage {
            // The chunk only brought the usage, which this client did not ask for.
            continue;
        }
        let choices = if chunk.has(ChunkField::NoChoice) {
            json!([])
        } else {
            let mut delta = delta(reply, chunk, piece);
            lay_over(&mut delta, &chunk.delta);
            let mut choice = json!({ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish });
            lay_over(&mut choice, &chunk.choice);
            json!([choice])
        };
        let mut frame = whole.clone();
        frame["object"] = json!("chat.completion.chunk");
        frame["choices"] = choices;
        if let Some(frame) = frame.as_object_mut() {
            if !usage {
                frame.shift_remove("usage");
            }
            if chunk.has(ChunkField::NoSystemFingerprint) {
                frame.shift_remove("system_fingerprint");
            }
            if let (Some(own), Some(extra)) = (&chunk.envelope, reply.extra_for(crate::Format::OpenaiChat)) {
                for key in extra.response.keys() {
                    frame.shift_remove(key);
                }
                frame.extend(own.iter().map(|(key, value)| (key.clone(), value.clone())));
            }
        }
        frames.push(sse::encode_frame(None, &crate::compact_json::compact_json(&frame)));
    }
    frames.push(sse::encode_frame(None, "[DONE]"));
    Some(frames)
}

/// One recorded chunk's delta around its piece (`(slot, text)`).
fn delta(reply: &Reply, chunk: &ChunkLayout, piece: Option<(&str, String)>) -> Value {
    let mut delta = Map::new();
    if chunk.has(ChunkField::Role) {
        delta.insert("role".into(), json!("assistant"));
    }
    let (slot, mut text) = piece.map_or((None, None), |(slot, text)| (Some(slot), Some(text)));
    for (field, empty, null) in TEXT_FIELDS {
        let value = if slot == Some(field) {
            text.take().map(Value::String)
        } else if chunk.has(empty) {
            Some(json!(""))
        } else {
            chunk.has(null).then_some(Value::Null)
        };
        if let Some(value) = value {
            delta.insert(field.into(), value);
        }
    }
    let index = slot.and_then(|slot| slot.strip_prefix("tool:")).and_then(|index| index.parse().ok()).or(chunk.call.map(|index| index as usize));
    if let Some(index) = index
        && let Some(call) = reply.tool_calls().nth(index)
    {
        let mut entry = json!({ "index": index });
        if chunk.has(ChunkField::CallId) {
            entry["id"] = json!(call.id);
        }
        if chunk.has(ChunkField::CallType) {
            entry["type"] = json!("function");
        }
        let mut function = json!({});
        if chunk.has(ChunkField::CallName) {
            function["name"] = json!(call.name);
        }
        function["arguments"] = json!(text.unwrap_or_default());
        entry["function"] = function;
        if chunk.has(ChunkField::CallId) {
            lay_over(&mut entry, &call.extra);
        }
        delta.insert("tool_calls".into(), json!([entry]));
    }
    Value::Object(delta)
}

/// Each slot's pieces still to send, and the position of the last chunk
/// that carries one of them.
struct Pieces {
    slots: BTreeMap<String, (VecDeque<String>, usize)>,
}

impl Pieces {
    /// The reply's pieces by slot; None when one has no chunk in `layout`.
    fn of(reply: &Reply, layout: &[ChunkLayout]) -> Option<Self> {
        let mut pieces: BTreeMap<String, VecDeque<String>> = BTreeMap::new();
        let mut add = |slot: String, cut: Vec<&str>| pieces.entry(slot).or_default().extend(cut.into_iter().map(str::to_owned));
        for part in &reply.parts {
            match part {
                Part::Reasoning { .. } | Part::Thinking { .. } => {
                    let (text, chunks) = reasoning_of(part);
                    add("reasoning_content".into(), text_pieces(&text, chunks));
                }
                Part::Text { text, chunks, .. } => add("content".into(), text_pieces(text, chunks)),
                _ => {}
            }
        }
        for refusal in refusals(reply) {
            add("refusal".into(), text_pieces(refusal, &[]));
        }
        for (index, call) in reply.tool_calls().enumerate() {
            add(tool_slot(index), argument_pieces(&call.arguments.to_wire(), &call.chunks));
        }
        let last = |slot: &str| layout.iter().rposition(|chunk| chunk.piece.as_deref() == Some(slot));
        let slots = pieces.into_iter().filter(|(_, cut)| cut.iter().any(|piece| !piece.is_empty()));
        let slots = slots.map(|(slot, cut)| Some((slot.clone(), (cut, last(&slot)?)))).collect::<Option<_>>()?;
        Some(Self { slots })
    }

    /// The piece of `slot` the chunk at `at` carries: the next one, all
    /// that are left on the slot's last chunk, or empty when none is left.
    fn take(&mut self, slot: &str, at: usize) -> String {
        let Some((cut, last)) = self.slots.get_mut(slot) else { return String::new() };
        if at == *last { cut.drain(..).collect() } else { cut.pop_front().unwrap_or_default() }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::Format;
    use crate::codec::{decode_reply, encode_reply_stream};
    use crate::parts::{Arguments, Part};
    use crate::reply::{Reply, ReplyMeta};
    use crate::testing::reply_of;

    /// An OpenRouter stream (simonw-llm's cassette, shortened): `role` in
    /// every chunk, two openings with `content: ""`, the call's id, type and
    /// name repeated, no finish reason, the usage beside a choice and
    /// without the fingerprint.
    fn recorded() -> Vec<Value> {
        let chunk = |delta: Value| {
            json!({ "id": "gen-1", "provider": "Novita", "model": "kimi", "object": "chat.completion.chunk", "created": 7,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": null, "native_finish_reason": null, "logprobs": null }], "system_fingerprint": "fp_1" })
        };
        let call = |arguments: &str| json!({ "role": "assistant", "content": null, "tool_calls": [{ "index": 0, "id": "0", "type": "function", "function": { "name": "llm_version", "arguments": arguments } }] });
        let mut usage = chunk(json!({ "role": "assistant", "content": "" }));
        usage["usage"] = json!({ "prompt_tokens": 57, "completion_tokens": 17, "total_tokens": 74, "cost": 0.00007159 });
        usage.as_object_mut().unwrap().shift_remove("system_fingerprint");
        vec![
            chunk(json!({ "role": "assistant", "content": "" })),
            chunk(json!({ "role": "assistant", "content": "" })),
            chunk(call("")),
            chunk(call("{}")),
            usage,
        ]
    }

    fn reply() -> Reply {
        let stream: String = recorded().iter().map(|chunk| format!("data: {chunk}\n\n")).chain(["data: [DONE]\n\n".into()]).collect();
        reply_of(decode_reply(Format::OpenaiChat, &stream, true).unwrap())
    }

    fn sent(reply: &Reply, include_usage: bool) -> Vec<Value> {
        let meta = ReplyMeta { request_index: 0, model: "kimi".into(), include_usage, tools: Vec::new() };
        let frames = encode_reply_stream(Format::OpenaiChat, reply, &meta);
        assert_eq!(frames.last().map(String::as_str), Some("data: [DONE]\n\n"));
        frames[..frames.len() - 1].iter().map(|frame| serde_json::from_str(frame.strip_prefix("data: ").unwrap().trim_end()).unwrap()).collect()
    }

    fn arguments(chunks: &[Value]) -> Vec<&str> {
        chunks.iter().filter_map(|chunk| chunk.pointer("/choices/0/delta/tool_calls/0/function/arguments")?.as_str()).collect()
    }

    #[test]
    fn a_gateways_stream_is_sent_chunk_for_chunk_as_recorded() {
        let reply = reply();
        let Some(Part::ToolCall(call)) = reply.parts.first() else { panic!("{:?}", reply.parts) };
        assert_eq!(call.name, "llm_version", "a name repeated with the call's id is not a second fragment");
        assert_eq!(sent(&reply, true), recorded());
    }

    #[test]
    fn usage_not_asked_for_leaves_out_the_chunk_that_only_brought_it() {
        let recorded = recorded();
        assert_eq!(sent(&reply(), false), recorded[..4]);
    }

    #[test]
    fn truncated_or_longer_arguments_all_go_in_the_recorded_chunks() {
        let mut reply = reply();
        let Some(Part::ToolCall(call)) = reply.parts.first_mut() else { panic!() };
        call.arguments = Arguments::Raw(r#"{"path":"a.rs","line":1200}"#.into());
        assert_eq!(arguments(&sent(&reply, true)), ["", r#"{"path":"a.rs","line":1200}"#], "the call's last chunk takes what is left");
        let Some(Part::ToolCall(call)) = reply.parts.first_mut() else { panic!() };
        call.arguments = Arguments::Raw(String::new());
        call.chunks.clear();
        assert_eq!(arguments(&sent(&reply, true)), ["", ""], "a chunk whose piece ran out sends it empty");
    }

    #[test]
    fn a_piece_the_layout_has_no_chunk_for_is_streamed_openais_way() {
        let mut reply = reply();
        reply.parts.insert(0, Part::Text { text: "Checking.".into(), id: None, annotations: Vec::new(), chunks: Vec::new(), extra: Default::default() });
        let chunks = sent(&reply, true);
        let roles = chunks.iter().filter(|chunk| chunk.pointer("/choices/0/delta/role").is_some()).count();
        assert_eq!((roles, chunks[1]["choices"][0]["delta"]["content"].as_str()), (1, Some("Checking.")));
    }
}
