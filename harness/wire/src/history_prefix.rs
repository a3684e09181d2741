//! Parsing only what a request adds to the previous request of its conversation.
//!
//! A client resends the whole history with every request, so a server that parses each body
//! whole parses the conversation's first message once per request: quadratic in its length
//! (on the mock, the largest single cost of a long replay). Like a provider's prompt cache,
//! but for parsing: the previous body is kept with the byte range of each element of its
//! history array and the elements as parsed. Of a new body, the elements lying wholly in the
//! bytes it shares with the previous body are byte-identical, and a history element's parse
//! depends on its bytes alone, so their parse is taken from the previous one; the rest is
//! parsed by the request's own reader, from the body with those elements cut out.
//!
//! The members around the history (the tools above all, resent whole every turn) are most
//! often the previous body's byte for byte: the bytes before the shared elements are, and when
//! the bytes from the array's `]` on are too, the request is the previous one but for its
//! history, so only the new elements are parsed, and the members are the previous parse's.
//!
//! Exact by construction: the result equals the whole body's parse, and any doubt (no shared
//! element, a head that differs, a key spelt with escapes or given twice, a cut body that does
//! not parse) falls back to the whole parse, which also gives any error its real message.

use serde::de::DeserializeOwned;

/// A request body kept, with its history array's layout and parsed elements, and the request
/// `R` it was read as with its history left out, for the next request of the same
/// conversation. `B` is the body as the caller holds it (a refcounted buffer keeps it for
/// free).
#[derive(Clone)]
pub struct Previous<B, R, T> {
    body: B,
    layout: Layout,
    elements: Vec<T>,
    without_history: R,
}

/// Sizes only: a long conversation's body and history would flood a log.
impl<B, R, T> std::fmt::Debug for Previous<B, R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Previous").field("open", &self.layout.open).field("elements", &self.elements.len()).finish()
    }
}

/// Where a top-level object's history array lies in its body.
#[derive(Debug, Clone, PartialEq)]
struct Layout {
    /// The offset of the array's `[`.
    open: usize,
    /// One past the last byte of each element, ascending.
    ends: Vec<usize>,
    /// The offset of the array's `]`.
    close: usize,
}

/// `body` read as a request `R` whose history is the array under `key` (`history` finds it in
/// `R`), the elements it shares with `previous` taken from it instead of parsed again; and what
/// the next request of the conversation may reuse (`None` when the body's history could not be
/// located: it is then parsed whole next time).
///
/// # Errors
///
/// The body is not an `R`: the error of its whole parse.
pub fn read<B, R, T>(
    body: B,
    key: &str,
    previous: Option<Previous<B, R, T>>,
    history: impl Fn(&mut R) -> &mut Vec<T>,
) -> Result<ReadRequest<B, R, T>, serde_json::Error>
where
    B: AsRef<[u8]>,
    R: DeserializeOwned + Clone,
    T: Clone + DeserializeOwned,
{
    if let Some(read) = previous.and_then(|previous| reuse(&body, key.as_bytes(), previous, &history)) {
        let (request, layout, elements, without_history) = read;
        return Ok((request, Some(Previous { body, layout, elements, without_history })));
    }
    let mut request: R = serde_json::from_slice(body.as_ref())?;
    let Some(layout) = locate(body.as_ref(), key.as_bytes()).filter(|layout| layout.ends.len() == history(&mut request).len()) else {
        return Ok((request, None));
    };
    let elements = std::mem::take(history(&mut request));
    let without_history = request.clone();
    *history(&mut request) = elements.clone();
    Ok((request, Some(Previous { body, layout, elements, without_history })))
}

/// A request [`read`] read, and what the next request of its conversation may reuse.
pub type ReadRequest<B, R, T> = (R, Option<Previous<B, R, T>>);

/// What [`reuse`] reads: the request, its layout, its elements, and the request without them.
type Reused<R, T> = (R, Layout, Vec<T>, R);

