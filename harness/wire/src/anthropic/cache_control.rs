//! Anthropic prompt-caching breakpoints (`cache_control`) in [`Prompt`] terms, both ways: the
//! client places them on a request it builds, the mock reads them off a request it receives.
//!
//! A breakpoint marks the end of a cacheable prefix. The API reads the prefix in the order
//! tools, system, messages, so a breakpoint is named by the part it ends: the tool list, the
//! system prompt, or a message of [`Prompt::messages`]. Anthropic groups consecutive tool
//! results (and the user text after them) into one user message, so a breakpoint on any block
//! of a grouped message is read as ending the last [`Prompt`] message of the group: the
//! granularity the mock's cache simulation works at.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::request::{AnthropicContent, ContentBlock, MessagesRequest, Role, SystemPrompt, TextBlock, push_user_messages};

/// The most `cache_control` blocks one request may carry; the API refuses more.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// How long a cache entry lives after its last use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub enum CacheTtl {
    /// `"5m"`, the default; writes cost 1.25x input.
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    /// `"1h"`; writes cost 2x input.
    #[serde(rename = "1h")]
    OneHour,
}

impl CacheTtl {
    /// The lifetime in milliseconds.
    pub fn millis(self) -> u64 {
        match self {
            Self::FiveMinutes => 5 * 60 * 1000,
            Self::OneHour => 60 * 60 * 1000,
        }
    }

    /// The `cache_control` object the API expects (the 5-minute default written without `ttl`).
    pub fn cache_control(self) -> Value {
        match self {
            Self::FiveMinutes => json!({"type": "ephemeral"}),
            Self::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
        }
    }

    fn of(cache_control: &Value) -> Self {
        match cache_control.get("ttl").and_then(Value::as_str) {
            Some("1h") => Self::OneHour,
            _ => Self::FiveMinutes,
        }
    }
}

/// The part of a request a breakpoint ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CachePoint {
    /// The tool declarations.
    Tools,
    /// The system prompt.
    System,
    /// Message `n` of [`Prompt::messages`] (0-based).
    Message(usize),
}

/// One `cache_control` breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheBreakpoint {
    /// Where it sits.
    pub at: CachePoint,
    /// Its lifetime.
    pub ttl: CacheTtl,
}

impl MessagesRequest {
    /// The request's breakpoints in request order, one per `cache_control` block (so more than
    /// [`MAX_CACHE_BREAKPOINTS`] can be seen and refused).
    pub fn cache_breakpoints(&self) -> Vec<CacheBreakpoint> {
        let mut found = Vec::new();
        let mut mark = |at, control: Option<&Value>| {
            if let Some(control) = control {
                found.push(CacheBreakpoint { at, ttl: CacheTtl::of(control) });
            }
        };
        for tool in &self.tools {
            mark(CachePoint::Tools, tool.cache_control.as_ref());
        }
        if let Some(SystemPrompt::Blocks(blocks)) = &self.system {
            blocks.iter().for_each(|block| mark(CachePoint::System, block_cache_control(block)));
        }
        let mut scratch = Vec::new();
        for message in &self.messages {
            match message.role {
                Role::User => push_user_messages(&message.content, &mut scratch),
                // An assistant message is one prompt message; its content does not matter here.
                Role::Assistant => scratch.push(crate::Message::User { text: crate::Text::default() }),
            }
            let Some(last) = scratch.len().checked_sub(1) else { continue };
            if let AnthropicContent::Blocks(blocks) = &message.content {
                blocks.iter().for_each(|block| mark(CachePoint::Message(last), block_cache_control(block)));
            }
        }
        found
    }

    /// Puts a `cache_control` on the last block of each part named in `breakpoints` (a text
    /// content or system string becomes one text block to carry it). Message indices are
    /// [`Prompt::messages`] indices of the prompt this request was made from; one that falls
    /// inside a grouped user message marks the group's last block.
    pub fn place_cache_breakpoints(&mut self, breakpoints: &[CacheBreakpoint]) {
        let message_ends = self.prompt_message_ends();
        for breakpoint in breakpoints {
            let control = breakpoint.ttl.cache_control();
            match breakpoint.at {
                CachePoint::Tools => {
                    if let Some(tool) = self.tools.last_mut() {
                        tool.cache_control = Some(control);
                    }
                }
                CachePoint::System => {
                    if let Some(system) = self.system.as_mut() {
                        mark_system(system, control);
                    }
                }
                CachePoint::Message(index) => {
                    if let Some(message) = message_ends.iter().position(|end| *end > index).and_then(|m| self.messages.get_mut(m)) {
                        mark_last_block(&mut message.content, control);
                    }
                }
            }
        }
    }

    /// For each Anthropic message, the number of [`Prompt`] messages up to and including it.
    fn prompt_message_ends(&self) -> Vec<usize> {
        let mut scratch = Vec::new();
        self.messages
            .iter()
            .map(|message| {
                match message.role {
                    Role::User => push_user_messages(&message.content, &mut scratch),
                    Role::Assistant => scratch.push(crate::Message::User { text: crate::Text::default() }),
                }
                scratch.len()
            })
            .collect()
    }
}

