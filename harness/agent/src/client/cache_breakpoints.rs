//! Where the loop puts Anthropic `cache_control` breakpoints. A careful
//! agent marks the parts that stay put (tools, system prompt) and the end of
//! the conversation, so each request reads what the previous one wrote; a
//! scenario may choose other places (or none) so a sweep can compare them.
//! OpenAI caches automatically and ignores these settings.

use reloop_wire::anthropic::{CacheBreakpoint, CachePoint, CacheTtl};
use reloop_wire::{Message, Prompt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A place for a breakpoint, named by what it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BreakpointPlace {
    /// The tool declarations.
    Tools,
    /// The system prompt.
    System,
    /// The last message of the request.
    LastMessage,
    /// The last message the previous request sent (the one before the
    /// latest assistant turn): a second anchor when one step adds more
    /// blocks than the provider's 20-block lookback reaches.
    PreviousTurn,
}

/// The loop's breakpoint placement (`loop.cache_breakpoints`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CacheBreakpointSettings {
    /// Where to put breakpoints (at most one each; the API allows 4).
    pub at: Vec<BreakpointPlace>,
    /// Their lifetime: `5m` (writes 1.25x input) or `1h` (writes 2x).
    pub ttl: CacheTtl,
}

impl Default for CacheBreakpointSettings {
    fn default() -> Self {
        Self { at: vec![BreakpointPlace::Tools, BreakpointPlace::System, BreakpointPlace::LastMessage], ttl: CacheTtl::FiveMinutes }
    }
}

impl CacheBreakpointSettings {
    /// The breakpoints for `prompt`; places the prompt lacks (no tools, no
    /// earlier turn) are skipped, and a place named twice counts once.
    pub fn breakpoints(&self, prompt: &Prompt) -> Vec<CacheBreakpoint> {
        let mut points: Vec<CachePoint> = self.at.iter().filter_map(|place| point(*place, prompt)).collect();
        points.sort();
        points.dedup();
        points.into_iter().map(|at| CacheBreakpoint { at, ttl: self.ttl }).collect()
    }
}

fn point(place: BreakpointPlace, prompt: &Prompt) -> Option<CachePoint> {
    match place {
        BreakpointPlace::Tools => (!prompt.tools.is_empty()).then_some(CachePoint::Tools),
        BreakpointPlace::System => prompt.system.as_ref().map(|_| CachePoint::System),
        BreakpointPlace::LastMessage => prompt.messages.len().checked_sub(1).map(CachePoint::Message),
        BreakpointPlace::PreviousTurn => {
            prompt.messages.iter().rposition(|m| matches!(m, Message::Assistant { .. })).and_then(|assistant| assistant.checked_sub(1)).map(CachePoint::Message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolSpec;

    fn prompt(messages: Vec<Message>) -> Prompt {
        Prompt {
            system: Some("s".into()),
            messages,
            tools: vec![ToolSpec { name: "t".into(), description: String::new(), parameters: serde_json::json!({}) }],
            ..Prompt::default()
        }
    }

    #[test]
    fn the_default_marks_tools_system_and_the_last_message() {
        let user = |text: &str| Message::User { text: text.into() };
        let assistant = Message::assistant("a", Vec::new());
        let p = prompt(vec![user("1"), assistant, user("2")]);
        let at = |s: &CacheBreakpointSettings| s.breakpoints(&p).iter().map(|b| b.at).collect::<Vec<_>>();
        let default = CacheBreakpointSettings::default();
        assert_eq!(at(&default), [CachePoint::Tools, CachePoint::System, CachePoint::Message(2)]);
        let anchored = CacheBreakpointSettings { at: vec![BreakpointPlace::PreviousTurn, BreakpointPlace::LastMessage], ttl: CacheTtl::OneHour };
        assert_eq!(at(&anchored), [CachePoint::Message(0), CachePoint::Message(2)]);
        assert!(anchored.breakpoints(&p).iter().all(|b| b.ttl == CacheTtl::OneHour));
        let none = CacheBreakpointSettings { at: Vec::new(), ..default };
        assert!(none.breakpoints(&p).is_empty());
        assert!(CacheBreakpointSettings::default().breakpoints(&Prompt::default()).is_empty());
    }
}
