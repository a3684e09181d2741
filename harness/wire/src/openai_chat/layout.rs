//! A recorded Chat stream's chunk layout, kept when it is not OpenAI's.
//!
//! OpenAI sends `role` once, a call's `id`, `type` and name once (on the
//! call's opening), one finish chunk and a usage chunk without choices;
//! reloop's renderer streams every reply that way. OpenAI-compatible
//! gateways do not always: OpenRouter repeats `role` in every chunk (the
//! usage chunk, which carries a choice, too), repeats the call's id, opens
//! twice with `content: ""` and may send no finish reason. The SDKs
//! concatenate what is repeated (`assistantassistant…`), so a replay that
//! streams such a reply OpenAI's way gives them a different object. The
//! reader then keeps, per recorded chunk, which piece it carried and which
//! fields it repeated or left empty; the renderer sends exactly those
//! chunks. A layout an SDK cannot tell from OpenAI's is not kept, so the
//! recordings of OpenAI-like streams stay as small as before.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::parts::{Extra, unmodelled};

/// One chunk of a recorded Chat stream: the piece it carried (the next
/// delta of that slot, as the parts' `chunks` cut them) and the fields
/// around it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChunkLayout {
    /// The slot of the piece it carried: `content`, `reasoning_content`,
    /// `refusal` or `tool:N` (call N's arguments); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "slot")]
    #[schemars(pattern(r"^(content|reasoning_content|refusal|tool:[0-9]+)$"))]
    pub piece: Option<String>,
    /// The tool call its delta named without a piece (`arguments: ""`, as
    /// a call's opening does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
    /// The fields it sent besides the piece.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub with: Vec<ChunkField>,
    /// Its choice's fields reloop does not model (OpenRouter's
    /// `native_finish_reason`), laid over the choice.
    #[serde(default, skip_serializing_if = "Extra::is_empty")]
    pub choice: Extra,
    /// Its delta's fields reloop does not model (OpenRouter's and Groq's
    /// `reasoning` pieces, Groq's `executed_tools`), laid over the delta:
    /// an SDK accumulates them into the message as it does the text.
    #[serde(default, skip_serializing_if = "Extra::is_empty")]
    pub delta: Extra,
    /// The chunk's own fields around its choices that reloop does not
    /// model, when the recorded chunks differ in them (Groq's `x_groq`:
    /// an id first, the usage last); the chunk carries exactly these.
    /// Absent: those of the response (`ExtraFields::response`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope: Option<Extra>,
}

/// The fields of a delta that reloop models.
const DELTA: &[&str] = &["role", "content", "reasoning_content", "refusal", "tool_calls"];

/// A field a recorded chunk sent besides its piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChunkField {
    /// The delta's `role: assistant`.
    Role,
    /// `content: ""` (not the piece).
    ContentEmpty,
    /// `content: null`.
    ContentNull,
    /// `reasoning_content: ""` (not the piece).
    ReasoningContentEmpty,
    /// `reasoning_content: null`.
    ReasoningContentNull,
    /// `refusal: ""` (not the piece).
    RefusalEmpty,
    /// `refusal: null`.
    RefusalNull,
    /// The call entry's `id`.
    CallId,
    /// The call entry's `type: function`.
    CallType,
    /// The call entry's `function.name`.
    CallName,
    /// The choice's `finish_reason` (the reply's).
    FinishReason,
    /// The usage rode in this chunk.
    Usage,
    /// The chunk had no choice (`choices: []`, OpenAI's usage chunk).
    NoChoice,
    /// The chunk left out the `system_fingerprint` the others carried (an
    /// SDK keeps the last chunk's).
    NoSystemFingerprint,
}

/// The text fields of a delta, each with its empty and null forms.
pub(crate) const TEXT_FIELDS: [(&str, ChunkField, ChunkField); 3] = [
    ("content", ChunkField::ContentEmpty, ChunkField::ContentNull),
    ("reasoning_content", ChunkField::ReasoningContentEmpty, ChunkField::ReasoningContentNull),
    ("refusal", ChunkField::RefusalEmpty, ChunkField::RefusalNull),
];

