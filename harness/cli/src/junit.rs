//! JUnit XML for CI dashboards: one test suite, one test case per run,
//! failed expectations as the failure text. A peer of the table and the
//! Parquet writers, fed the same finished runs. Times are wall time, as
//! JUnit readers expect; the simulated time a user would have waited is a
//! property (`virtual_seconds`). Apart from `time`, the document depends
//! only on the runs, never on the order they finished in.
//!
//! Repeated runs (`--repeat N`) are one test case per scenario × variant,
//! marked the way Maven Surefire marks a test it re-ran
//! (`rerunFailingTestsCount`), which Jenkins and the JUnit readers built on
//! Surefire's schema display as flaky: a case that passed with failed
//! trials holds a `<flakyFailure>` per failed trial (readers that know
//! nothing of it still see a pass), a case that failed holds its
//! `<failure>` (the verdict) and a `<rerunFailure>` per failed trial. The
//! properties `trials`, `passed_trials` and `flaky` say the same to readers
//! of properties (GitLab shows them).

use std::fmt::Write as _;
use std::time::Duration;

use reloop_eval::RunSummary;
use reloop_report::gates::GateResult;
use reloop_report::trials::{HARNESS_OUTCOMES, TrialVerdict};

/// The JUnit document for `runs`, which took `wall` together, with a second
/// suite for the gate checks of a comparison when there are any; repeated
/// runs are judged by their `verdicts` (see the module's note).
pub fn render(runs: &[RunSummary], verdicts: &[TrialVerdict], gates: &[GateResult], wall: Duration) -> String {
    let seconds = |ms: u64| ms as f64 / 1000.0;
    if verdicts.iter().any(|v| v.trials > 1) {
        return render_trials(runs, verdicts, gates, wall);
    }
    let run_failures = runs.iter().filter(|r| !r.passed).count();
    let gate_failures = gates.iter().filter(|g| !g.held).count();
    let virtual_ms: u64 = runs.iter().map(|r| r.figures.virtual_ms).sum();
    let wall = wall.as_secs_f64();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ =
        writeln!(xml, "<testsuites name=\"reloop\" tests=\"{}\" failures=\"{}\" time=\"{wall:.3}\">", runs.len() + gates.len(), run_failures + gate_failures,);
    if !runs.is_empty() || gates.is_empty() {
        let _ = writeln!(xml, "  <testsuite name=\"reloop\" tests=\"{}\" failures=\"{run_failures}\" time=\"{wall:.3}\">", runs.len());
        property(&mut xml, "    ", virtual_ms);
        for run in runs {
            let _ = writeln!(
                xml,
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" time=\"{:.3}\">",
                escape(&run.scenario),
                escape(&run.variant),
                escape(&run.scenario_file),
                seconds(run.figures.wall_ms)
            );
            property(&mut xml, "      ", run.figures.virtual_ms);
            if run.outcome == reloop_agent::Outcome::Skipped {
                xml.push_str("      <skipped message=\"agent not installed (docs/black-box.md)\"/>\n    </testcase>\n");
                continue;
            }
            let failure = (!run.passed).then(|| (run_reason(run), run.texts().failed_expectations.join("\n")));
            close_open_case(&mut xml, failure);
        }
        xml.push_str("  </testsuite>\n");
    }
    gates_suite(&mut xml, gates);
    xml.push_str("</testsuites>\n");
    xml
}

