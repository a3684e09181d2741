//! Prompt-cache break detection, as Roku's `CacheBreakDetector`.
//!
//! Providers cache the longest stable prefix of a request: tools, then the
//! system prompt, then messages. Any change to the tool schema bytes, the
//! system prompt or the model invalidates it. The loop fingerprints the three
//! each step and reports what changed.

use serde::{Deserialize, Serialize};

use crate::tools::ToolSpec;

/// 64-bit FNV-1a: stable across Rust versions and platforms, which std's
/// `DefaultHasher` does not promise; collisions only blur a report.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The tool declarations serialized once to byte-identical JSON.
///
/// Re-serializing every step risks reordering (a map, a `HashMap` upstream)
/// and so a silent cache miss; a frozen snapshot is reused until the tool set
/// really changes. Checking for a change compares the declarations, never
/// serializes them again; the loop's estimate of the JSON is taken once too.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenToolSchema {
    specs: Vec<ToolSpec>,
    json: String,
    hash: u64,
    text_tokens: f64,
}

impl FrozenToolSchema {
    /// Freezes `specs` in their given order.
    pub fn freeze(specs: Vec<ToolSpec>) -> Self {
        let json = serde_json::to_string(&specs).expect("tool specs are plain JSON");
        let hash = fnv1a(json.as_bytes());
        let text_tokens = crate::estimate::text_tokens(&json);
        Self { specs, json, hash, text_tokens }
    }

    /// Reuses `self` when `specs` are the declarations it froze.
    pub fn freeze_or_reuse(self, specs: Vec<ToolSpec>) -> Self {
        if specs == self.specs { self } else { Self::freeze(specs) }
    }

    /// The schema's hash, part of the cache fingerprint.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The frozen declarations as JSON (what the loop's estimate charges).
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The loop's estimate of [`Self::json`], unrounded.
    pub fn text_tokens(&self) -> f64 {
        self.text_tokens
    }

    /// The frozen declarations (what the provider client sends).
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }
}

/// What makes a cached prefix reusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheFingerprint {
    /// Hash of the system prompt text.
    pub system_hash: u64,
    /// Hash of the frozen tool schema.
    pub tools_hash: u64,
    /// Hash of the model name.
    pub model_hash: u64,
}

impl CacheFingerprint {
    /// Fingerprints one request.
    pub fn new(system_prompt: &str, tools: &FrozenToolSchema, model: &str) -> Self {
        Self {
            system_hash: fnv1a(system_prompt.as_bytes()),
            tools_hash: tools.hash(),
            model_hash: fnv1a(model.as_bytes()),
        }
    }
}

/// Which parts of the fingerprint changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheBreak {
    /// The changed parts: `system`, `tools`, `model`.
    pub changed: Vec<&'static str>,
}

/// Remembers the previous fingerprint and reports changes.
#[derive(Debug, Default)]
pub struct CacheBreakDetector {
    previous: Option<CacheFingerprint>,
}

impl CacheBreakDetector {
    /// Records `next`; returns what changed against the previous call.
    pub fn observe(&mut self, next: CacheFingerprint) -> Option<CacheBreak> {
        let previous = self.previous.replace(next)?;
        let changed: Vec<&'static str> = [
            ("system", previous.system_hash != next.system_hash),
            ("tools", previous.tools_hash != next.tools_hash),
            ("model", previous.model_hash != next.model_hash),
        ]
        .into_iter()
        .filter_map(|(part, differs)| differs.then_some(part))
        .collect();
        (!changed.is_empty()).then_some(CacheBreak { changed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec { name: name.into(), description: "d".into(), parameters: serde_json::json!({}) }
    }

    #[test]
    fn first_call_is_never_a_break() {
        let tools = FrozenToolSchema::freeze(vec![spec("a")]);
        let mut detector = CacheBreakDetector::default();
        assert_eq!(detector.observe(CacheFingerprint::new("s", &tools, "m")), None);
        assert_eq!(detector.observe(CacheFingerprint::new("s", &tools, "m")), None);
    }

    #[test]
    fn each_changed_part_is_named() {
        let tools = FrozenToolSchema::freeze(vec![spec("a")]);
        let other_tools = FrozenToolSchema::freeze(vec![spec("b")]);
        let mut detector = CacheBreakDetector::default();
        detector.observe(CacheFingerprint::new("s", &tools, "m"));
        let change = detector.observe(CacheFingerprint::new("s2", &other_tools, "m"));
        assert_eq!(change, Some(CacheBreak { changed: vec!["system", "tools"] }));
        let change = detector.observe(CacheFingerprint::new("s2", &other_tools, "m2"));
        assert_eq!(change, Some(CacheBreak { changed: vec!["model"] }));
    }

    #[test]
    fn frozen_schema_is_reused_when_bytes_match() {
        let frozen = FrozenToolSchema::freeze(vec![spec("a")]);
        let again = frozen.clone().freeze_or_reuse(vec![spec("a")]);
        assert_eq!(frozen, again);
        assert_ne!(again.clone().freeze_or_reuse(vec![spec("b")]).hash(), again.hash());
    }
}
