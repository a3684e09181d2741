//! Serde support for the `"type"`-tagged unions the Responses and Anthropic APIs are made of
//! (stream events, content blocks, deltas, items), where types this crate does not know must be
//! kept verbatim but known types must be well formed.
//!
//! Serde's own `#[serde(tag = "type")]` with an `#[serde(untagged)] Other(Value)` fallback
//! cannot tell the two apart: a known event missing a field silently becomes `Other`, so a
//! malformed `response.completed` would look like an unknown event and the stream would seem to
//! end early. [`tagged_union!`] implements both directions instead, naming each tag once.

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::Value;

/// A payload serialized with a leading `"type"` field.
#[derive(Serialize)]
pub(crate) struct Tagged<'a, T> {
    /// The tag.
    #[serde(rename = "type")]
    pub(crate) kind: &'a str,
    /// The payload's own fields.
    #[serde(flatten)]
    pub(crate) payload: &'a T,
}

/// Serializes `payload` with `"type": kind` first.
pub(crate) fn serialize_tagged<T: Serialize, S: Serializer>(kind: &str, payload: &T, serializer: S) -> Result<S::Ok, S::Error> {
    Tagged { kind, payload }.serialize(serializer)
}

/// Parses the payload of a tagged object: the object without its `"type"` field (so it does not
/// land in the payload's flattened `extra`).
pub(crate) fn payload<T: DeserializeOwned>(mut value: Value) -> Result<T, serde_json::Error> {
    if let Some(object) = value.as_object_mut() {
        object.remove("type");
    }
    serde_json::from_value(value)
}

/// `tagged_union!(Enum { "tag" => Variant, ... })` implements `Serialize` and `Deserialize` for
/// an enum of newtype variants, one per tag, plus a last variant `Other(serde_json::Value)`.
/// Known tags must parse as their variant's payload (otherwise deserialization fails); any other
/// object, including one without a string `type`, is kept whole in `Other`.
macro_rules! tagged_union {
    ($union:ident { $($tag:literal => $variant:ident),+ $(,)? }) => {
        impl serde::Serialize for $union {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Self::$variant(payload) => {
                        $crate::tagged::serialize_tagged($tag, payload, serializer)
                    })+
                    Self::Other(value) => serde::Serialize::serialize(value, serializer),
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $union {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                let kind = value.get("type").and_then(serde_json::Value::as_str).map(str::to_owned);
                let parsed = match kind.as_deref() {
                    $(Some($tag) => $crate::tagged::payload(value).map(Self::$variant),)+
                    _ => Ok(Self::Other(value)),
                };
                parsed.map_err(|error| {
                    serde::de::Error::custom(format_args!("{}: {error}", kind.unwrap_or_default()))
                })
            }
        }
    };
}
pub(crate) use tagged_union;

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::{Map, Value, json};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Point {
        x: i32,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    #[derive(Debug, PartialEq)]
    enum Shape {
        Point(Point),
        Other(Value),
    }
    tagged_union!(Shape { "point" => Point });

    #[test]
    fn known_tags_parse_strictly_and_others_are_kept() {
        let point = json!({"type": "point", "x": 1, "label": "a"});
        let parsed: Shape = serde_json::from_value(point.clone()).unwrap();
        let mut extra = Map::new();
        extra.insert("label".into(), json!("a"));
        assert_eq!(parsed, Shape::Point(Point { x: 1, extra }));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), point);
        assert_eq!(serde_json::to_string(&parsed).unwrap(), r#"{"type":"point","x":1,"label":"a"}"#, "the tag comes first");

        let error = serde_json::from_value::<Shape>(json!({"type": "point"})).unwrap_err();
        assert!(error.to_string().starts_with("point: missing field `x`"), "{error}");

        // `type` after the payload reads the same; errors name the tag wherever it is.
        let late: Shape = serde_json::from_str(r#"{"x": 1, "label": "a", "type": "point"}"#).unwrap();
        assert_eq!(late, parsed);
        for wrong in [r#"{"x": "1", "type": "point"}"#, r#"{"type": "point", "x": "1"}"#] {
            let error = serde_json::from_str::<Shape>(wrong).unwrap_err();
            assert!(error.to_string().starts_with("point: invalid type"), "{error}");
        }
        // A truncated object is a syntax error, not the tag's (reports quote it).
        let error = serde_json::from_str::<Shape>(r#"{"type": "point", "x": "1"#).unwrap_err();
        assert!(error.to_string().starts_with("EOF while parsing"), "{error}");

        for other in
            [json!({"type": "circle", "r": 2}), json!({"r": 2, "type": "circle"}), json!({"type": 5, "x": 1}), json!({"x": 1}), json!([1]), json!(null)]
        {
            let parsed: Shape = serde_json::from_value(other.clone()).unwrap();
            assert_eq!(parsed, Shape::Other(other.clone()));
            assert_eq!(serde_json::to_value(&parsed).unwrap(), other);
        }
    }
}
