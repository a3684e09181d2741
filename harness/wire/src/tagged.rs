//! Serde support for the `"type"`-tagged unions the Responses and Anthropic APIs are made of
//! (stream events, content blocks, deltas, items), where types this crate does not know must be
//! kept verbatim but known types must be well formed.
//!
//! Serde's own `#[serde(tag = "type")]` with an `#[serde(untagged)] Other(Value)` fallback
//! cannot tell the two apart: a known event missing a field silently becomes `Other`, so a
//! malformed `response.completed` would look like an unknown event and the stream would seem to
//! end early. [`tagged_union!`] implements both directions instead, naming each tag once.
//!
//! When `type` is the object's first key (as every SDK and this crate write it), a known tag's
//! payload is read straight from the rest of the object; otherwise the object is buffered as a
//! [`Value`] first, which parses it twice.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeOwned, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

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
pub(crate) fn serialize_tagged<T: Serialize, S: Serializer>(
    kind: &str,
    payload: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
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

/// What [`tagged_union!`] implements for the one-pass read of [`TaggedVisitor`].
pub(crate) trait TaggedUnion: Sized {
    /// Whether `tag` names a variant.
    fn is_known(tag: &str) -> bool;
    /// The variant of the known `tag`, read from `payload` (the object without its `type`).
    fn known<'de, D: Deserializer<'de>>(tag: &str, payload: D) -> Result<Self, D::Error>;
    /// Any object, whole: a known tag's payload must parse; anything else is kept.
    fn from_value(value: Value) -> Result<Self, serde_json::Error>;
}

/// Reads a tagged object: a known tag's payload in one pass when `type` comes first, anything
/// else through [`TaggedUnion::from_value`].
pub(crate) struct TaggedVisitor<T>(pub(crate) PhantomData<T>);

impl<'de, T: TaggedUnion> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value (an object with a `type`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut object = Map::new();
        if let Some(first) = map.next_key::<String>()? {
            let value: Value = map.next_value()?;
            if first == "type" {
                if let Some(tag) = value.as_str().filter(|tag| T::is_known(tag)) {
                    return T::known(tag, MapAccessDeserializer::new(map))
                        .map_err(|error| Error::custom(format_args!("{tag}: {error}")));
                }
            }
            object.insert(first, value);
        }
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        T::from_value(Value::Object(object)).map_err(Error::custom)
    }

    // Not an object: kept whole (as `Other`).

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        let items = Vec::<Value>::deserialize(SeqAccessDeserializer::new(seq))?;
        T::from_value(Value::Array(items)).map_err(Error::custom)
    }

    fn visit_str<E: Error>(self, text: &str) -> Result<T, E> {
        T::from_value(Value::from(text)).map_err(Error::custom)
    }

    fn visit_bool<E: Error>(self, flag: bool) -> Result<T, E> {
        T::from_value(Value::from(flag)).map_err(Error::custom)
    }

    fn visit_i64<E: Error>(self, number: i64) -> Result<T, E> {
        T::from_value(Value::from(number)).map_err(Error::custom)
    }

    fn visit_u64<E: Error>(self, number: u64) -> Result<T, E> {
        T::from_value(Value::from(number)).map_err(Error::custom)
    }

    fn visit_f64<E: Error>(self, number: f64) -> Result<T, E> {
        T::from_value(Value::from(number)).map_err(Error::custom)
    }

    fn visit_unit<E: Error>(self) -> Result<T, E> {
        T::from_value(Value::Null).map_err(Error::custom)
    }
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

        impl $crate::tagged::TaggedUnion for $union {
            fn is_known(tag: &str) -> bool {
                matches!(tag, $($tag)|+)
            }

            fn known<'de, D: serde::Deserializer<'de>>(tag: &str, payload: D) -> Result<Self, D::Error> {
                match tag {
                    $($tag => serde::Deserialize::deserialize(payload).map(Self::$variant),)+
                    _ => unreachable!("known tags only"),
                }
            }

            fn from_value(value: serde_json::Value) -> Result<Self, serde_json::Error> {
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

        impl<'de> serde::Deserialize<'de> for $union {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any($crate::tagged::TaggedVisitor(std::marker::PhantomData))
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
        assert_eq!(
            serde_json::to_string(&parsed).unwrap(),
            r#"{"type":"point","x":1,"label":"a"}"#,
            "the tag comes first"
        );

        let error = serde_json::from_value::<Shape>(json!({"type": "point"})).unwrap_err();
        assert!(
            error.to_string().starts_with("point: missing field `x`"),
            "{error}"
        );

        // `type` after the payload: buffered, read the same.
        let late: Shape = serde_json::from_str(r#"{"x": 1, "label": "a", "type": "point"}"#).unwrap();
        assert_eq!(late, parsed);
        let error = serde_json::from_str::<Shape>(r#"{"x": "1", "type": "point"}"#).unwrap_err();
        assert!(error.to_string().starts_with("point: invalid type"), "{error}");
        let error = serde_json::from_str::<Shape>(r#"{"type": "point", "x": "1"}"#).unwrap_err();
        assert!(error.to_string().starts_with("point: invalid type"), "{error}");

        for other in [
            json!({"type": "circle", "r": 2}),
            json!({"r": 2, "type": "circle"}),
            json!({"type": 5, "x": 1}),
            json!({"x": 1}),
            json!({}),
            json!([1, {"type": "point"}]),
            json!("point"),
            json!(null),
            json!(true),
            json!(-1),
            json!(2.5),
        ] {
            let read: Shape = serde_json::from_str(&other.to_string()).unwrap();
            assert_eq!(read, Shape::Other(other.clone()), "{other} from text");
            let parsed: Shape = serde_json::from_value(other.clone()).unwrap();
            assert_eq!(parsed, Shape::Other(other.clone()));
            assert_eq!(serde_json::to_value(&parsed).unwrap(), other);
        }
    }
}
