//! `docs/architecture.md` names only paths that exist (issue 41): every
//! path in backticks and every link, resolved from the repository root or
//! from `docs/` as a reader would. A path is any span without spaces that
//! holds a `/` or ends in a file extension; a glob (`*.json`) must match a
//! file, and placeholders in capitals (`NAME.recording.yaml`) are templates.

use std::path::Path;

use crate::util::repo;

/// Spans that contain a `/` without being paths.
const NOT_PATHS: [&str; 1] = ["reloop.recording/v1"];
/// Placeholder segments of templates.
const PLACEHOLDERS: [&str; 4] = ["NAME", "OUT", "DIR", "FORMAT"];
const EXTENSIONS: [&str; 9] = ["rs", "md", "yaml", "yml", "json", "jsonl", "toml", "py", "mjs"];

/// The paths `text` names: backticked spans and link targets.
fn named_paths(text: &str) -> Vec<&str> {
    let spans = text.split('`').skip(1).step_by(2);
    let links = text.split("](").skip(1).filter_map(|rest| rest.split_once(')').map(|(target, _)| target));
    let is_path = |span: &&str| {
        let extension = span.rsplit_once('.').is_some_and(|(_, ext)| EXTENSIONS.contains(&ext));
        !span.is_empty()
            && !span.contains(char::is_whitespace)
            && !span.starts_with(['/', '.', '#'])
            && !span.contains("::")
            && !span.contains("://")
            && (span.contains('/') || extension)
            && !NOT_PATHS.contains(span)
            && !span.split(['/', '.']).any(|segment| PLACEHOLDERS.contains(&segment))
    };
    spans.chain(links).filter(is_path).collect()
}

/// Whether `path` exists under `base` (a glob in its last segment: a file
/// of that folder matches it).
fn exists(base: &Path, path: &str) -> bool {
    let Some((folder, pattern)) = path.rsplit_once('/').filter(|(_, last)| last.contains('*')) else { return base.join(path).exists() };
    let (prefix, suffix) = pattern.split_once('*').unwrap();
    std::fs::read_dir(base.join(folder)).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|entry| entry.file_name().to_str().is_some_and(|name| name.starts_with(prefix) && name.ends_with(suffix)))
    })
}

#[test]
fn every_path_the_architecture_doc_names_exists() {
    let repo = repo();
    let text = std::fs::read_to_string(repo.join("docs/architecture.md")).unwrap();
    let paths = named_paths(&text);
    assert!(paths.len() > 40, "the doc names its paths: {paths:?}");
    let missing: Vec<&str> = paths.into_iter().filter(|path| !exists(&repo, path) && !exists(&repo.join("docs"), path)).collect();
    assert!(missing.is_empty(), "docs/architecture.md names paths that do not exist: {missing:?}");
}

#[test]
fn the_path_check_finds_paths_globs_and_links_and_passes_over_the_rest() {
    let text = "`harness/wire/src/` and `server.rs`, `docs/*.md`, [a](metrics.md), `a b/c`, `reloop_wire::codec`, `/v1/...`, `NAME.recording.yaml`, `reloop.recording/v1`";
    assert_eq!(named_paths(text), ["harness/wire/src/", "server.rs", "docs/*.md", "metrics.md"]);
    let repo = repo();
    assert!(exists(&repo, "docs/*.md") && !exists(&repo, "docs/*.nothing") && !exists(&repo, "server.rs"));
}
