//! Path grounding: tool arguments that name files are normalized against the
//! workspace root, and a path that would leave the workspace is refused
//! before the tool runs (safe by default, whatever the tool does).

use std::path::{Component, Path, PathBuf};

/// Argument names treated as workspace paths.
pub const PATH_ARGUMENTS: [&str; 6] = ["path", "file", "file_path", "filename", "dir", "directory"];

/// Normalizes every path argument of `arguments` in place.
///
/// Returns an error message for the model when a path is absolute or climbs
/// out of the workspace with `..`.
pub fn ground_paths(arguments: &mut serde_json::Value) -> Result<(), String> {
    let Some(object) = arguments.as_object_mut() else { return Ok(()) };
    for key in PATH_ARGUMENTS {
        if let Some(serde_json::Value::String(raw)) = object.get_mut(key) {
            let normalized = normalize(raw)
                .ok_or_else(|| format!("path `{raw}` escapes the workspace; use a path relative to the workspace root"))?;
            *raw = normalized;
        }
    }
    Ok(())
}

/// `a/./b/../c` → `a/c`; `None` for absolute paths or ones above the root.
fn normalize(raw: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(raw).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    let joined: PathBuf = parts.iter().collect();
    Some(if parts.is_empty() { ".".into() } else { joined.to_string_lossy().into_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn relative_paths_are_normalized() {
        let mut args = json!({"path": "./src/../src/lib.rs", "other": "../x"});
        ground_paths(&mut args).unwrap();
        assert_eq!(args, json!({"path": "src/lib.rs", "other": "../x"}));
    }

    #[test]
    fn escaping_paths_are_refused() {
        for bad in ["../etc/passwd", "/etc/passwd", "a/../../b"] {
            let mut args = json!({ "path": bad });
            let error = ground_paths(&mut args).unwrap_err();
            assert!(error.contains("escapes the workspace"), "{bad}: {error}");
        }
    }
}
