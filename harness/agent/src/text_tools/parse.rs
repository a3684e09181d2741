//! Tool calls read out of a model's text (ZeroClaw's prompt tool-calling,
//! seed 003), in its two formats:
//!
//! - **XML-tagged**: a JSON object `{"name": …, "arguments": {…}}` inside
//!   `<tool_call>…</tool_call>` (also `<toolcall>` and `<tool-call>`, any
//!   case), as ZeroClaw's `XmlToolDispatcher` asks for;
//! - **JSON in text**: an OpenAI-style `{"tool_calls": [{"function": {"name",
//!   "arguments"}}]}` or a bare `{"name", "arguments"}` object, alone or in a
//!   ```` ```json ```` / ```` ```tool_call ```` fence.
//!
//! The parser never fails: each block that looks like a call but cannot be
//! read becomes a [`TextCall::Malformed`] with the reason, which the loop
//! hands back to the model as a tool error.

use serde_json::{Map, Value};

/// The tag names accepted for the XML format, lower case.
const XML_TAGS: [&str; 3] = ["tool_call", "toolcall", "tool-call"];

/// Fence languages whose body is read as a JSON tool call.
const FENCE_LANGUAGES: [&str; 3] = ["tool_call", "json", ""];

/// One call found in the text.
#[derive(Debug, Clone, PartialEq)]
pub enum TextCall {
    /// A readable call.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments as compact JSON text (an object).
        arguments: String,
    },
    /// A block that looks like a call but cannot be read, and why.
    Malformed(String),
}

/// What the text held: the prose around the calls, and the calls in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedText {
    /// The text with the call blocks taken out, trimmed.
    pub prose: String,
    /// The calls, readable or not, in the order they appear.
    pub calls: Vec<TextCall>,
}

/// Reads the tool calls out of `text`: XML-tagged blocks when there are
/// any, otherwise JSON in text.
pub fn parse_text_tool_calls(text: &str) -> ParsedText {
    match parse_xml(text) {
        Some(parsed) => parsed,
        None => parse_json_in_text(text),
    }
}

/// The XML format; `None` when the text opens no call tag.
fn parse_xml(text: &str) -> Option<ParsedText> {
    let mut rest = text;
    let mut prose = Vec::new();
    let mut calls = Vec::new();
    let mut found = false;
    while let Some((start, tag)) = find_open_tag(rest) {
        found = true;
        prose.push(&rest[..start]);
        let body_start = start + tag.len() + 2;
        match find_close_tag(&rest[body_start..]) {
            Some((end, close_len)) => {
                calls.push(read_call_json(rest[body_start..body_start + end].trim(), "<tool_call>"));
                rest = &rest[body_start + end + close_len..];
            }
            None => {
                calls.push(TextCall::Malformed(format!("`<{tag}>` is never closed: end the call with `</{tag}>`")));
                rest = "";
            }
        }
    }
    if !found {
        return None;
    }
    prose.push(rest);
    Some(ParsedText { prose: join_prose(&prose), calls })
}

/// The first opening call tag in `text`: its byte offset and its name as
/// written.
fn find_open_tag(text: &str) -> Option<(usize, &str)> {
    let lower = text.to_ascii_lowercase();
    XML_TAGS.iter().filter_map(|tag| lower.find(&format!("<{tag}>")).map(|at| (at, &text[at + 1..at + 1 + tag.len()]))).min_by_key(|(at, _)| *at)
}

/// The first closing call tag in `text` (any of the accepted names, since
/// models mix them): its offset and length.
fn find_close_tag(text: &str) -> Option<(usize, usize)> {
    let lower = text.to_ascii_lowercase();
    XML_TAGS.iter().filter_map(|tag| lower.find(&format!("</{tag}>")).map(|at| (at, tag.len() + 3))).min_by_key(|(at, _)| *at)
}