/// A block's `cache_control`, wherever its type keeps it.
fn block_cache_control(block: &ContentBlock) -> Option<&Value> {
    match block {
        ContentBlock::Text(text) => text.cache_control.as_ref(),
        ContentBlock::ToolUse(block) => block.extra.get("cache_control"),
        ContentBlock::ToolResult(block) => block.extra.get("cache_control"),
        ContentBlock::Thinking(block) => block.extra.get("cache_control"),
        ContentBlock::Other(value) => value.get("cache_control"),
    }
    .filter(|value| !value.is_null())
}

fn set_block_cache_control(block: &mut ContentBlock, control: Value) {
    let extra = match block {
        ContentBlock::Text(text) => {
            text.cache_control = Some(control);
            return;
        }
        ContentBlock::ToolUse(block) => &mut block.extra,
        ContentBlock::ToolResult(block) => &mut block.extra,
        ContentBlock::Thinking(block) => &mut block.extra,
        ContentBlock::Other(Value::Object(object)) => object,
        ContentBlock::Other(_) => return,
    };
    extra.insert("cache_control".to_owned(), control);
}

fn text_block(text: &str, control: Value) -> ContentBlock {
    ContentBlock::Text(TextBlock { text: text.to_owned(), cache_control: Some(control), extra: Map::new() })
}

fn mark_system(system: &mut SystemPrompt, control: Value) {
    match system {
        SystemPrompt::Text(text) => *system = SystemPrompt::Blocks(vec![text_block(text, control)]),
        SystemPrompt::Blocks(blocks) => {
            if let Some(block) = blocks.last_mut() {
                set_block_cache_control(block, control);
            }
        }
    }
}

fn mark_last_block(content: &mut AnthropicContent, control: Value) {
    match content {
        AnthropicContent::Text(text) => *content = AnthropicContent::Blocks(vec![text_block(text, control)]),
        AnthropicContent::Blocks(blocks) => {
            if let Some(block) = blocks.last_mut() {
                set_block_cache_control(block, control);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Message, Prompt, ToolCall, ToolSpec};

    fn prompt() -> Prompt {
        let call = ToolCall { id: "c1".into(), name: "read".into(), arguments: "{}".into() };
        Prompt {
            model: "claude-sonnet-4-5".into(),
            system: Some("be careful".into()),
            messages: vec![
                Message::User { text: "task".into() },
                Message::assistant(String::new(), vec![call]),
                Message::ToolResult { call_id: "c1".into(), tool_name: "read".into(), content: "file".into(), is_error: false },
                Message::User { text: "steer".into() },
            ],
            tools: vec![ToolSpec { name: "read".into(), description: "Read".into(), parameters: json!({"type": "object"}) }],
            ..Prompt::default()
        }
    }

    #[test]
    fn placed_breakpoints_read_back_in_prompt_terms() {
        let mut request = MessagesRequest::from_prompt(&prompt());
        let placed = [
            CacheBreakpoint { at: CachePoint::Tools, ttl: CacheTtl::OneHour },
            CacheBreakpoint { at: CachePoint::System, ttl: CacheTtl::OneHour },
            CacheBreakpoint { at: CachePoint::Message(1), ttl: CacheTtl::FiveMinutes },
            CacheBreakpoint { at: CachePoint::Message(3), ttl: CacheTtl::FiveMinutes },
        ];
        request.place_cache_breakpoints(&placed);
        let wire: MessagesRequest = serde_json::from_slice(&serde_json::to_vec(&request).unwrap()).unwrap();
        assert_eq!(wire.cache_breakpoints(), placed);
        // The wire form the API documents.
        let body = serde_json::to_value(&wire).unwrap();
        assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral", "ttl": "1h"}));
        assert_eq!(body["messages"][2]["content"][1]["cache_control"], json!({"type": "ephemeral"}));
        // Still the same conversation.
        assert_eq!(wire.to_prompt().messages, prompt().messages);
    }

    #[test]
    fn a_breakpoint_inside_a_grouped_message_ends_the_group() {
        let mut request = MessagesRequest::from_prompt(&prompt());
        request.place_cache_breakpoints(&[CacheBreakpoint { at: CachePoint::Message(2), ttl: CacheTtl::FiveMinutes }]);
        assert_eq!(request.cache_breakpoints(), [CacheBreakpoint { at: CachePoint::Message(3), ttl: CacheTtl::FiveMinutes }]);
    }

    #[test]
    fn every_marked_block_counts() {
        let request: MessagesRequest = serde_json::from_value(json!({
            "model": "claude-haiku-4-5", "max_tokens": 10,
            "system": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "c", "cache_control": {"type": "ephemeral"}},
                {"type": "image", "source": {}, "cache_control": {"type": "ephemeral", "ttl": "1h"}},
                {"type": "text", "text": "d", "cache_control": {"type": "ephemeral"}}
            ]}]
        }))
        .unwrap();
        let found = request.cache_breakpoints();
        assert_eq!(found.len(), 5);
        assert_eq!(found[3], CacheBreakpoint { at: CachePoint::Message(0), ttl: CacheTtl::OneHour });
    }
}
