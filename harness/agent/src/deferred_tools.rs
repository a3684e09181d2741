//! Roku's deferred tools (`DeferredToolState`, `apply_deferred_mode`, seeds
//! 000 and 001): when the tool schema passes a size threshold, only the core
//! tools and a `tool_search` pseudo-tool are declared. `tool_search(query)`
//! returns the matching tools' schemas and makes them visible from the next
//! request on, which refreezes the schema (a cache break the detector
//! attributes to `tools`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tools::{ToolOutput, ToolSpec};

/// The pseudo-tool's name.
pub const TOOL_SEARCH: &str = "tool_search";

/// The scenario's `loop.deferred_tools`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, default)]
pub struct DeferredToolSettings {
    /// Defer when the runtime's tool schema is estimated above this many
    /// tokens; absent: never.
    pub threshold_tokens: Option<u64>,
    /// The runtime tools always declared; the loop's own tools (pseudo-
    /// tools, task tools, `Agent`) always are.
    pub core: Vec<String>,
}

impl DeferredToolSettings {
    /// Whether `runtime` (the runtime's tool declarations) is deferred.
    pub fn applies_to(&self, runtime: &[ToolSpec]) -> bool {
        self.threshold_tokens.is_some_and(|threshold| schema_tokens(runtime) > threshold)
    }

    /// Whether `name` is one of the runtime tools kept out of sight until
    /// discovered.
    pub fn is_deferred(&self, name: &str) -> bool {
        !self.core.iter().any(|core| core == name)
    }
}

/// The loop's estimate of `specs` as declared JSON.
pub fn schema_tokens(specs: &[ToolSpec]) -> u64 {
    crate::estimate::text_tokens(&serde_json::to_string(specs).unwrap_or_default()).round() as u64
}

/// The declaration of `tool_search`.
pub fn tool_search_spec() -> ToolSpec {
    ToolSpec {
        name: TOOL_SEARCH.into(),
        description: "Find more tools. Some tools are not declared until searched for: give words of what you need \
                      (or `select:name1,name2`); the matching tools' schemas are returned and they can be called from \
                      the next turn on."
            .into(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": { "query": { "type": "string", "description": "Words describing the tool, or select:name1,name2." } },
            "required": ["query"],
        }),
    }
}

/// The deferred tools matching `query`: `select:a,b` by exact name, else
/// every tool whose name or description holds all the query's words (any
/// case).
pub fn search<'s>(deferred: &'s [ToolSpec], query: &str) -> Vec<&'s ToolSpec> {
    if let Some(names) = query.trim().strip_prefix("select:") {
        let wanted: Vec<&str> = names.split(',').map(str::trim).collect();
        return deferred.iter().filter(|spec| wanted.contains(&spec.name.as_str())).collect();
    }
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if words.is_empty() {
        return Vec::new();
    }
    deferred
        .iter()
        .filter(|spec| {
            let haystack = format!("{} {}", spec.name.replace(['_', '-'], " "), spec.description).to_lowercase();
            words.iter().all(|word| haystack.contains(word.as_str()) || spec.name.to_lowercase() == *word)
        })
        .collect()
}

/// `tool_search`'s answer: the schemas found, as JSON, or an error naming
/// the searchable tools when nothing matched.
pub fn search_result(found: &[&ToolSpec], deferred: &[ToolSpec]) -> ToolOutput {
    if found.is_empty() {
        let names: Vec<&str> = deferred.iter().map(|spec| spec.name.as_str()).collect();
        return ToolOutput::error(format!("no tool matches; the searchable tools are: {}", names.join(", ")));
    }
    let schemas = serde_json::to_string_pretty(found).unwrap_or_default();
    ToolOutput::ok(format!("Found {} tool(s); they can be called from the next turn on:\n{schemas}", found.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec { name: name.into(), description: description.into(), parameters: serde_json::json!({"type": "object"}) }
    }

    fn names(found: Vec<&ToolSpec>) -> Vec<&str> {
        found.into_iter().map(|spec| spec.name.as_str()).collect()
    }

    #[test]
    fn search_by_words_or_by_name() {
        let deferred = [spec("query_sql", "Run a SQL query on the warehouse."), spec("web_fetch", "Fetch a web page by URL.")];
        assert_eq!(names(search(&deferred, "SQL warehouse")), ["query_sql"]);
        assert_eq!(names(search(&deferred, "fetch")), ["web_fetch"]);
        assert_eq!(names(search(&deferred, "select: web_fetch,query_sql")), ["query_sql", "web_fetch"]);
        assert!(search(&deferred, "email").is_empty());
        assert!(search(&deferred, "  ").is_empty());
    }

    #[test]
    fn nothing_found_names_what_can_be_found() {
        let deferred = [spec("query_sql", "SQL")];
        let output = search_result(&[], &deferred);
        assert!(output.is_error && output.content.ends_with("query_sql"));
        let output = search_result(&[&deferred[0]], &deferred);
        assert!(!output.is_error && output.content.contains("\"name\": \"query_sql\""));
    }

    #[test]
    fn only_a_schema_above_the_threshold_is_deferred() {
        let tools = [spec("a", &"long description ".repeat(50))];
        let settings = |threshold| DeferredToolSettings { threshold_tokens: threshold, core: vec!["b".into()] };
        assert!(settings(Some(100)).applies_to(&tools));
        assert!(!settings(Some(10_000)).applies_to(&tools));
        assert!(!settings(None).applies_to(&tools));
        assert!(settings(None).is_deferred("a") && !settings(None).is_deferred("b"));
    }
}