/// The document of repeated runs: one case per verdict.
fn render_trials(runs: &[RunSummary], verdicts: &[TrialVerdict], gates: &[GateResult], wall: Duration) -> String {
    let failures = verdicts.iter().filter(|v| !v.holds()).count();
    let gate_failures = gates.iter().filter(|g| !g.held).count();
    let wall = wall.as_secs_f64();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ =
        writeln!(xml, "<testsuites name=\"reloop\" tests=\"{}\" failures=\"{}\" time=\"{wall:.3}\">", verdicts.len() + gates.len(), failures + gate_failures);
    let _ = writeln!(xml, "  <testsuite name=\"reloop\" tests=\"{}\" failures=\"{failures}\" time=\"{wall:.3}\">", verdicts.len());
    property(&mut xml, "    ", runs.iter().map(|r| r.figures.virtual_ms).sum());
    let by_key = crate::verdicts::trials_by_key(runs);
    for verdict in verdicts {
        let trials: &[&RunSummary] = by_key.get(&(verdict.key.scenario.as_str(), verdict.key.variant.as_str())).map_or(&[], Vec::as_slice);
        let wall_ms: u64 = trials.iter().map(|r| r.figures.wall_ms).sum();
        let _ = writeln!(
            xml,
            "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" time=\"{:.3}\">",
            escape(&verdict.key.scenario),
            escape(&verdict.key.variant),
            escape(&verdict.file),
            wall_ms as f64 / 1000.0
        );
        let virtual_seconds = trials.iter().map(|r| r.figures.virtual_ms).sum::<u64>() as f64 / 1000.0;
        let _ = writeln!(
            xml,
            "      <properties><property name=\"virtual_seconds\" value=\"{virtual_seconds:.3}\"/><property name=\"trials\" value=\"{}\"/><property name=\"passed_trials\" value=\"{}\"/><property name=\"flaky\" value=\"{}\"/></properties>",
            verdict.counted,
            verdict.passed,
            verdict.flaky()
        );
        let failed: Vec<&&RunSummary> = trials.iter().filter(|r| !r.passed && !HARNESS_OUTCOMES.contains(&r.outcome.as_str())).collect();
        let trial_failure = |tag: &str, run: &RunSummary| {
            format!(
                "      <{tag} message=\"trial {}: {}\">{}</{tag}>\n",
                run.trial,
                escape(&run_reason(run)),
                escape(&run.texts().failed_expectations.join("\n"))
            )
        };
        if verdict.counted == 0 && verdict.harness > 0 {
            xml.push_str("      <skipped message=\"every trial left out: harness (agent not installed, harness error)\"/>\n");
        } else if verdict.holds() {
            failed.iter().for_each(|run| xml.push_str(&trial_failure("flakyFailure", run)));
        } else {
            let flaky = if verdict.flaky() { "flaky: " } else { "" };
            let message = format!("{flaky}{}, needs {}", verdict.passed_label(), verdict.rule());
            let text: Vec<String> = verdict.failures.iter().map(|(failure, count)| format!("{failure} (in {count} trials)")).collect();
            let _ = writeln!(xml, "      <failure message=\"{}\">{}</failure>", escape(&message), escape(&text.join("\n")));
            failed.iter().for_each(|run| xml.push_str(&trial_failure("rerunFailure", run)));
        }
        xml.push_str("    </testcase>\n");
    }
    xml.push_str("  </testsuite>\n");
    gates_suite(&mut xml, gates);
    xml.push_str("</testsuites>\n");
    xml
}

/// The suite of a comparison's gate checks, when there are any.
fn gates_suite(xml: &mut String, gates: &[GateResult]) {
    let gate_failures = gates.iter().filter(|g| !g.held).count();
    if !gates.is_empty() {
        let _ = writeln!(xml, "  <testsuite name=\"reloop gates\" tests=\"{}\" failures=\"{gate_failures}\" time=\"0.000\">", gates.len());
        for gate in gates {
            let name = format!("{} {} ({})", gate.metric, gate.check, gate.scope);
            let _ = write!(xml, "    <testcase name=\"{}\" classname=\"gates\"", escape(&name));
            if let Some(file) = &gate.file {
                let _ = write!(xml, " file=\"{}\"", escape(file));
            }
            match (!gate.held).then(|| (gate.reason(), gate.describe())) {
                None => xml.push_str("/>\n"),
                Some(failure) => {
                    xml.push_str(">\n");
                    close_open_case(xml, Some(failure));
                }
            }
        }
        xml.push_str("  </testsuite>\n");
    }
}

/// A failed run's message: its outcome and the first failed expectation.
fn run_reason(run: &RunSummary) -> String {
    match run.texts().failed_expectations.as_slice() {
        [] => format!("outcome {}", run.outcome),
        [only] => format!("outcome {}: {only}", run.outcome),
        [first, rest @ ..] => format!("outcome {}: {first} (and {} more)", run.outcome, rest.len()),
    }
}

/// `virtual_seconds`: the simulated time, as a property block.
fn property(xml: &mut String, indent: &str, virtual_ms: u64) {
    let _ = writeln!(xml, "{indent}<properties><property name=\"virtual_seconds\" value=\"{:.3}\"/></properties>", virtual_ms as f64 / 1000.0);
}

/// Ends a test case whose opening tag is closed, with its failure if any.
fn close_open_case(xml: &mut String, failure: Option<(String, String)>) {
    if let Some((message, text)) = failure {
        let _ = writeln!(xml, "      <failure message=\"{}\">{}</failure>", escape(&message), escape(&text));
    }
    xml.push_str("    </testcase>\n");
}

fn escape(text: &str) -> String {
    text.chars().fold(String::with_capacity(text.len()), |mut out, c| {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_control_characters() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
    }
}
