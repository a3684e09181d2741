//! A message's text, shared instead of copied.
//!
//! A conversation's history is resent with every request, and on a replay both ends of the
//! wire keep it: the loop's transcript and the prompt it renders, the mock's parsed request,
//! its token counter's and its cache simulation's copies of the previous request. With plain
//! `String`s each of those is a copy of every message's text, made again on every turn, and
//! each comparison of a request with the previous one reads both copies byte by byte. A
//! [`Text`] is a reference-counted `str`: a clone is a count, and two texts cloned from one
//! compare equal by their address before any byte is read, so a turn costs its new messages
//! only, however long the history.
//!
//! It reads, writes, hashes, orders and prints as the `str` it holds, so a `Text` in a type
//! changes no serialized form, no hash and no `Debug` output.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An immutable text shared by reference count; see the [module docs](self).
#[derive(Clone, PartialOrd, Ord)]
pub struct Text(Arc<str>);

impl Text {
    /// The text as a `str`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Text {
    /// The empty text: one allocation per thread, since a request read off
    /// the wire gives every tool result an empty name before naming it. Per
    /// thread, not per process, so that threads do not contend for one
    /// reference count.
    fn default() -> Self {
        thread_local! {
            static EMPTY: Text = Text(Arc::from(""));
        }
        EMPTY.with(Text::clone)
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq for Text {
    /// Equal when they are one allocation (a clone), else when their bytes are.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        **self == *other.0
    }
}

impl Hash for Text {
    /// As the `str`, so a `Text` field keys a map as its `String` did.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Self(Arc::from(text))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Self(Arc::from(text))
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Self(Arc::from(text.as_str()))
    }
}

impl From<&Text> for Text {
    fn from(text: &Text) -> Self {
        text.clone()
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        text.0.as_ref().to_owned()
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    /// Straight from the parser's `str` into the shared allocation: through a `String` first,
    /// every text the mock reads would be copied twice.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl serde::de::Visitor<'_> for TextVisitor {
            type Value = Text;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Text, E> {
                Ok(Text::from(text))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Text, E> {
                Ok(Text::from(text))
            }
        }

        deserializer.deserialize_str(TextVisitor)
    }
}

impl schemars::JsonSchema for Text {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "String".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_is_the_same_allocation_and_equal_texts_need_not_be() {
        let text = Text::from("a tool's long output");
        let clone = text.clone();
        assert!(std::ptr::eq(text.as_str(), clone.as_str()));
        let copy = Text::from(String::from("a tool's long output"));
        assert!(!std::ptr::eq(text.as_str(), copy.as_str()));
        assert_eq!(text, copy);
        assert_ne!(text, Text::from("a tool's long outpuT"));
    }

    #[test]
    fn it_serializes_hashes_and_prints_as_its_str() {
        let text = Text::from("say \"hi\"\n");
        assert_eq!(serde_json::to_string(&text).unwrap(), serde_json::to_string("say \"hi\"\n").unwrap());
        assert_eq!(serde_json::from_str::<Text>("\"say \\\"hi\\\"\\n\"").unwrap(), text);
        let hash = |value: &dyn Fn(&mut std::hash::DefaultHasher)| {
            let mut hasher = std::hash::DefaultHasher::new();
            value(&mut hasher);
            hasher.finish()
        };
        assert_eq!(hash(&|h| text.hash(h)), hash(&|h| "say \"hi\"\n".hash(h)));
        assert_eq!(format!("{text:?}"), format!("{:?}", "say \"hi\"\n"));
        assert_eq!(text.to_string(), "say \"hi\"\n");
    }
}
