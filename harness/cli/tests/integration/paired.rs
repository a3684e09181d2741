//! Paired comparisons of a sweep (issue 45): the strategies ran the same
//! scenarios, so each scenario's difference is compared, with a seeded
//! bootstrap interval, in the table, the PR comment and the HTML report.

use crate::util::{reloop, repo, stderr, stdout};

#[test]
fn a_sweep_of_the_long_suite_names_the_better_strategy_with_its_interval_in_the_table_the_comment_and_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let (out, comment, page) = (dir.path().join("sweep"), dir.path().join("comment.md"), dir.path().join("page.html"));
    let suite = repo().join("scenarios/long");
    let args = ["sweep", suite.to_str().unwrap(), "--strategies", "roku,opencode", "--out", out.to_str().unwrap(), "--markdown", comment.to_str().unwrap()];
    let output = reloop(dir.path(), &args);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    assert!(text.contains("paired, roku against opencode (per scenario over 5 scenarios; 2000 bootstrap resamples, 95 %):"), "{text}");
    assert!(text.contains("like for like: 5 of 5 scenarios ended alike under opencode and roku"), "{text}");
    let tokens = text.lines().find(|line| line.trim_start().starts_with("input tokens")).unwrap_or_else(|| panic!("{text}"));
    // Roku's layers send less than OpenCode's prune-and-summarize on every long session.
    assert!(tokens.contains("roku better at 95 %") && tokens.contains("roku better in 5 of 5 scenarios, worse in 0"), "{tokens}");
    let interval = tokens.split('[').nth(1).and_then(|rest| rest.split(']').next()).unwrap_or_else(|| panic!("{tokens}"));
    let bounds: Vec<f64> = interval.split(", ").map(|b| b.trim_end_matches('%').parse().unwrap()).collect();
    assert!(bounds[0] < bounds[1] && bounds[1] < 0.0, "roku sends less on every scenario: {tokens}");

    let md = std::fs::read_to_string(&comment).unwrap();
    let row = md.lines().find(|line| line.starts_with("| `roku` vs `opencode` | input tokens | ")).unwrap_or_else(|| panic!("{md}"));
    assert!(md.contains("**Paired comparison**") && row.contains(&format!("\\[{interval}\\]")) && row.contains("roku better at 95 %"), "{row}");

    // Seeded: the page, drawn from the same report, shows the same interval.
    let output = reloop(dir.path(), &["report", out.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<h2>Paired comparison</h2>") && html.contains(&format!("[{interval}]")) && html.contains("roku better at 95 %"),
        "{}",
        &html[..html.len().min(4000)]
    );
}
