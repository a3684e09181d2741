//! Serde support for fields where "absent", "null" and "a value" are three different things on
//! the wire. Providers are inconsistent about them (OpenAI sends `"content":null` in some deltas
//! and omits `content` in others; Azure sends `"usage":null` where OpenAI omits `usage`), and
//! the captures must re-serialize to the same JSON, so such fields are `Option<Option<T>>`:
//! `None` = absent, `Some(None)` = `null`, `Some(Some(v))` = a value.
//!
//! Use as `#[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Serializes a present field: `null` or its value. (Absent fields are skipped by the caller's
/// `skip_serializing_if`.)
pub(crate) fn serialize<T: Serialize, S: Serializer>(value: &Option<Option<T>>, serializer: S) -> Result<S::Ok, S::Error> {
    value.as_ref().and_then(Option::as_ref).serialize(serializer)
}

/// Deserializes a present field; `null` becomes `Some(None)`. (Absent fields take the caller's
/// `default`, `None`.)
pub(crate) fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Probe {
        #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
        field: Option<Option<String>>,
    }

    #[test]
    fn keeps_absent_null_and_value_apart() {
        for (wire, expected) in [(json!({}), None), (json!({"field": null}), Some(None)), (json!({"field": "x"}), Some(Some("x".to_owned())))] {
            let probe: Probe = serde_json::from_value(wire.clone()).unwrap();
            assert_eq!(probe.field, expected);
            assert_eq!(serde_json::to_value(&probe).unwrap(), wire);
        }
    }
}