/// JSON in text: fenced blocks first, then the first top-level JSON object
/// written as a call. Text with neither holds no call.
fn parse_json_in_text(text: &str) -> ParsedText {
    let fenced = fenced_calls(text);
    if !fenced.calls.is_empty() {
        return fenced;
    }
    match find_call(text) {
        None => ParsedText { prose: text.trim().to_owned(), calls: Vec::new() },
        Some((start, Ok((value, end)))) => ParsedText { prose: join_prose(&[&text[..start], &text[end..]]), calls: calls_of_value(&value) },
        Some((start, Err(error))) => {
            ParsedText { prose: text[..start].trim().to_owned(), calls: vec![TextCall::Malformed(format!("the tool call's JSON does not parse ({error})"))] }
        }
    }
}

/// Calls in ```` ``` ```` fences whose language is `tool_call` or `json`
/// (or none) and whose body is a call object.
fn fenced_calls(text: &str) -> ParsedText {
    let mut prose = Vec::new();
    let mut calls = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after_ticks = &rest[open + 3..];
        let line_end = after_ticks.find('\n').unwrap_or(after_ticks.len());
        let language = after_ticks[..line_end].trim().to_ascii_lowercase();
        let body_start = (line_end + 1).min(after_ticks.len());
        let Some(close) = after_ticks[body_start..].find("```") else { break };
        let body = after_ticks[body_start..body_start + close].trim();
        let block_end = open + 3 + body_start + close + 3;
        let names_a_call = language == "tool_call" || (FENCE_LANGUAGES.contains(&language.as_str()) && matches!(find_call(body), Some((0, _))));
        if names_a_call {
            prose.push(&rest[..open]);
            calls.extend(match serde_json::from_str::<Value>(body) {
                Ok(value) => calls_of_value(&value),
                Err(error) => vec![TextCall::Malformed(format!("the fenced tool call's JSON does not parse ({error})"))],
            });
        } else {
            prose.push(&rest[..block_end]);
        }
        rest = &rest[block_end..];
    }
    prose.push(rest);
    ParsedText { prose: join_prose(&prose), calls }
}

/// A call object found in text: its value and the offset where it ends, or
/// why an object meant as a call does not parse.
type FoundCall = Result<(Value, usize), String>;

/// The first JSON object in `text` written as a call, as opposed to JSON
/// the model merely shows (a `package.json` whose first key is `name`), and
/// its offset. Objects inside a shown one are not searched.
fn find_call(text: &str) -> Option<(usize, FoundCall)> {
    let mut searched_to = 0;
    for (at, _) in text.match_indices('{') {
        let after = text[at + 1..].trim_start();
        let first_key_names_a_call = ["\"tool_calls\"", "\"name\"", "\"function\""].iter().any(|key| after.starts_with(key));
        if at < searched_to || !first_key_names_a_call {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) if is_written_as_call(&value) => return Some((at, Ok((value, at + stream.byte_offset())))),
            Some(Ok(_)) => searched_to = at + stream.byte_offset(),
            Some(Err(error)) if meant_as_call(after) => return Some((at, Err(error.to_string()))),
            _ => {}
        }
    }
    None
}

/// A call has `tool_calls`, OpenAI's `function` object, or a `name` beside
/// its `arguments` (or `parameters`, as ZeroClaw accepts).
fn is_written_as_call(value: &Value) -> bool {
    let Value::Object(object) = value else { return false };
    object.contains_key("tool_calls")
        || object.get("function").is_some_and(Value::is_object)
        || (object.contains_key("name") && (object.contains_key("arguments") || object.contains_key("parameters")))
}

/// Whether JSON that does not parse was meant as a call: it opens with
/// `tool_calls` or `function`, or names arguments.
fn meant_as_call(after_brace: &str) -> bool {
    after_brace.starts_with("\"tool_calls\"")
        || after_brace.starts_with("\"function\"")
        || after_brace.contains("\"arguments\"")
        || after_brace.contains("\"parameters\"")
}

/// The calls a JSON value holds: an object with `tool_calls`, an array of
/// calls, or one call.
fn calls_of_value(value: &Value) -> Vec<TextCall> {
    match value {
        Value::Object(object) if object.contains_key("tool_calls") => match &object["tool_calls"] {
            Value::Array(items) => items.iter().map(call_of_value).collect(),
            _ => vec![TextCall::Malformed("`tool_calls` must be an array of calls".into())],
        },
        Value::Array(items) => items.iter().map(call_of_value).collect(),
        other => vec![call_of_value(other)],
    }
}