/// The request read from `body` with `previous`'s shared elements put back in front of the
/// rest, its layout, its elements and the request without them; `None` when nothing is shared
/// or in any doubt.
fn reuse<R: DeserializeOwned + Clone, T: Clone + DeserializeOwned>(
    body: &impl AsRef<[u8]>,
    key: &[u8],
    previous: Previous<impl AsRef<[u8]>, R, T>,
    history: impl Fn(&mut R) -> &mut Vec<T>,
) -> Option<Reused<R, T>> {
    let (body, before) = (body.as_ref(), previous.body.as_ref());
    let common = common_prefix(body, before);
    // An element is shared when its bytes and the byte after them are common (a number could
    // go on), or when it ends at the first difference with its own closing `}`, `]` or `"`.
    let closed = |end: usize| end == common && matches!(before[end - 1], b'}' | b']' | b'"');
    let shared = previous.layout.ends.partition_point(|&end| end < common || closed(end));
    let last = *previous.layout.ends.get(shared.checked_sub(1)?)?;
    let after = skip_space(body, last);
    let rest = match body.get(after)? {
        b',' => after + 1,
        b']' => after,
        _ => return None,
    };
    let open = previous.layout.open;
    let mut ends = previous.layout.ends;
    ends.truncate(shared);
    let close = elements(body, rest, &mut ends)?;
    let (mut request, added) = if body[close..] == before[previous.layout.close..] {
        // The same members after the history as before it: only the new elements are read. A
        // comma after the shared elements must be followed by one.
        let mut cut = Vec::with_capacity(close - rest + 2);
        cut.push(b'[');
        cut.extend_from_slice(&body[rest..close]);
        cut.push(b']');
        let added: Vec<T> = serde_json::from_slice(&cut).ok()?;
        (rest == after || !added.is_empty()).then_some(())?;
        (previous.without_history, added)
    } else {
        no_key_after(body, key, close)?;
        let mut cut = Vec::with_capacity(open + 1 + body.len() - rest);
        cut.extend_from_slice(&body[..=open]);
        cut.extend_from_slice(&body[rest..]);
        let mut request: R = serde_json::from_slice(&cut).ok()?;
        let added = std::mem::take(history(&mut request));
        (request, added)
    };
    if ends.len() != shared + added.len() {
        return None;
    }
    let without_history = request.clone();
    let mut elements = previous.elements;
    elements.truncate(shared);
    elements.extend_from_slice(&added);
    *history(&mut request) = elements.clone();
    Some((request, Layout { open, ends, close }, elements, without_history))
}

/// The length of the bytes `a` and `b` start with alike: compared a block at a time (a
/// `memcmp`), then byte by byte inside the first block that differs.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let len = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= len && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..len].iter().zip(&b[at..len]).take_while(|(x, y)| x == y).count()
}

/// The layout of the array under `key` in `body`, a JSON object already known to be valid;
/// `None` when the key is missing, given twice, or some key is spelt with escapes (it could
/// then be the same key in disguise).
fn locate(body: &[u8], key: &[u8]) -> Option<Layout> {
    let mut at = skip_space(body, 0);
    (body.get(at) == Some(&b'{')).then_some(())?;
    at = skip_space(body, at + 1);
    while body.get(at)? == &b'"' {
        let (name, value) = member(body, at)?;
        if name == key {
            (body.get(value)? == &b'[').then_some(())?;
            let mut ends = Vec::new();
            let close = elements(body, value + 1, &mut ends)?;
            no_key_after(body, key, close)?;
            return Some(Layout { open: value, ends, close });
        }
        at = next_member(body, skip_value(body, value)?)?;
    }
    None
}

/// Scans an array's elements from `at` (after its `[` or a `,`), pushing their ends; the
/// offset of the array's `]`.
fn elements(body: &[u8], mut at: usize, ends: &mut Vec<usize>) -> Option<usize> {
    at = skip_space(body, at);
    if body.get(at)? != &b']' {
        loop {
            at = skip_value(body, at)?;
            ends.push(at);
            at = skip_space(body, at);
            match body.get(at)? {
                b',' => at = skip_space(body, at + 1),
                b']' => break,
                _ => return None,
            }
        }
    }
    Some(at)
}

