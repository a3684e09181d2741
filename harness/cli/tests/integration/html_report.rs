//! `reloop report DIR --html FILE`: one self-contained page. The browser
//! check (no console errors, tables present, SVGs drawn) is
//! `.ci/html_check.mjs` in a real headless Chromium; this checks the file.

use crate::util::{reloop, repo, stderr, stdout};

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
    let runs = crate::tables::read_rows(&dir.path().join("latest/runs.parquet")).len();
    // The five default gates over the suite, the removed-runs check, and the token and cost checks per scenario.
    assert!(page.contains(&format!("PASS: all {} gate checks hold", 6 + 2 * runs)), "{}", &page[..page.len().min(2_000)]);
    let table = |id: &str| {
        let start = page.find(&format!("id=\"{id}\"")).unwrap();
        &page[start..start + page[start..].find("</table>").unwrap()]
    };
    assert_eq!(table("runs").matches("<tr").count() - 1, runs, "a row per run under a header");
    let metrics = table("diff").matches("<tr").count() - 1;
    assert!(metrics >= 40, "a row per numeric run column under a header: {metrics}");
    assert_eq!(page.matches("<svg").count(), runs, "a timeline per run");
    assert!(page.contains("class=\"mark compaction\""), "compaction marks");
    assert!(page.contains("class=\"mark doom\""), "doom-loop marks");
    assert!(page.contains("class=\"break\"") && page.contains("class=\"hit\""), "cache hits and breaks");
    // Issue 30: the timeline header counted main calls' breaks only (7 against the table's 14).
    for run in crate::tables::read_rows(&dir.path().join("latest/runs.parquet")) {
        let header = format!("<summary>{} <small>{}: {} calls,", run["scenario"], run["variant"], run["llm_calls"]);
        let at = page.find(&header).unwrap_or_else(|| panic!("no timeline header {header}"));
        let summary = &page[at..at + page[at..].find("</summary>").unwrap()];
        assert!(summary.ends_with(&format!("simulated breaks {}</small>", run["cache_breaks_simulated"])), "{summary}");
    }
    // Issue 27: every run's steps travel with the page for the viewer, a
    // scenario opens its run, and the table filters by outcome, strategy, wire.
    for row in 0..runs {
        assert!(page.contains(&format!("<script type=\"application/json\" id=\"run-{row}\">")), "viewer data of run {row}");
    }
    assert_eq!(table("runs").matches("<a class=\"view\"").count(), runs, "a viewer link per run");
    for filter in ["outcome", "strategy", "wire"] {
        assert!(page.contains(&format!("<select name=\"{filter}\">")), "{filter} filter");
    }
    assert!(page.contains("\"tools\":[{\""), "tool calls in the viewer data");
    // Addresses inside the runs' data are text the loop saw (tool output), never fetched.
    let mut markup = String::new();
    let mut rest = page.as_str();
    while let Some(start) = rest.find("<script type=\"application/json\"") {
        markup.push_str(&rest[..start]);
        rest = &rest[start + rest[start..].find("</script>").unwrap()..];
    }
    markup.push_str(rest);
    let page = markup;
    let urls = page.match_indices("http://").chain(page.match_indices("https://"));
    let outside: Vec<&str> = urls.map(|(i, _)| &page[i..(i + 40).min(page.len())]).filter(|s| !s.starts_with("http://www.w3.org/2000/svg")).collect();
    assert!(outside.is_empty(), "no network references: {outside:?}");
}

/// Issue 40: a sweep's page puts the strategies side by side (savings, cost
/// with the cache priced, cost against `none`, simulated breaks, retention)
/// and draws cost against retention, overall first, one labelled point per
/// strategy; the figures are the runs table's own sums.
#[test]
fn a_sweep_page_shows_the_strategies_and_their_frontier() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let scenario = repo().join("scenarios/long-session-microcompaction.yaml");
    let variants = repo().join("examples/variants/masking-batch.yaml");
    let sweep = reloop(
        &repo(),
        &["sweep", scenario.to_str().unwrap(), "--strategies", "roku,masking,none", "--variants", variants.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    assert!(matches!(sweep.status.code(), Some(0 | 1)), "{}", stderr(&sweep));
    let table = stdout(&sweep);
    assert!(table.contains("cost vs none") && table.contains("retention"), "{table}");
    let page_file = dir.path().join("sweep.html");
    let report = reloop(&repo(), &["report", out.to_str().unwrap(), "--html", page_file.to_str().unwrap()]);
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    let page = std::fs::read_to_string(page_file).unwrap();
    let runs = crate::tables::read_rows(&out.join("runs.parquet"));
    let cost = |variant: &str| -> f64 { runs.iter().find(|r| r["variant"] == variant).unwrap()["estimated_cost_usd"].parse().unwrap() };
    let names = ["roku", "masking", "none", "masking-batch5", "masking-batch10", "masking-batch20"];
    let section = |start: &str, end: &str| {
        let at = page.find(start).unwrap_or_else(|| panic!("no {start}"));
        &page[at..at + page[at..].find(end).unwrap()]
    };
    let by_variant = section("id=\"by-variant\"", "</table>");
    for name in names {
        let against = format!("{:+.1}%", (cost(name) / cost("none") - 1.0) * 100.0);
        let row = by_variant.split("<tr>").find(|r| r.starts_with(&format!("<td>{name}</td>"))).unwrap_or_else(|| panic!("no row {name}: {by_variant}"));
        assert!(row.contains(&format!("<td>{:.4}</td><td>{against}</td>", cost(name))), "{name}: cost and cost vs none from the runs table: {row}");
    }
    let overall = section("<figure class=\"frontier overall\"", "</figure>");
    assert!(page.find("<figure class=\"frontier overall\"").unwrap() < page.find("<figure class=\"frontier scenario\"").unwrap(), "the overall chart first");
    for name in names {
        assert!(overall.contains(&format!("data-variant=\"{name}\"")), "a point for {name}: {overall}");
    }
    assert_eq!(overall.matches("<g class=\"point").count(), names.len(), "one point per strategy");
    assert!(overall.contains("retention: 1 − references lost / needed") && overall.contains("cost, USD (prompt cache priced)"), "labelled axes");
    assert_eq!(page.matches("<figure class=\"frontier scenario\"").count(), 1, "one chart per scenario");
}