/// Whether a text field's `piece` is one of its deltas: the role chunk's
/// empty `content` opens the message, it is not.
pub(crate) fn is_text_delta(delta: &Value, piece: &str) -> bool {
    !(piece.is_empty() && delta.get("role").is_some())
}

/// Whether a call's arguments `piece` is one of its deltas: the opening's
/// `""` beside the call's id is not.
pub(crate) fn is_arguments_delta(call: &Value, piece: &str) -> bool {
    !(piece.is_empty() && call.get("id").is_some_and(Value::is_string))
}

/// A `piece` as written: one of the slots, so a misspelt one is an error
/// naming the field rather than a piece never sent.
fn slot<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let slot = String::deserialize(deserializer)?;
    let known = TEXT_FIELDS.iter().any(|(field, ..)| *field == slot) || slot.strip_prefix("tool:").is_some_and(|index| index.parse::<u32>().is_ok());
    if known {
        Ok(Some(slot))
    } else {
        Err(serde::de::Error::custom(format!("unknown piece `{slot}`, expected content, reasoning_content, refusal or tool:N")))
    }
}

/// The slot name of call `index`'s arguments.
pub(crate) fn tool_slot(index: usize) -> String {
    format!("tool:{index}")
}

impl ChunkLayout {
    /// Whether it sent `field`.
    pub fn has(&self, field: ChunkField) -> bool {
        self.with.contains(&field)
    }

