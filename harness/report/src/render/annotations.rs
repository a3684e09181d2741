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
    fn escapes_follow_the_workflow_command_rules() {
        assert_eq!(data("50%\nnext"), "50%25%0Anext");
        assert_eq!(property("a:b,c"), "a%3Ab%2Cc");
    }
}