/// Whether the rest of the top-level object after the history array's `]` at `close` is
/// well formed and does not name `key` again.
fn no_key_after(body: &[u8], key: &[u8], close: usize) -> Option<()> {
    let mut at = next_member(body, close + 1)?;
    while body.get(at)? == &b'"' {
        let (name, value) = member(body, at)?;
        (name != key).then_some(())?;
        at = next_member(body, skip_value(body, value)?)?;
    }
    Some(())
}

/// The name of the member whose key starts at `at` (raw bytes, `None` if escaped) and where
/// its value starts.
fn member(body: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let end = skip_string(body, at)?;
    let name = &body[at + 1..end - 1];
    (!name.contains(&b'\\')).then_some(())?;
    let colon = skip_space(body, end);
    (body.get(colon)? == &b':').then_some(())?;
    Some((name, skip_space(body, colon + 1)))
}

/// After a member's value at `at`: where the next member's key starts, or the offset of the
/// object's `}` (then `Some` only when nothing but whitespace follows).
fn next_member(body: &[u8], at: usize) -> Option<usize> {
    let at = skip_space(body, at);
    match body.get(at)? {
        b',' => Some(skip_space(body, at + 1)),
        b'}' => (skip_space(body, at + 1) == body.len()).then_some(at),
        _ => None,
    }
}