/// Reads one call from the body of a tag.
fn read_call_json(body: &str, what: &str) -> TextCall {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => call_of_value(&value),
        Err(error) => TextCall::Malformed(format!("the JSON inside {what} does not parse ({error})")),
    }
}

/// One call: `{"name", "arguments"}` or OpenAI's `{"function": {"name",
/// "arguments"}}`; arguments may be an object or a string holding one
/// (`parameters` is accepted for `arguments`, as ZeroClaw does).
fn call_of_value(value: &Value) -> TextCall {
    let call = value.get("function").unwrap_or(value);
    let Some(object) = call.as_object() else {
        return TextCall::Malformed("a tool call must be a JSON object with `name` and `arguments`".into());
    };
    let name = match object.get("name").and_then(Value::as_str).map(str::trim) {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => return TextCall::Malformed("the tool call has no `name`".into()),
    };
    let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(parsed) => parsed,
            Err(error) => return TextCall::Malformed(format!("the arguments of `{name}` are a string but not JSON ({error})")),
        },
        Some(other) => other.clone(),
    };
    if !arguments.is_object() {
        return TextCall::Malformed(format!("the arguments of `{name}` must be a JSON object"));
    }
    TextCall::Call { name, arguments: arguments.to_string() }
}

fn join_prose(parts: &[&str]) -> String {
    parts.iter().map(|part| part.trim()).filter(|part| !part.is_empty()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &str) -> TextCall {
        TextCall::Call { name: name.into(), arguments: arguments.into() }
    }

    fn malformed(parsed: &ParsedText) -> Vec<&str> {
        parsed.calls.iter().filter_map(|c| if let TextCall::Malformed(why) = c { Some(why.as_str()) } else { None }).collect()
    }

    #[test]
    fn xml_tagged_calls_with_prose_around_them() {
        let text = "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n</tool_call>\nthen\n<TOOL-CALL>{\"name\":\"grep\",\"arguments\":{\"q\":\"x\"}}</tool-call>";
        let parsed = parse_text_tool_calls(text);
        assert_eq!(parsed.calls, vec![call("read_file", r#"{"path":"a.rs"}"#), call("grep", r#"{"q":"x"}"#)]);
        assert_eq!(parsed.prose, "Let me look.\nthen");
    }

    #[test]
    fn json_in_text_in_both_shapes() {
        let openai = r#"Reading it. {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}}]}"#;
        let parsed = parse_text_tool_calls(openai);
        assert_eq!(parsed.calls, vec![call("read_file", r#"{"path":"a.rs"}"#)]);
        assert_eq!(parsed.prose, "Reading it.");
        let bare = "{\"name\": \"ls\", \"parameters\": {\"dir\": \".\"}} and more";
        assert_eq!(parse_text_tool_calls(bare).calls, vec![call("ls", r#"{"dir":"."}"#)]);
    }

    #[test]
    fn fenced_json_calls_and_fences_that_are_only_code() {
        let text = "Here:\n```json\n{\"name\": \"ls\", \"arguments\": {}}\n```\n```rust\nfn main() {}\n```";
        let parsed = parse_text_tool_calls(text);
        assert_eq!(parsed.calls, vec![call("ls", "{}")]);
        assert_eq!(parsed.prose, "Here:\n```rust\nfn main() {}\n```");
        let plain = "```json\n{\"version\": 2}\n```";
        assert!(parse_text_tool_calls(plain).calls.is_empty(), "JSON that names no call is just text");
    }

    #[test]
    fn json_the_model_shows_is_not_a_call() {
        let package = "{\"name\": \"my-app\", \"version\": \"1.0.0\", \"scripts\": {\"name\": \"x\"}}";
        for text in [
            format!("Here is package.json:\n```json\n{package}\n```"),
            format!("Here is package.json: {package}"),
            "The config is {\"function\": \"add\"}.".to_owned(),
            "Just {\"name\": \"ls\"} as data.".to_owned(),
        ] {
            let parsed = parse_text_tool_calls(&text);
            assert!(parsed.calls.is_empty(), "{text:?}: {parsed:?}");
            assert_eq!(parsed.prose, text.trim());
        }
        let after_shown = format!("Shown: {package} then {{\"name\": \"ls\", \"arguments\": {{}}}}");
        assert_eq!(parse_text_tool_calls(&after_shown).calls, vec![call("ls", "{}")], "a call after shown JSON is still found");
    }

    #[test]
    fn text_without_calls_is_prose() {
        for text in ["The answer is 42.", "", "a < b and {x} and <tool>", "{\"answer\": 1}"] {
            let parsed = parse_text_tool_calls(text);
            assert!(parsed.calls.is_empty(), "{text:?}");
            assert_eq!(parsed.prose, text.trim());
        }
    }

    #[test]
    fn malformed_markup_is_reported_never_dropped() {
        let cases = [
            ("<tool_call>{\"name\": \"ls\", \"arguments\": {}}", "never closed"),
            ("<tool_call>{\"name\": \"ls\", arguments: {}}</tool_call>", "does not parse"),
            ("<tool_call>{\"arguments\": {}}</tool_call>", "no `name`"),
            ("<tool_call>{\"name\": \"ls\", \"arguments\": [1]}</tool_call>", "must be a JSON object"),
            ("<tool_call>{\"name\": \"ls\", \"arguments\": \"{oops\"}</tool_call>", "a string but not JSON"),
            ("<tool_call>\"ls\"</tool_call>", "must be a JSON object"),
            ("{\"tool_calls\": [{\"function\": {\"name\": \"ls\"", "does not parse"),
            ("{\"tool_calls\": 3}", "must be an array"),
            ("```tool_call\nls -la\n```", "fenced tool call"),
        ];
        for (text, why) in cases {
            let parsed = parse_text_tool_calls(text);
            assert_eq!(malformed(&parsed).len(), 1, "{text:?}: {parsed:?}");
            assert!(malformed(&parsed)[0].contains(why), "{text:?}: {:?}", malformed(&parsed));
        }
    }

    #[test]
    fn a_good_call_survives_a_bad_neighbour() {
        let text = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{bad}</tool_call><tool_call>{\"name\": \"b\"}</tool_call>";
        let parsed = parse_text_tool_calls(text);
        assert_eq!(parsed.calls.len(), 3);
        assert_eq!(parsed.calls[0], call("a", "{}"));
        assert!(matches!(parsed.calls[1], TextCall::Malformed(_)));
        assert_eq!(parsed.calls[2], call("b", "{}"));
    }

    /// Fuzz-like: every prefix, and every byte flipped to markup characters,
    /// of texts with calls parses without a panic, and every block found is
    /// either a call or a reason.
    #[test]
    fn truncated_and_mangled_markup_never_panics() {
        let texts = [
            "Plan: 多字节 ✓\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"é.rs\"}}\n</tool_call>",
            r#"ok {"tool_calls": [{"function": {"name": "x", "arguments": "{\"a\":[1,2]}"}}]} done"#,
            "```tool_call\n{\"name\": \"ls\", \"arguments\": {}}\n```",
        ];
        for text in texts {
            for (cut, _) in text.char_indices() {
                let _ = parse_text_tool_calls(&text[..cut]);
            }
            for (at, ch) in text.char_indices() {
                for replacement in ['<', '>', '{', '}', '"', '`', '/', '\\'] {
                    let mangled = format!("{}{}{}", &text[..at], replacement, &text[at + ch.len_utf8()..]);
                    for found in parse_text_tool_calls(&mangled).calls {
                        match found {
                            TextCall::Call { arguments, .. } => assert!(serde_json::from_str::<Value>(&arguments).unwrap().is_object()),
                            TextCall::Malformed(why) => assert!(!why.is_empty()),
                        }
                    }
                }
            }
        }
    }
}