    /// The layout of one recorded chunk, its pieces the deltas the reader
    /// counts. None when it carried more than one piece or call, or a
    /// choice other than the first (`n > 1`), which a layout cannot say
    /// (the reply is then streamed OpenAI's way).
    pub(crate) fn of_chunk(chunk: &Value) -> Option<Self> {
        let choices = chunk.get("choices").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        if choices.iter().any(|choice| choice.get("index").and_then(Value::as_u64).unwrap_or_default() != 0) {
            return None;
        }
        let mut layout = Self::default();
        if chunk.get("system_fingerprint").is_none() {
            layout.with.push(ChunkField::NoSystemFingerprint);
        }
        if chunk.get("usage").is_some_and(Value::is_object) {
            layout.with.push(ChunkField::Usage);
        }
        let Some(choice) = choices.first() else {
            layout.with.push(ChunkField::NoChoice);
            return Some(layout);
        };
        if choice.get("finish_reason").is_some_and(|reason| !reason.is_null()) {
            layout.with.push(ChunkField::FinishReason);
        }
        layout.choice = unmodelled(choice, &["index", "delta", "logprobs", "finish_reason"]);
        let delta = choice.get("delta").cloned().unwrap_or_default();
        layout.delta = unmodelled(&delta, DELTA);
        if delta.get("role").is_some() {
            layout.with.push(ChunkField::Role);
        }
        let mut pieces = Vec::new();
        for (field, empty, null) in TEXT_FIELDS {
            match delta.get(field) {
                Some(Value::Null) => layout.with.push(null),
                Some(Value::String(piece)) if is_text_delta(&delta, piece) => pieces.push(field.to_owned()),
                Some(Value::String(_)) => layout.with.push(empty),
                _ => {}
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        if let [call] = calls {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or_default();
            for (field, flag) in [("/id", ChunkField::CallId), ("/type", ChunkField::CallType), ("/function/name", ChunkField::CallName)] {
                if call.pointer(field).is_some_and(Value::is_string) {
                    layout.with.push(flag);
                }
            }
            let slot = tool_slot(index as usize);
            match call.pointer("/function/arguments").and_then(Value::as_str) {
                Some(piece) if is_arguments_delta(call, piece) => pieces.push(slot),
                _ => layout.call = Some(u32::try_from(index).ok()?),
            }
        } else if calls.len() > 1 {
            return None;
        }
        if pieces.len() > 1 {
            return None;
        }
        layout.piece = pieces.pop();
        Some(layout)
    }
}

/// Whether an SDK accumulates from `layout` what it does from reloop's
/// rendering of the same reply (OpenAI's layout): `role` on the first
/// chunk with a choice only; empty and null fields only there, with
/// `content` as reloop sends it when the reply has no text (`null` beside
/// calls, else `""`) and no empty reasoning or refusal; a call's `id`,
/// `type` and name together on its opening only; one finish chunk with
/// nothing after it but choiceless chunks; usage only in a chunk without a
/// choice; the fingerprint on the last chunk (an SDK keeps the last
/// chunk's; the reader drops [`ChunkField::NoSystemFingerprint`] from a
/// stream that had none). Chunks without a choice and without usage
/// (Azure's prompt filter results) add nothing. `has_text` and `has_calls`
/// describe the reply's parts.
pub fn is_openai_like(layout: &[ChunkLayout], has_text: bool, has_calls: bool) -> bool {
    use ChunkField::*;
    let mut with_choice = layout.iter().filter(|chunk| !chunk.has(NoChoice));
    let content_blank = if has_calls { ContentNull } else { ContentEmpty };
    let first_ok = with_choice.next().is_some_and(|first| {
        first.has(Role)
            && (has_text || first.has(content_blank))
            && ![ReasoningContentEmpty, ReasoningContentNull, RefusalEmpty].iter().any(|field| first.has(*field))
    });
    let blanks = [ContentEmpty, ContentNull, ReasoningContentEmpty, ReasoningContentNull, RefusalEmpty, RefusalNull, Role];
    let rest_plain = with_choice.all(|chunk| !blanks.iter().any(|field| chunk.has(*field)));
    let call_fields = [CallId, CallType, CallName];
    let calls_ok = layout.iter().all(|chunk| match chunk.call {
        Some(_) => call_fields.iter().all(|field| chunk.has(*field)),
        None => !call_fields.iter().any(|field| chunk.has(*field)),
    });
    let finishes: Vec<usize> = layout.iter().enumerate().filter(|(_, chunk)| chunk.has(FinishReason)).map(|(at, _)| at).collect();
    let finish_ok = matches!(finishes[..], [at] if layout[at + 1..].iter().all(|chunk| chunk.has(NoChoice)));
    let usage_ok = layout.iter().all(|chunk| !chunk.has(Usage) || chunk.has(NoChoice));
    let fingerprint_ok = layout.last().is_some_and(|last| !last.has(NoSystemFingerprint));
    // What reloop does not model rides only in the chunks it came in.
    let nothing_unmodelled = layout.iter().all(|chunk| chunk.choice.is_empty() && chunk.delta.is_empty() && chunk.envelope.is_none());
    first_ok && rest_plain && calls_ok && finish_ok && usage_ok && fingerprint_ok && nothing_unmodelled
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(mut chunk: Value) -> Option<ChunkLayout> {
        chunk["system_fingerprint"] = json!("fp_1");
        ChunkLayout::of_chunk(&chunk)
    }

    fn choice(delta: Value, finish: Value) -> Value {
        json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
    }

    #[test]
    fn a_chunk_says_its_piece_and_what_it_repeated() {
        let opening = choice(
            json!({ "role": "assistant", "content": null, "tool_calls": [{ "index": 0, "id": "0", "type": "function", "function": { "name": "f", "arguments": "" } }] }),
            Value::Null,
        );
        let with = vec![ChunkField::Role, ChunkField::ContentNull, ChunkField::CallId, ChunkField::CallType, ChunkField::CallName];
        assert_eq!(of(opening), Some(ChunkLayout { piece: None, call: Some(0), with, ..ChunkLayout::default() }));
        let repeated =
            choice(json!({ "role": "assistant", "content": null, "tool_calls": [{ "index": 0, "id": "0", "function": { "arguments": "{}" } }] }), Value::Null);
        assert_eq!(of(repeated).unwrap().piece.as_deref(), Some("tool:0"));
        let mut usage = choice(json!({ "role": "assistant", "content": "" }), json!("stop"));
        usage["usage"] = json!({ "prompt_tokens": 1 });
        usage["choices"][0]["native_finish_reason"] = json!("stop");
        let usage = of(usage).unwrap();
        assert_eq!(usage.with, [ChunkField::Usage, ChunkField::FinishReason, ChunkField::Role, ChunkField::ContentEmpty]);
        assert_eq!(usage.choice, json!({ "native_finish_reason": "stop" }).as_object().unwrap().clone());
        assert_eq!(of(json!({ "choices": [], "usage": { "prompt_tokens": 1 } })).unwrap().with, [ChunkField::Usage, ChunkField::NoChoice]);
        let unprinted = ChunkLayout::of_chunk(&json!({ "choices": [] })).unwrap();
        assert_eq!(unprinted.with, [ChunkField::NoSystemFingerprint, ChunkField::NoChoice]);
    }

    #[test]
    fn a_written_piece_must_name_a_slot() {
        let read = |piece: &str| serde_json::from_value::<ChunkLayout>(json!({ "piece": piece }));
        assert_eq!(read("tool:3").unwrap().piece.as_deref(), Some("tool:3"));
        assert_eq!(read("reasoning_content").unwrap().piece.as_deref(), Some("reasoning_content"));
        for wrong in ["contnet", "tool:", "tool:x"] {
            let error = read(wrong).unwrap_err().to_string();
            assert!(error.contains(&format!("unknown piece `{wrong}`")), "{error}");
        }
    }

    #[test]
    fn two_pieces_or_two_calls_in_one_chunk_or_a_second_choice_cannot_be_laid_out() {
        assert_eq!(of(json!({ "choices": [{ "index": 1, "delta": { "content": "a" } }] })), None);
        assert_eq!(of(choice(json!({ "content": "a", "refusal": "b" }), Value::Null)), None);
        let call = |index| json!({ "index": index, "id": "c", "function": { "name": "f", "arguments": "" } });
        assert_eq!(of(choice(json!({ "tool_calls": [call(0), call(1)] }), Value::Null)), None);
    }

    fn layout(chunks: &[Value]) -> Vec<ChunkLayout> {
        chunks.iter().map(|chunk| of(chunk.clone()).unwrap()).collect()
    }

    #[test]
    fn openai_streams_are_openai_like_and_repeats_are_not() {
        let opening = json!({ "role": "assistant", "content": null, "tool_calls": [{ "index": 0, "id": "c", "type": "function", "function": { "name": "f", "arguments": "" } }] });
        let openai = layout(&[
            choice(opening, Value::Null),
            choice(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{}" } }] }), Value::Null),
            choice(json!({}), json!("tool_calls")),
            json!({ "choices": [], "usage": { "prompt_tokens": 1 } }),
        ]);
        assert!(is_openai_like(&openai, false, true));
        assert!(!is_openai_like(&openai, false, false), "a reply without calls opens with content \"\"");
        let text =
            layout(&[choice(json!({ "role": "assistant", "content": "", "refusal": null }), Value::Null), choice(json!({ "content": "Hi" }), json!("stop"))]);
        assert!(is_openai_like(&text, true, false));
        let mut repeated = text.clone();
        repeated[1].with.push(ChunkField::Role);
        assert!(!is_openai_like(&repeated, true, false), "role twice");
        assert!(!is_openai_like(&text[..1], true, false), "no finish reason");
        let mut usage_in_choice = text.clone();
        usage_in_choice[1].with.push(ChunkField::Usage);
        assert!(!is_openai_like(&usage_in_choice, true, false), "usage beside a choice");
        let mut unprinted = text;
        unprinted[0].with.push(ChunkField::NoSystemFingerprint);
        assert!(is_openai_like(&unprinted, true, false), "an SDK keeps the last chunk's fingerprint");
        unprinted[1].with.push(ChunkField::NoSystemFingerprint);
        assert!(!is_openai_like(&unprinted, true, false), "the last chunk without the fingerprint");
    }
}