/// One past the JSON value starting at `at`: a string, an object or array (strings inside
/// skipped whole), or a scalar up to the next delimiter.
pub(crate) fn skip_value(body: &[u8], at: usize) -> Option<usize> {
    match body.get(at)? {
        b'"' => skip_string(body, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match body.get(i)? {
                    b'"' => {
                        i = skip_string(body, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let len = body[at..].iter().position(|b| matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')).unwrap_or(body.len() - at);
            (len > 0).then_some(at + len)
        }
    }
}

/// One past the string starting at the `"` at `at`; a backslash escapes the byte after it
/// (`\"`, `\\`; a `\u` escape's hex digits need no care).
fn skip_string(body: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        // Tool outputs make most of a history's bytes strings: searched a vector at a time.
        i += memchr::memchr2(b'"', b'\\', body.get(i..)?)?;
        if body[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// The first offset from `at` that is not JSON whitespace.
fn skip_space(body: &[u8], at: usize) -> usize {
    at + body.get(at..).map_or(0, |rest| rest.iter().take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')).count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;
    use crate::codec::{Reusable, decode_request, decode_request_reusing};
    use crate::openai_chat::{ChatMessage, ChatRequest, MessageContent};
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    #[test]
    fn a_value_ends_past_escapes_nesting_and_unicode() {
        for (value, rest) in [
            (r#""say \"hi\"""#, ",1"),
            (r#""C:\\dir\\""#, "]"),
            (r#""\\\"""#, "}"),
            (r#""é😀 \u00e9\n""#, " ,"),
            (r#"{"arguments":"{\"a\":[1,{\"b\":\"]}\"}]}","x":[[],{}]}"#, ","),
            (r#"[1,"]",["[",{"}":"{"}]]"#, "]"),
            ("-12.5e3", ","),
            ("true", "\n]"),
            ("null", "}"),
        ] {
            let body = format!("{value}{rest}");
            assert_eq!(skip_value(body.as_bytes(), 0), Some(value.len()), "{body}");
        }
        assert_eq!(skip_value(br#""open"#, 0), None);
        assert_eq!(skip_value(br#"{"a":[1}"#, 0), None);
    }

    #[test]
    fn the_history_is_located_in_compact_and_pretty_bodies() {
        let compact = br#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b,]"}],"stream":true}"#;
        let at = |pattern: &str| String::from_utf8_lossy(compact).find(pattern).unwrap();
        assert_eq!(locate(compact, b"messages"), Some(Layout { open: at("["), ends: vec![at("},{") + 1, at("}]") + 1], close: at("}]") + 1 }));
        let pretty = serde_json::to_vec_pretty(&serde_json::from_slice::<Value>(compact).unwrap()).unwrap();
        let layout = locate(&pretty, b"messages").unwrap();
        let text = String::from_utf8(pretty.clone()).unwrap();
        assert_eq!(layout.open, text.find('[').unwrap());
        assert!(layout.ends.iter().all(|&end| pretty[end - 1] == b'}') && layout.ends.len() == 2, "{text}");
        for doubtful in [
            &br#"{"model":"m","messages":[],"messages":[]}"#[..],
            br#"{"model":"m","messa\u0067es":[],"messages":[]}"#,
            br#"{"model":"m","messages":"hi"}"#,
            br#"{"model":"m"}"#,
            br#"[{"messages":[]}]"#,
        ] {
            assert_eq!(locate(doubtful, b"messages"), None, "{}", String::from_utf8_lossy(doubtful));
        }
    }

    type KeptChat = Previous<Vec<u8>, ChatRequest, ChatMessage>;

    fn chat(body: &[u8], previous: Option<KeptChat>) -> (ChatRequest, Option<KeptChat>) {
        read(body.to_vec(), "messages", previous, |request: &mut ChatRequest| &mut request.messages).unwrap()
    }

    /// The elements a body shares with the previous one are taken from the previous parse (a
    /// planted element shows it), the one ending at the first difference included when its `}`
    /// closes it; an element that differs is parsed again.
    #[test]
    fn shared_elements_are_taken_from_the_previous_parse() {
        let first = br#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}"#;
        let (_, kept) = chat(first, None);
        let mut kept = kept.unwrap();
        let planted = ChatMessage::User { content: MessageContent::Text("planted".into()), name: None };
        kept.elements[1] = planted.clone();
        let grown = br#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"c"}]}"#;
        let (request, next) = chat(grown, Some(kept.clone()));
        assert_eq!(request.messages[1], planted);
        assert_eq!(request.messages[2], ChatMessage::User { content: MessageContent::Text("c".into()), name: None });
        assert_eq!(next.unwrap().layout, locate(grown, b"messages").unwrap());
        let edited = br#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"B"}]}"#;
        let (request, _) = chat(edited, Some(kept.clone()));
        assert_eq!(request.messages[1], ChatMessage::User { content: MessageContent::Text("B".into()), name: None });
        let (request, _) = chat(br#"{"model":"n","messages":[{"role":"user","content":"a"}]}"#, Some(kept));
        assert_eq!(request.model, "n");
    }

    /// When the bytes after the history are the previous body's, its members are the previous
    /// parse's (a planted tool shows it); when they differ, they are parsed again.
    #[test]
    fn members_after_an_unchanged_tail_are_taken_from_the_previous_parse() {
        let first = br#"{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"read"}}]}"#;
        let (request, kept) = chat(first, None);
        assert_eq!(request.tools[0].function.name, "read");
        let mut kept = kept.unwrap();
        kept.without_history.tools[0].function.name = "planted".into();
        let grown = br#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}],"tools":[{"type":"function","function":{"name":"read"}}]}"#;
        let (request, next) = chat(grown, Some(kept.clone()));
        assert_eq!(request.tools[0].function.name, "planted");
        assert_eq!(request.messages.len(), 2);
        assert_eq!(next.unwrap().layout, locate(grown, b"messages").unwrap());
        let retooled = br#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}],"tools":[{"type":"function","function":{"name":"write"}}]}"#;
        let (request, _) = chat(retooled, Some(kept.clone()));
        assert_eq!(request.tools[0].function.name, "write");
        for broken in [
            &br#"{"model":"m","messages":[{"role":"user","content":"a"},],"tools":[{"type":"function","function":{"name":"read"}}]}"#[..],
            br#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user"],"tools":[{"type":"function","function":{"name":"read"}}]}"#,
        ] {
            assert!(
                read(broken.to_vec(), "messages", Some(kept.clone()), |request: &mut ChatRequest| &mut request.messages).is_err(),
                "{}",
                String::from_utf8_lossy(broken)
            );
        }
    }

    /// One request of a generated conversation: the messages so far, and how the body is
    /// written.
    #[derive(Debug, Clone)]
    enum Step {
        /// The next turn: these messages appended.
        Append(Vec<Value>),
        /// The message at this index (modulo the length) replaced, as a compaction does.
        Edit(usize, Value),
        /// Another model, system prompt or tool (a member before or after the history changes).
        Model(String),
        System(String),
        Tool(String),
        /// Members in another order, or pretty-printed: the conversation from here on.
        Reorder,
        Pretty(bool),
        /// A one-off broken body: cut at this length (modulo), or with a byte changed, or with
        /// the history key given again at its end.
        Truncate(usize),
        Corrupt(usize, u8),
        Twice,
    }

    fn text() -> impl Strategy<Value = String> {
        "([a-z ]{1,6}|\"|\\\\|\\\\\"|\\n|é|😀|[\\[\\]{},:]|\\\\u00e9){0,8}"
    }

    /// A history element of OpenAI Chat, or of Gemini when `gemini`, some of them invalid.
    fn message(gemini: bool) -> BoxedStrategy<Value> {
        if gemini {
            return prop_oneof![
                text().prop_map(|t| json!({"role": "user", "parts": [{"text": t}]})),
                (text(), text()).prop_map(|(thought, path)| json!({"role": "model", "parts": [
                    {"text": thought, "thought": true, "thoughtSignature": "c2ln"},
                    {"functionCall": {"name": "read_file", "args": {"path": path, "n": [1, {"x": null}]}}},
                ]})),
                text().prop_map(|t| json!({"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": t}}}]})),
                text().prop_map(
                    |t| json!({"parts": [{"function_response": {"name": "read_file", "response": {"output": t}}, "inlineData": {}}], "role": "user"})
                ),
                Just(json!({"role": "model", "parts": "x"})),
                Just(json!(7)),
            ]
            .boxed();
        }
        prop_oneof![
            text().prop_map(|t| json!({"role": "user", "content": t})),
            (text(), text()).prop_map(|(a, b)| json!({"role": "user", "content": [{"type": "text", "text": a}, {"type": "text", "text": b}]})),
            (text(), proptest::option::of(text())).prop_map(|(args, content)| json!({
                "role": "assistant", "content": content,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": json!({"path": args, "n": [1, {"x": null}]}).to_string()}}],
            })),
            text().prop_map(|t| json!({"content": t, "tool_call_id": "call_1", "role": "tool"})),
            text().prop_map(|t| json!({"role": "developer", "content": t})),
            Just(json!({"role": "robot", "content": "x"})),
            Just(json!(7)),
        ]
        .boxed()
    }

    fn step(gemini: bool) -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => proptest::collection::vec(message(gemini), 1..4).prop_map(Step::Append),
            1 => (any::<usize>(), message(gemini)).prop_map(|(at, m)| Step::Edit(at, m)),
            1 => "[a-z]{1,3}".prop_map(Step::Model),
            1 => text().prop_map(Step::System),
            1 => "[a-z]{1,3}".prop_map(Step::Tool),
            1 => Just(Step::Reorder),
            1 => any::<bool>().prop_map(Step::Pretty),
            1 => any::<usize>().prop_map(Step::Truncate),
            1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Step::Corrupt(at, byte)),
            1 => Just(Step::Twice),
        ]
    }

    /// The format a conversation is sent in, and its history's key.
    fn wire(gemini: bool) -> (Format, &'static str) {
        if gemini { (Format::Gemini, "contents") } else { (Format::OpenaiChat, "messages") }
    }

    /// The body of a conversation: the members in `order`'s rotation, the tools after the
    /// history or before it. Gemini names the model in the URL: `model` is its output limit.
    fn body(gemini: bool, (model, system, tool): (&str, &str, &str), messages: &[Value], order: usize, pretty: bool) -> Vec<u8> {
        let mut members = if gemini {
            vec![
                ("generationConfig", json!({"maxOutputTokens": model.len()})),
                ("contents", Value::Array(messages.to_vec())),
                ("tools", json!([{"functionDeclarations": [{"name": tool, "parameters": {"type": "object"}}]}])),
                ("systemInstruction", json!({"parts": [{"text": system}]})),
            ]
        } else {
            let mut history = vec![json!({"role": "system", "content": system})];
            history.extend_from_slice(messages);
            vec![
                ("model", json!(model)),
                ("messages", Value::Array(history)),
                ("tools", json!([{"type": "function", "function": {"name": tool, "parameters": {"type": "object"}}}])),
                ("stream", json!(true)),
                ("temperature", json!(0.5)),
            ]
        };
        let count = members.len();
        members.rotate_left(order % count);
        let object = Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<_, _>>());
        if pretty { serde_json::to_vec_pretty(&object) } else { serde_json::to_vec(&object) }.unwrap()
    }

    proptest! {
        /// Over any conversation, in OpenAI Chat or Gemini, incremental decoding equals
        /// `decode_request` on every body: the same request, or the same error.
        #[test]
        fn incremental_decoding_equals_the_whole_parse((gemini, steps) in any::<bool>().prop_flat_map(|gemini| (Just(gemini), proptest::collection::vec(step(gemini), 1..24)))) {
            let (format, key) = wire(gemini);
            let body = |model: &str, system: &str, tool: &str, messages: &[Value], order, pretty| body(gemini, (model, system, tool), messages, order, pretty);
            let (mut model, mut system, mut tool, mut messages, mut order, mut pretty) = ("m".to_owned(), "s".to_owned(), "read_file".to_owned(), Vec::new(), 0, false);
            let mut previous: Option<Reusable<Vec<u8>>> = None;
            for step in steps {
                let mut sent = None;
                match step {
                    Step::Append(more) => messages.extend(more),
                    Step::Edit(at, message) => {
                        if let Some(len) = std::num::NonZeroUsize::new(messages.len()) {
                            messages[at % len] = message;
                        }
                    }
                    Step::Model(name) => model = name,
                    Step::System(text) => system = text,
                    Step::Tool(name) => tool = name,
                    Step::Reorder => order += 1,
                    Step::Pretty(on) => pretty = on,
                    Step::Truncate(at) => {
                        let whole = body(&model, &system, &tool, &messages, order, pretty);
                        sent = Some(whole[..at % whole.len()].to_vec());
                    }
                    Step::Corrupt(at, byte) => {
                        let mut whole = body(&model, &system, &tool, &messages, order, pretty);
                        let len = whole.len();
                        whole[at % len] = byte;
                        sent = Some(whole);
                    }
                    Step::Twice => {
                        let mut whole = body(&model, &system, &tool, &messages, order, pretty);
                        whole.truncate(whole.len() - 1);
                        whole.extend_from_slice(format!(r#","{key}":[]}}"#).as_bytes());
                        sent = Some(whole);
                    }
                }
                let sent = sent.unwrap_or_else(|| body(&model, &system, &tool, &messages, order, pretty));
                let whole = decode_request(format, &sent, "m", false);
                match (whole, decode_request_reusing(format, sent.clone(), "m", false, previous.take())) {
                    (Ok(whole), Ok((incremental, kept))) => {
                        prop_assert_eq!(whole, incremental);
                        previous = kept;
                    }
                    (Err(whole), Err(incremental)) => prop_assert_eq!(whole.to_string(), incremental.to_string()),
                    (whole, incremental) => prop_assert!(false, "{:?} against {:?} for {}", whole, incremental.map(|r| r.0), String::from_utf8_lossy(&sent)),
                }
            }
        }
    }
}
