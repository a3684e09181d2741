//! Canonical forms of a tool call, so that whitespace or key-order noise in
//! the model's JSON does not hide a loop, and results compare by hash.

use crate::cache_break::fnv1a;

/// The arguments re-serialized with object keys sorted; text that is not
/// JSON is compared trimmed.
pub fn canonical_arguments(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(value) => canonical_json(&value),
        Err(_) => arguments.trim().to_owned(),
    }
}

/// The hash the no-progress detector compares results by: the error flag and
/// the content, so an error and a success with the same text differ.
pub fn result_hash(is_error: bool, content: &str) -> u64 {
    fnv1a(content.as_bytes()) ^ u64::from(is_error)
}

/// JSON with object keys sorted, so equal values compare equal.
fn canonical_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let body: Vec<String> = entries.into_iter().map(|(k, v)| format!("{}:{}", serde_json::Value::from(k.as_str()), canonical_json(v))).collect();
            format!("{{{}}}", body.join(","))
        }
        serde_json::Value::Array(items) => {
            format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        assert_eq!(canonical_arguments(r#"{ "b" : 2, "a": {"y":1,"x":[1, 2]} }"#), r#"{"a":{"x":[1,2],"y":1},"b":2}"#);
        assert_eq!(canonical_arguments("  not json "), "not json");
    }

    #[test]
    fn an_error_and_a_success_with_one_text_differ() {
        assert_ne!(result_hash(true, "x"), result_hash(false, "x"));
        assert_eq!(result_hash(false, "x"), result_hash(false, "x"));
    }
}
