//! Serde support for the "a plain string or a list of typed parts" fields every format has
//! (Chat `content`, Responses `input`, Anthropic `system` and `content`).
//!
//! Serde's `#[serde(untagged)]` would buffer each value into its private `Content` tree and
//! parse it a second time, once per variant tried: for the mock server, which parses every
//! request of a growing conversation, that was the largest cost beyond the floor. A JSON
//! value's first token already says which of the two it is, so [`text_or_list`] reads it once.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::SeqAccessDeserializer;
use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};

/// What a text-or-list field holds.
pub(crate) enum TextOrList<T> {
    /// A plain string.
    Text(crate::Text),
    /// A list of parts.
    List(Vec<T>),
}

/// Reads a string or a list of `T` in one pass; `expecting` names the field in errors (it
/// completes "invalid type: ..., expected ...").
pub(crate) fn text_or_list<'de, T: Deserialize<'de>, D: Deserializer<'de>>(deserializer: D, expecting: &'static str) -> Result<TextOrList<T>, D::Error> {
    deserializer.deserialize_any(TextOrListVisitor { expecting, parts: PhantomData })
}

/// The visitor of [`text_or_list`].
struct TextOrListVisitor<T> {
    expecting: &'static str,
    parts: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for TextOrListVisitor<T> {
    type Value = TextOrList<T>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(self.expecting)
    }

    fn visit_str<E: Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(TextOrList::Text(text.into()))
    }

    fn visit_string<E: Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(TextOrList::Text(text.into()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Vec::deserialize(SeqAccessDeserializer::new(seq)).map(TextOrList::List)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn read(value: &str) -> Result<TextOrList<Value>, serde_json::Error> {
        text_or_list(&mut serde_json::Deserializer::from_str(value), "a string or a list")
    }

    #[test]
    fn strings_and_lists_are_read_and_anything_else_is_named() {
        assert!(matches!(read(r#""hi""#), Ok(TextOrList::Text(text)) if text == "hi"));
        assert!(matches!(read(r#""a\nb""#), Ok(TextOrList::Text(text)) if text == "a\nb"));
        assert!(matches!(read(r#"[{"type": "text"}, 1]"#), Ok(TextOrList::List(parts)) if parts == [json!({"type": "text"}), json!(1)]));
        let error = read("{}").err().expect("an object is neither");
        assert!(error.to_string().starts_with("invalid type: map, expected a string or a list"), "{error}");
    }
}
