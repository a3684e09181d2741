//! Finding where a field is written, for errors found after parsing (a
//! range check, a fault aimed at a missing exchange): the text is read
//! again into a tree of positions and the field's dotted path
//! (`loop.strategies.roku.keep_recent_rounds`, `faults[2].exchange`) is
//! looked up in it.

use serde::Deserialize;
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// A YAML node with the positions of its children.
#[derive(Debug)]
enum Node {
    Map(Vec<(String, Spanned<Node>)>),
    Seq(Vec<Spanned<Node>>),
    Scalar,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<KeyText>()? {
            entries.push((key.0, map.next_value()?));
        }
        Ok(Node::Map(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_i128<E>(self, _: i128) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_u128<E>(self, _: u128) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_str<E>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
}

/// A mapping key as text, whatever its YAML type.
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = KeyText;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_owned()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

/// One step of a field path.
enum Step<'p> {
    Key(&'p str),
    Index(usize),
}

fn steps(path: &str) -> Vec<Step<'_>> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, indices) = part.split_once('[').map_or((part, ""), |(key, rest)| (key, rest));
        if !key.is_empty() {
            steps.push(Step::Key(key));
        }
        for index in indices.split('[').filter_map(|i| i.trim_end_matches(']').parse().ok()) {
            steps.push(Step::Index(index));
        }
    }
    steps
}

/// The 1-based line and column of the deepest part of `path` written in
/// `text` (the field itself, or the nearest enclosing one when the field
/// took its default).
pub fn locate(text: &str, path: &str) -> Option<(u64, u64)> {
    walk(text, path).map(|(position, _)| position)
}

/// The position of `path` only if the whole path is written in `text`:
/// for choosing between two ways a field may be written.
pub fn locate_exact(text: &str, path: &str) -> Option<(u64, u64)> {
    walk(text, path).filter(|(_, whole)| *whole).map(|(position, _)| position)
}

/// The deepest position found along `path`, and whether every step was.
fn walk(text: &str, path: &str) -> Option<((u64, u64), bool)> {
    let root: Node = serde_saphyr::from_str(text).ok()?;
    let mut node = &root;
    let mut found = None;
    let mut whole = true;
    for step in steps(path) {
        let child = match (node, step) {
            (Node::Map(entries), Step::Key(key)) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            (Node::Seq(items), Step::Index(index)) => items.get(index),
            _ => None,
        };
        let Some(child) = child else {
            whole = false;
            break;
        };
        let at = child.referenced;
        if at.line() > 0 {
            found = Some((at.line(), at.column()));
        }
        node = &child.value;
    }
    found.map(|position| (position, whole))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name: x\nloop:\n  strategies:\n    roku: { keep_recent_rounds: 0 }\nfaults:\n  - { exchange: 0, http: { status: 500 } }\n  - exchange: 9\n    cut_after_events: 1\n";

    #[test]
    fn fields_are_found_in_maps_and_lists() {
        assert_eq!(locate(TEXT, "loop.strategies.roku.keep_recent_rounds").map(|l| l.0), Some(4));
        assert_eq!(locate(TEXT, "faults[1].exchange").map(|l| l.0), Some(7));
        assert_eq!(locate(TEXT, "faults[0].http.status").map(|l| l.0), Some(6));
        assert_eq!(locate_exact(TEXT, "faults[1].exchange").map(|l| l.0), Some(7));
        assert_eq!(locate_exact(TEXT, "faults[1].http"), None, "only part of the path is written");
    }

    #[test]
    fn a_defaulted_field_points_at_its_parent() {
        assert_eq!(locate(TEXT, "loop.strategies.roku.high_water_ratio").map(|l| l.0), Some(4));
        assert_eq!(locate(TEXT, "context_window"), None);
    }
}
