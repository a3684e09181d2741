//! The frozen tool schema: the run's tool declarations serialized once, in
//! the client's wire format, and the same bytes spliced into every request.
//!
//! Re-serializing every step risks reordering (a map, a `HashMap` upstream)
//! and so a silent cache miss, and costs a serialization of every schema per
//! request. A schema is frozen when the run starts and again only when the
//! visible tool set changes (`AgentLoop::visible_tools_changed`: deferred
//! tools loaded, plan mode toggled); until then every request reuses its
//! bytes, its hash and its estimate.

use std::sync::Arc;

use reloop_wire::Format;

use crate::cache_break::fnv1a;
use crate::client::cache_breakpoints::CacheBreakpointSettings;
use crate::tools::ToolSpec;

/// The tool declarations, frozen: the specs, their bytes in the wire format
/// the run speaks, and the figures taken of them once.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenToolSchema {
    specs: Vec<ToolSpec>,
    wire_json: Arc<[u8]>,
    hash: u64,
    text_tokens: f64,
}

impl FrozenToolSchema {
    /// Freezes `specs` in their given order, as `format` declares them (with
    /// Anthropic's tools breakpoint when `cache` places one).
    pub fn freeze(specs: Vec<ToolSpec>, format: Format, cache: &CacheBreakpointSettings) -> Self {
        let neutral = serde_json::to_string(&specs).expect("tool specs are plain JSON");
        let hash = fnv1a(neutral.as_bytes());
        let text_tokens = crate::estimate::text_tokens(&neutral);
        let wire_json = reloop_wire::codec::encode_tools(format, &specs, |prompt| cache.breakpoints(prompt)).into();
        Self { specs, wire_json, hash, text_tokens }
    }

    /// No tools (summary requests): nothing is spliced into the body.
    pub fn none() -> Self {
        Self { specs: Vec::new(), wire_json: Arc::from(&b"[]"[..]), hash: fnv1a(b"[]"), text_tokens: 0.0 }
    }

    /// The schema's hash, part of the cache fingerprint.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The loop's estimate of the declarations, unrounded.
    pub fn text_tokens(&self) -> f64 {
        self.text_tokens
    }

    /// The frozen declarations.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The declarations as the wire format's `tools` array: the bytes every
    /// request body carries, shared, never serialized again.
    pub fn wire_json(&self) -> &Arc<[u8]> {
        &self.wire_json
    }
}

/// The run's frozen schema: frozen on first use, then the same schema (the
/// same bytes) for every request until [`Freezer::visible_tools_changed`].
#[derive(Debug)]
pub struct Freezer {
    format: Format,
    cache: CacheBreakpointSettings,
    current: Option<Arc<FrozenToolSchema>>,
}

impl Freezer {
    /// Freezes for a client speaking `format` with `cache` breakpoints.
    pub fn new(format: Format, cache: CacheBreakpointSettings) -> Self {
        Self { format, cache, current: None }
    }

    /// The frozen schema; `visible` (the tools to declare) is only asked
    /// for when there is none yet or the visible tool set changed.
    pub fn current(&mut self, visible: impl FnOnce() -> Vec<ToolSpec>) -> Arc<FrozenToolSchema> {
        let (format, cache) = (self.format, &self.cache);
        self.current.get_or_insert_with(|| Arc::new(FrozenToolSchema::freeze(visible(), format, cache))).clone()
    }

    /// The schema frozen last; `None` before the first freeze and after a
    /// change, until the next [`Freezer::current`].
    pub fn frozen(&self) -> Option<&FrozenToolSchema> {
        self.current.as_deref()
    }

    /// The visible tool set changed (deferred tools loaded by `tool_search`,
    /// plan mode toggled): the next [`Freezer::current`] freezes again. The
    /// only way a run's schema changes.
    pub fn visible_tools_changed(&mut self) {
        self.current = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec { name: name.into(), description: "d".into(), parameters: serde_json::json!({"type": "object"}) }
    }

    #[test]
    fn the_wire_bytes_are_the_formats_tools_array() {
        let cache = CacheBreakpointSettings::default();
        let chat = FrozenToolSchema::freeze(vec![spec("a")], Format::OpenaiChat, &cache);
        let json: serde_json::Value = serde_json::from_slice(chat.wire_json()).unwrap();
        assert_eq!(json[0]["function"]["name"], "a");
        let anthropic = FrozenToolSchema::freeze(vec![spec("a")], Format::Anthropic, &cache);
        let json: serde_json::Value = serde_json::from_slice(anthropic.wire_json()).unwrap();
        assert_eq!(json[0]["name"], "a");
        assert_eq!(json[0]["cache_control"]["type"], "ephemeral", "the default places a tools breakpoint");
        assert_eq!(chat.hash(), anthropic.hash(), "the fingerprint is format-neutral");
    }

    #[test]
    fn the_bytes_are_reused_until_the_visible_tools_change() {
        let mut freezer = Freezer::new(Format::OpenaiResponses, CacheBreakpointSettings::default());
        let mut declared = 0;
        let mut visible = |names: &[&str]| {
            declared += 1;
            names.iter().map(|name| spec(name)).collect::<Vec<_>>()
        };
        let first = freezer.current(|| visible(&["a"]));
        let second = freezer.current(|| visible(&["a", "b"]));
        assert!(Arc::ptr_eq(first.wire_json(), second.wire_json()), "the same bytes, not equal ones");
        freezer.visible_tools_changed();
        let third = freezer.current(|| visible(&["a", "b"]));
        assert!(!Arc::ptr_eq(first.wire_json(), third.wire_json()));
        assert_eq!(third.specs().len(), 2);
        assert_ne!(third.hash(), first.hash());
        assert_eq!(declared, 2, "the tools are declared and serialized once per freeze");
    }
}
