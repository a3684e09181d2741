//! The workspace root of an imported session: the directory its absolute
//! paths are made relative to, so path grounding sees them as inside.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::session::{Arguments, ToolCall};

/// Argument names that hold paths: the loop's grounding list
/// (`reloop_agent::grounding::PATH_ARGUMENTS`; this crate depends on wire only).
const PATH_ARGUMENTS: [&str; 6] = ["path", "file", "file_path", "filename", "dir", "directory"];

/// The deepest directory holding the session's working directory and every
/// absolute path argument of its calls; `None` when there is neither.
///
/// Rule: a session that read `/opt/lib/x` while working in `/home/me/p`
/// gets the root `/`, so both stay inside and the replay answers every
/// recorded call from its fixture.
pub fn workspace_root<'c>(cwd: Option<&str>, calls: impl Iterator<Item = &'c ToolCall>) -> Option<String> {
    let mut paths: Vec<PathBuf> = cwd.map(PathBuf::from).into_iter().collect();
    for call in calls {
        let Arguments::Json(Value::Object(arguments)) = &call.arguments else { continue };
        for key in PATH_ARGUMENTS {
            if let Some(path) = arguments.get(key).and_then(Value::as_str).filter(|p| p.starts_with('/')) {
                paths.push(Path::new(path).parent().unwrap_or(Path::new("/")).to_path_buf());
            }
        }
    }
    let mut common = paths.first()?.clone();
    for path in &paths[1..] {
        while !path.starts_with(&common) {
            if !common.pop() {
                break;
            }
        }
    }
    Some(common.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(path: &str) -> ToolCall {
        ToolCall { id: "c".into(), name: "read".into(), arguments: Arguments::Json(serde_json::json!({ "path": path })) }
    }

    #[test]
    fn the_root_holds_the_cwd_and_every_absolute_path() {
        let inside = [call("/home/me/p/src/a.rs"), call("rel/b.rs")];
        assert_eq!(workspace_root(Some("/home/me/p"), inside.iter()).as_deref(), Some("/home/me/p"));
        let outside = [call("/home/me/p/a.rs"), call("/home/me/lib/x.rs")];
        assert_eq!(workspace_root(Some("/home/me/p"), outside.iter()).as_deref(), Some("/home/me"));
        let far = [call("/opt/homebrew/README.md")];
        assert_eq!(workspace_root(Some("/Users/b/w"), far.iter()).as_deref(), Some("/"));
        assert_eq!(workspace_root(None, [call("rel")].iter()), None);
    }
}
