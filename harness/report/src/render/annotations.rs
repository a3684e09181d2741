//! GitHub Actions workflow commands (`::error file=…,line=…::…`), one per
//! failed gate, pointing at the scenario file of the run that broke it.

use std::path::Path;

use super::Verdict;

/// The annotation lines; `root` is where scenario file paths are relative to.
pub fn render(verdict: &Verdict<'_>, root: &Path) -> String {
    let mut out = String::new();
    for failure in verdict.failures() {
        let title = property(&format!("reloop gate {}", failure.metric));
        let message = data(&failure.describe());
        match &failure.file {
            Some(file) => {
                let line = scenario_line(&root.join(file));
                out.push_str(&format!("::error file={},line={line},title={title}::{message}\n", property(file)));
            }
            None => out.push_str(&format!("::error title={title}::{message}\n")),
        }
    }
    out
}

/// The annotations of a repeated run (`run --repeat N`): a warning on
/// each flaky scenario that passed on its minimum pass rate, an error on
/// each that failed, at its scenario file's `name:` line.
pub fn flaky(verdicts: &[crate::trials::TrialVerdict], root: &Path) -> String {
    let mut out = String::new();
    for verdict in verdicts.iter().filter(|v| v.flaky()) {
        let level = if verdict.holds() { "warning" } else { "error" };
        let title = property(&format!("reloop flaky {}", verdict.key));
        let message = data(&format!("{} is flaky: {} (needs {})", verdict.key, verdict.passed_label(), verdict.rule()));
        let line = scenario_line(&root.join(&verdict.file));
        out.push_str(&format!("::{level} file={},line={line},title={title}::{message}\n", property(&verdict.file)));
    }
    out
}

/// The line of the scenario's `name:` key (its first line without one).
fn scenario_line(file: &Path) -> usize {
    std::fs::read_to_string(file).ok().and_then(|text| text.lines().position(|line| line.starts_with("name:"))).map_or(1, |index| index + 1)
}

/// Escapes a message (the part after `::`): the one escaping of names for
/// GitHub Actions, and control characters shown, as in the job's log.
fn data(text: &str) -> String {
    crate::escape::line(text)
}

/// Escapes a property value (`file=`, `title=`).
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flaky_scenario_is_an_error_when_it_failed_and_a_warning_when_its_rate_passed_it_with_its_name_escaped() {
        use crate::trials::{Trial, TrialVerdict};
        let trial = |passed, min_pass_rate| Trial {
            scenario: "a,b\n::x",
            variant: "default",
            file: "s:1.yaml",
            outcome: "final_answer",
            passed,
            failures: &[],
            min_pass_rate,
        };
        let failed = TrialVerdict::of([trial(true, None), trial(false, None)]);
        assert_eq!(
            flaky(&failed, Path::new("/nowhere")),
            "::error file=s%3A1.yaml,line=1,title=reloop flaky a%2Cb%0A%3A%3Ax::a,b%0A:%3Ax is flaky: passed 1/2 (needs pass^2)\n"
        );
        let held = TrialVerdict::of([trial(true, Some(0.5)), trial(false, Some(0.5))]);
        assert!(flaky(&held, Path::new("/nowhere")).starts_with("::warning "));
        assert_eq!(flaky(&TrialVerdict::of([trial(true, None)]), Path::new(".")), "");
    }

    #[test]
    fn escapes_follow_the_workflow_command_rules() {
        assert_eq!(data("50%\nnext"), "50%25%0Anext");
        assert_eq!(property("a:b,c"), "a%3Ab%2Cc");
    }
}
