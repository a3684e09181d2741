//! JUnit XML for CI dashboards: one test suite, one test case per run,
//! failed expectations as the failure text. A peer of the table and the
//! Parquet writers, fed the same finished runs.

use std::fmt::Write as _;

use reloop_eval::RunSummary;
use reloop_report::gates::GateResult;

/// The JUnit document for `runs`, with a second suite for the gate checks
/// of a comparison when there are any.
pub fn render(runs: &[RunSummary], gates: &[GateResult]) -> String {
    let seconds = |ms: u64| ms as f64 / 1000.0;
    let run_failures = runs.iter().filter(|r| !r.passed).count();
    let gate_failures = gates.iter().filter(|g| !g.held).count();
    let total_ms: u64 = runs.iter().map(|r| r.metrics.virtual_ms).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"reloop\" tests=\"{}\" failures=\"{}\" time=\"{:.3}\">",
        runs.len() + gates.len(),
        run_failures + gate_failures,
        seconds(total_ms)
    );
    if !runs.is_empty() || gates.is_empty() {
        let _ = writeln!(xml, "  <testsuite name=\"reloop\" tests=\"{}\" failures=\"{run_failures}\" time=\"{:.3}\">", runs.len(), seconds(total_ms));
        for run in runs {
            // `time` is the simulated time a user would have waited.
            let _ = write!(
                xml,
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" time=\"{:.3}\"",
                escape(&run.scenario),
                escape(&run.variant),
                escape(&run.scenario_file),
                seconds(run.metrics.virtual_ms)
            );
            if run.outcome == reloop_agent::Outcome::Skipped {
                xml.push_str(">\n      <skipped message=\"agent not installed (docs/black-box.md)\"/>\n    </testcase>\n");
                continue;
            }
            let failure = (!run.passed).then(|| (format!("outcome {}", run.outcome), run.failed_expectations.join("\n")));
            close_case(&mut xml, failure);
        }
        xml.push_str("  </testsuite>\n");
    }
    if !gates.is_empty() {
        let _ = writeln!(xml, "  <testsuite name=\"reloop gates\" tests=\"{}\" failures=\"{gate_failures}\" time=\"0.000\">", gates.len());
        for gate in gates {
            let name = format!("{} {} ({})", gate.metric, gate.check, gate.scope);
            let _ = write!(xml, "    <testcase name=\"{}\" classname=\"gates\"", escape(&name));
            if let Some(file) = &gate.file {
                let _ = write!(xml, " file=\"{}\"", escape(file));
            }
            close_case(&mut xml, (!gate.held).then(|| ("gate failed".to_owned(), gate.describe())));
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Ends a test case opened up to its attributes, with its failure if any.
fn close_case(xml: &mut String, failure: Option<(String, String)>) {
    match failure {
        None => xml.push_str("/>\n"),
        Some((message, text)) => {
            let _ = writeln!(xml, ">\n      <failure message=\"{}\">{}</failure>", escape(&message), escape(&text));
            xml.push_str("    </testcase>\n");
        }
    }
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
