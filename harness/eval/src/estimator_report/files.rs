//! Which files `reloop estimate` reads: the files named, and everything
//! under the directories named, in a stable order.

use std::path::{Path, PathBuf};

use crate::yaml::InputError;

/// Files as given; directories replaced by their files, recursively, sorted,
/// hidden entries (`.git`, `.DS_Store`) skipped.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, &mut files)?;
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            return Err(InputError::file(path, "no such file or directory"));
        }
    }
    Ok(files)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let entries = std::fs::read_dir(dir).map_err(|e| InputError::file(dir, format!("cannot list: {e}")))?;
    let mut children: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| !p.file_name().is_some_and(|name| name.to_string_lossy().starts_with('.')))
        .collect();
    children.sort();
    for child in children {
        if child.is_dir() {
            walk(&child, files)?;
        } else {
            files.push(child);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_expand_recursively_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in ["b.txt", "a/z.json", "a/y.rs", ".hidden", "c/.git/config"] {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let single = root.join("b.txt");
        let files = expand(&[root.to_owned(), single.clone()]).unwrap();
        let names: Vec<String> = files.iter().map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["a/y.rs", "a/z.json", "b.txt", "b.txt"]);
        let missing = expand(&[root.join("nope")]).unwrap_err();
        assert_eq!(missing.message, "no such file or directory");
    }
}
