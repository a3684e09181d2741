//! `reloop schema`: the schemas checked into docs/schema/ are exactly what
//! the binary prints now, so editors and `.ci/check_schemas.py` never judge
//! files against a stale format.

use crate::util::{reloop, repo, stderr, stdout};

#[test]
fn the_checked_in_schemas_are_fresh() {
    let mut stale = Vec::new();
    for format in ["scenario", "recording", "gates", "strategy"] {
        let output = reloop(&repo(), &["schema", format]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let file = format!("docs/schema/{format}.schema.json");
        let checked_in = std::fs::read_to_string(repo().join(&file)).unwrap_or_default();
        if stdout(&output) != checked_in {
            stale.push(format!("{file} is stale; refresh it: cargo run -p reloop -- schema {format} > {file}"));
        }
    }
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

#[test]
fn an_unknown_format_is_bad_input() {
    let output = reloop(&repo(), &["schema", "nonsense"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("scenario"), "the message lists the formats: {}", stderr(&output));
}
