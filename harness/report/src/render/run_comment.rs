//! The pull-request comment of a run without a baseline (`run --markdown
//! FILE` alone): the run's own verdicts, one line per scenario (failed and
//! flaky ones first) with its passed k/N, pass rate and interval, the flaky
//! scenarios named, and what failed. With a baseline the comment is the
//! comparison's ([`super::markdown`]).

use std::fmt::Write as _;

use crate::escape::{code_span, markdown_text};
use crate::first_named::first_named;
use crate::trials::{TrialVerdict, rate, rate_interval};

/// Scenarios listed in the table before a count of the rest.
const SCENARIOS_SHOWN: usize = 20;
/// Distinct failures listed per failed scenario.
const FAILURES_SHOWN: usize = 3;

/// The comment for `verdicts`, each scenario run `trials` times.
pub fn render(verdicts: &[TrialVerdict], trials: u64) -> String {
    let failed: Vec<&TrialVerdict> = verdicts.iter().filter(|v| !v.holds()).collect();
    let flaky: Vec<&TrialVerdict> = verdicts.iter().filter(|v| v.flaky()).collect();
    let mut out = String::new();
    let headline = match failed.len() {
        0 => format!("✅ PASS: all {} scenarios passed", verdicts.len()),
        n => format!("❌ FAIL: {n} of {} scenarios failed", verdicts.len()),
    };
    let _ = writeln!(out, "### reloop {headline}\n");
    if trials > 1 {
        let _ = writeln!(out, "Each scenario ran {trials} trials; it passes when every trial passes (pass^{trials}), unless a minimum pass rate allows fewer.");
    }
    if !flaky.is_empty() {
        let _ = writeln!(out, "\n**Flaky** (trials disagree): {}.", first_named(&flaky, |v| code_span(&v.key.to_string())));
    }
    let mut shown: Vec<&TrialVerdict> = verdicts.iter().collect();
    shown.sort_by_key(|v| (v.holds(), !v.flaky()));
    out.push_str("\n| scenario | passed | pass rate [95 % interval] | verdict | rule |\n|---|---|---|---|---|\n");
    for verdict in shown.iter().take(SCENARIOS_SHOWN) {
        let _ = writeln!(
            out,
            "| {} | {}/{} | {} {} | {} | {} |",
            code_span(&verdict.key.to_string()),
            verdict.passed,
            verdict.counted,
            rate(verdict.rate()),
            rate_interval(verdict.interval()),
            verdict.mark(),
            markdown_text(&verdict.rule())
        );
    }
    if verdicts.len() > SCENARIOS_SHOWN {
        let _ = writeln!(out, "\n… and {} more scenarios", verdicts.len() - SCENARIOS_SHOWN);
    }
    let harness: u64 = verdicts.iter().map(|v| v.harness).sum();
    if harness > 0 {
        let _ = writeln!(out, "\n{harness} trials failed for the harness's own reasons (agent not installed, harness error) and are left out of the rates.");
    }
    if !failed.is_empty() {
        out.push_str("\n**Failures**\n\n");
        for verdict in failed.iter().take(SCENARIOS_SHOWN) {
            let failures: Vec<String> =
                verdict.failures.iter().take(FAILURES_SHOWN).map(|(failure, count)| format!("{} ({count}×)", markdown_text(failure))).collect();
            let _ = writeln!(out, "- {}: {}", code_span(&verdict.key.to_string()), failures.join("; "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trials::Trial;

    #[test]
    fn a_run_comment_names_flaky_and_failed_scenarios_with_names_escaped() {
        let failures = ["outcome: expected final_answer, got agent_error".to_owned()];
        let trial = |scenario, passed| Trial {
            scenario,
            variant: "default",
            file: "f.yaml",
            outcome: if passed { "final_answer" } else { "agent_error" },
            passed,
            failures: if passed { &[] } else { &failures },
            min_pass_rate: None,
        };
        let verdicts = TrialVerdict::of([trial("steady", true), trial("steady", true), trial("a`|b", true), trial("a`|b", false)]);
        let md = render(&verdicts, 2);
        assert!(md.starts_with("### reloop ❌ FAIL: 1 of 2 scenarios failed\n"), "{md}");
        assert!(md.contains("**Flaky** (trials disagree): ``a`\\|b``."), "{md}");
        assert!(md.contains("| ``a`\\|b`` | 1/2 | 0.50 [0.09, 0.91] | flaky FAIL | pass^2 |\n| `steady` | 2/2 | 1.00 [0.34, 1.00] | ok | pass^2 |"), "{md}");
        assert!(md.contains("- ``a`\\|b``: outcome: expected final\\_answer, got agent\\_error (1×)"), "{md}");
    }
}
