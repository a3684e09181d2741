//! JUnit XML for CI dashboards: one test suite, one test case per run,
//! failed expectations as the failure text. A peer of the table and the
//! Parquet writers, fed the same finished runs.

use std::fmt::Write as _;

use reloop_eval::RunSummary;

/// The JUnit document for `runs`.
pub fn render(runs: &[RunSummary]) -> String {
    let failures = runs.iter().filter(|r| !r.passed).count();
    let seconds = |ms: u64| ms as f64 / 1000.0;
    let total_ms: u64 = runs.iter().map(|r| r.metrics.virtual_ms).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"reloop\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">",
        runs.len(),
        seconds(total_ms)
    );
    let _ = writeln!(xml, "  <testsuite name=\"reloop\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">", runs.len(), seconds(total_ms));
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
        if run.passed {
            xml.push_str("/>\n");
            continue;
        }
        let _ = writeln!(xml, ">\n      <failure message=\"outcome {}\">{}</failure>", run.outcome, escape(&run.failed_expectations.join("\n")));
        xml.push_str("    </testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
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
