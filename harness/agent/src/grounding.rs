//! Path grounding: tool arguments that name files are resolved against the
//! workspace, and a path that would leave it is refused before the tool runs
//! (safe by default, whatever the tool does).
//!
//! A [`Workspace`] on disk resolves real paths: every existing component is
//! canonicalized, so a symlink pointing out of the workspace and an absolute
//! path elsewhere are both refused, while an absolute path inside it is
//! accepted and made relative. A virtual workspace (fixture tools, no files)
//! can only judge the text: absolute paths and climbs above the root are
//! refused.

use std::path::{Component, Path, PathBuf};

/// Argument names treated as workspace paths.
pub const PATH_ARGUMENTS: [&str; 6] = ["path", "file", "file_path", "filename", "dir", "directory"];

/// Where tools may reach.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Workspace {
    /// No files behind the tools: paths are judged as text.
    #[default]
    Virtual,
    /// A directory on disk, canonicalized.
    OnDisk(PathBuf),
    /// No files, but the absolute directory a recorded session worked in
    /// (an imported session's `workspace_root`): absolute paths under it are
    /// inside and made relative; everything else is judged as text.
    VirtualAt(PathBuf),
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escape {
    /// The path as given.
    pub path: String,
}

impl std::fmt::Display for Escape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "path `{}` escapes the workspace; use a path relative to the workspace root", self.path)
    }
}

/// The virtual workspace, for runtimes without files.
pub static VIRTUAL_WORKSPACE: Workspace = Workspace::Virtual;

impl Workspace {
    /// The workspace rooted at `root`, which must exist.
    pub fn on_disk(root: &Path) -> std::io::Result<Self> {
        Ok(Self::OnDisk(root.canonicalize()?))
    }

    /// `raw` relative to the workspace root, normalized (`.` for the root
    /// itself), or why it leaves the workspace.
    pub fn resolve(&self, raw: &str) -> Result<String, Escape> {
        let escape = || Escape { path: raw.to_owned() };
        let relative = match self {
            Self::Virtual => normalize_lexically(raw),
            Self::VirtualAt(root) => normalize_lexically(Path::new(raw).strip_prefix(root).ok().and_then(Path::to_str).unwrap_or(raw)),
            Self::OnDisk(root) => resolve_real(root, raw).and_then(|real| real.strip_prefix(root).ok().map(Path::to_path_buf)),
        }
        .ok_or_else(escape)?;
        let text = relative.to_str().ok_or_else(escape)?;
        Ok(if text.is_empty() { ".".to_owned() } else { text.to_owned() })
    }
}

/// Normalizes every path argument of `arguments` in place.
///
/// Returns an error message for the model when a path leaves the workspace.
pub fn ground_paths(arguments: &mut serde_json::Value, workspace: &Workspace) -> Result<(), String> {
    let Some(object) = arguments.as_object_mut() else { return Ok(()) };
    for key in PATH_ARGUMENTS {
        if let Some(serde_json::Value::String(raw)) = object.get_mut(key) {
            *raw = workspace.resolve(raw).map_err(|escape| escape.to_string())?;
        }
    }
    Ok(())
}

/// `a/./b/../c` → `a/c`; `None` for absolute paths, `~` or climbs above the root.
fn normalize_lexically(raw: &str) -> Option<PathBuf> {
    if raw.starts_with('~') {
        return None;
    }
    let mut parts = PathBuf::new();
    for component in Path::new(raw).components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !parts.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts)
}

/// The real path `raw` names, resolved from `root` as the kernel would:
/// each existing prefix canonicalized (symlinks followed), `..` applied to
/// the real parent, the missing tail appended as written. `None` when it
/// lands outside `root` or cannot be resolved (a symlink loop).
fn resolve_real(root: &Path, raw: &str) -> Option<PathBuf> {
    if raw.starts_with('~') {
        return None;
    }
    let mut real = root.to_path_buf();
    let mut exists = true;
    for component in Path::new(raw).components() {
        match component {
            Component::RootDir | Component::Prefix(_) => real = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                real.pop();
            }
            Component::Normal(part) => {
                real.push(part);
                if exists {
                    match real.canonicalize() {
                        Ok(canonical) => real = canonical,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound && std::fs::symlink_metadata(&real).is_err() => exists = false,
                        // A dangling symlink or a loop: nothing safe to say.
                        Err(_) => return None,
                    }
                }
            }
        }
    }
    real.starts_with(root).then_some(real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn relative_paths_are_normalized() {
        let mut args = json!({"path": "./src/../src/lib.rs", "other": "../x"});
        ground_paths(&mut args, &Workspace::Virtual).unwrap();
        assert_eq!(args, json!({"path": "src/lib.rs", "other": "../x"}));
    }

    #[test]
    fn escaping_paths_are_refused() {
        for bad in ["../etc/passwd", "/etc/passwd", "a/../../b", "~/.ssh/id_rsa", "~root"] {
            let mut args = json!({ "path": bad });
            let error = ground_paths(&mut args, &Workspace::Virtual).unwrap_err();
            assert!(error.contains("escapes the workspace"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_recorded_root_takes_absolute_paths_under_it_only() {
        let workspace = Workspace::VirtualAt(PathBuf::from("/home/me/project"));
        assert_eq!(workspace.resolve("/home/me/project/src/./lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(workspace.resolve("/home/me/project").unwrap(), ".");
        assert_eq!(workspace.resolve("src/lib.rs").unwrap(), "src/lib.rs");
        for bad in ["/home/me/projects/x", "/etc/passwd", "/home/me/project/../secret", "../x"] {
            assert!(workspace.resolve(bad).is_err(), "{bad} must be refused");
        }
    }

    fn disk() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::fs::write(dir.path().join("secret"), "").unwrap();
        let workspace = Workspace::on_disk(&root).unwrap();
        (dir, workspace)
    }

    #[test]
    fn symlinks_out_of_the_workspace_are_refused() {
        let (dir, workspace) = disk();
        let Workspace::OnDisk(root) = &workspace else { unreachable!() };
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("innocent.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        for bad in ["innocent.txt", "up/secret", "up/ws/../secret", "src/../../secret", "/etc/passwd", "loop"] {
            assert!(workspace.resolve(bad).is_err(), "{bad} must be refused");
        }
    }

    #[test]
    fn real_paths_inside_are_accepted_and_made_relative() {
        let (_dir, workspace) = disk();
        let Workspace::OnDisk(root) = &workspace else { unreachable!() };
        std::os::unix::fs::symlink(root.join("src"), root.join("code")).unwrap();
        assert_eq!(workspace.resolve("code/lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(workspace.resolve(&root.join("src/lib.rs").to_string_lossy()).unwrap(), "src/lib.rs");
        assert_eq!(workspace.resolve("new/file.rs").unwrap(), "new/file.rs");
        assert_eq!(workspace.resolve("src/..").unwrap(), ".");
        assert_eq!(workspace.resolve("../ws/src/lib.rs").unwrap(), "src/lib.rs");
    }
}
