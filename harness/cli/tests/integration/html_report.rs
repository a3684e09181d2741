//! `reloop report DIR --html FILE`: one self-contained page. The browser
//! check (no console errors, tables present, SVGs drawn) is
//! `.ci/html_check.mjs` in a real headless Chromium; this checks the file.

use crate::util::{reloop, repo, stderr};

#[test]
fn the_page_is_self_contained_with_tables_timelines_and_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    crate::shards::run_bundled_suite(&dir.path().join("latest"));
    let report = reloop(&repo(), &["report", &out("latest"), "--html", &out("report.html"), "--baseline", &out("latest")]);
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.contains("<table class=\"sortable\" id=\"runs\">"));
    assert!(page.contains("<table class=\"sortable\" id=\"diff\">"));
    assert!(page.contains("PASS: all 5 gate checks hold"));
    assert_eq!(page.matches("<tr").count() - 2, 54 + 40, "a row per run and per numeric column (metric), under a header each");
    assert_eq!(page.matches("<svg").count(), 54, "a timeline per run");
    assert!(page.contains("class=\"mark compaction\""), "compaction marks");
    assert!(page.contains("class=\"mark doom\""), "doom-loop marks");
    assert!(page.contains("class=\"break\"") && page.contains("class=\"hit\""), "cache hits and breaks");
    let outside: Vec<&str> = page.match_indices("http").map(|(i, _)| &page[i..(i + 40).min(page.len())]).filter(|s| !s.starts_with("http://www.w3.org/2000/svg")).collect();
    assert!(outside.is_empty(), "no network references: {outside:?}");
}
