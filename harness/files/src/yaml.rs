//! Loading YAML input (scenarios, recordings) with errors a user can act
//! on: the file, the line and column, the field path, and what is wrong.
//!
//! serde-saphyr over the alternatives: it is maintained (serde_yaml is
//! deprecated upstream), pure Rust, reports locations on every error, and
//! guards against alias bombs ("billion laughs") with a parse budget on by
//! default. serde_path_to_error adds the field path, which YAML parsers
//! cannot know on their own.

use std::path::Path;

use serde::de::DeserializeOwned;

pub use crate::input_error::{InputError, RangeError};

/// Reads (a regular file within the input size limit) and parses `path`.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T, InputError> {
    let text = crate::input_file::read_text(path, crate::input_file::max_input_bytes())?;
    parse(path, &text)
}

/// Reads and parses `path`, then runs the range `check`; its error is
/// located in the text (line, column, field).
pub fn load_checked<T: DeserializeOwned>(path: &Path, check: impl FnOnce(&T) -> Result<(), RangeError>) -> Result<T, InputError> {
    let text = crate::input_file::read_text(path, crate::input_file::max_input_bytes())?;
    let value = parse(path, &text)?;
    check(&value).map_err(|error| range_error(path, &text, error))?;
    Ok(value)
}

/// A range error found after parsing, with the position of its field.
pub fn range_error(path: &Path, text: &str, error: RangeError) -> InputError {
    let position = crate::yaml_locate::locate(text, &error.field);
    InputError { line: position.map(|p| p.0), column: position.map(|p| p.1), ..InputError::field(path, error.field, error.message) }
}

/// Parses `text`, naming `path` in errors.
pub fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, InputError> {
    let options = serde_saphyr::options! {
        with_snippet: false,
        strict_booleans: true,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
    };
    let mut field = None;
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options, |deserializer| {
        serde_path_to_error::deserialize(deserializer).map_err(|error| {
            let path = error.path().to_string();
            if path != "." && path != "?" {
                field = Some(path);
            }
            error.into_inner()
        })
    });
    result.map_err(|error| {
        let location = error.location();
        InputError {
            file: path.to_owned(),
            line: location.map(|l| l.line()).filter(|l| *l > 0),
            column: location.map(|l| l.column()).filter(|c| *c > 0),
            field,
            message: plain_message(&error),
        }
    })
}

/// The error text without the position serde-saphyr prefixes, which
/// [`InputError`] already shows.
fn plain_message(error: &serde_saphyr::Error) -> String {
    let text = error.to_string();
    let text = text.lines().next().unwrap_or_default().to_owned();
    match text.split_once(" at line ") {
        Some((message, _)) => message.to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        #[allow(dead_code)]
        name: String,
        #[allow(dead_code)]
        inner: Inner,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        #[allow(dead_code)]
        steps: u32,
    }

    #[test]
    fn unknown_fields_name_file_line_and_field() {
        let error = parse::<Outer>(Path::new("s.yaml"), "name: x\ninner:\n  steps: 3\n  stepz: 4\n").unwrap_err();
        assert_eq!(error.line, Some(4), "{error}");
        assert!(error.message.contains("unknown field `stepz`"), "{error}");
        assert_eq!(error.field.as_deref(), Some("inner.stepz"), "{error}");
        assert!(error.to_string().starts_with("s.yaml:4:"), "{error}");
    }

    #[test]
    fn type_errors_name_the_field() {
        let error = parse::<Outer>(Path::new("s.yaml"), "name: x\ninner:\n  steps: many\n").unwrap_err();
        assert_eq!(error.line, Some(3), "{error}");
        assert_eq!(error.field.as_deref(), Some("inner.steps"), "{error}");
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut yaml = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..12 {
            let prev = level - 1;
            let refs = vec![format!("*l{prev}"); 10].join(", ");
            if level == 1 {
                yaml = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
            }
            yaml.push_str(&format!("l{level}: &l{level} [{refs}]\n"));
        }
        let result = parse::<serde_json::Value>(Path::new("bomb.yaml"), &yaml);
        assert!(result.is_err(), "a 10^12-node alias bomb must be refused");
    }
}
