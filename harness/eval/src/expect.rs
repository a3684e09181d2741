//! Checking a run against its scenario's expectations. Each failed check
//! becomes one readable sentence in `failed_expectations`.

use reloop_agent::{DoomLoopKind, Outcome};

use crate::scenario::{Bounds, Expectations};

/// The facts expectations are judged on.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFacts<'a> {
    /// How the run ended.
    pub outcome: Outcome,
    /// Main-loop decisions used.
    pub steps_used: u64,
    /// The final answer, if any.
    pub final_answer: Option<&'a str>,
    /// Real tool calls executed, in order.
    pub tool_calls: Vec<&'a str>,
    /// Whether a doom loop was detected.
    pub doom_loop_detected: bool,
    /// The detectors that fired.
    pub doom_loop_kinds: Vec<DoomLoopKind>,
    /// Cache breaks the loop detected.
    pub cache_breaks: u64,
    /// Retried model calls.
    pub llm_retries: u64,
    /// Prompt tokens the provider's cache served, summed over the run.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache, summed over the run.
    pub cache_write_tokens: u64,
    /// A black-box agent's exit code (`None` for the built-in loop, or
    /// when it was killed).
    pub exit_code: Option<i32>,
}

/// The failed expectations; empty when all held.
pub fn check(expect: &Expectations, facts: &RunFacts<'_>) -> Vec<String> {
    let mut failures = Vec::new();
    if let Some(outcome) = expect.outcome.filter(|o| *o != facts.outcome) {
        failures.push(format!("outcome: expected {outcome}, got {}", facts.outcome));
    } else if expect.outcome.is_none() && facts.outcome == Outcome::Divergence {
        // A run the recording could not answer says nothing about the loop:
        // it passes only where its scenario expects the divergence.
        failures.push("outcome: divergence (the recording could not answer a request), and the scenario does not expect it".to_owned());
    }
    if let Some(failure) = expect.steps.and_then(|b| bounds("steps", b, facts.steps_used)) {
        failures.push(failure);
    }
    for needle in &expect.final_answer_contains {
        match facts.final_answer {
            Some(answer) if answer.contains(needle.as_str()) => {}
            Some(answer) => failures.push(format!("final_answer_contains: {needle:?} not in {:?}", preview(answer))),
            None => failures.push(format!("final_answer_contains: {needle:?} expected, but there is no final answer")),
        }
    }
    if let Some(expected) = &expect.tool_calls
        && expected.iter().map(String::as_str).ne(facts.tool_calls.iter().copied())
    {
        failures.push(format!("tool_calls: expected [{}], got [{}]", expected.join(", "), facts.tool_calls.join(", ")));
    }
    if let Some(doom) = expect.doom_loop.filter(|d| d.detected != facts.doom_loop_detected) {
        let verb = if doom.detected { "expected a doom loop, none was detected" } else { "expected no doom loop, one was detected" };
        failures.push(format!("doom_loop: {verb}"));
    }
    if let Some(kind) = expect.doom_loop.and_then(|d| d.kind).filter(|kind| !facts.doom_loop_kinds.contains(kind)) {
        let fired: Vec<&str> = facts.doom_loop_kinds.iter().map(|k| k.as_str()).collect();
        failures.push(format!("doom_loop: expected the {} detector to fire, fired: [{}]", kind.as_str(), fired.join(", ")));
    }
    if let Some(failure) = expect.cache_breaks.and_then(|b| bounds("cache_breaks", b, facts.cache_breaks)) {
        failures.push(failure);
    }
    if let Some(failure) = expect.llm_retries.and_then(|b| bounds("llm_retries", b, facts.llm_retries)) {
        failures.push(failure);
    }
    if let Some(failure) = expect.cache_read_tokens.and_then(|b| bounds("cache_read_tokens", b, facts.cache_read_tokens)) {
        failures.push(failure);
    }
    if let Some(failure) = expect.cache_write_tokens.and_then(|b| bounds("cache_write_tokens", b, facts.cache_write_tokens)) {
        failures.push(failure);
    }
    if let Some(expected) = expect.exit_code.filter(|code| Some(*code) != facts.exit_code) {
        let got = facts.exit_code.map_or("none".to_owned(), |code| code.to_string());
        failures.push(format!("exit_code: expected {expected}, got {got}"));
    }
    failures
}

fn bounds(name: &str, bounds: Bounds, actual: u64) -> Option<String> {
    if let Some(max) = bounds.max.filter(|max| actual > *max) {
        return Some(format!("{name}: expected at most {max}, got {actual}"));
    }
    if let Some(min) = bounds.min.filter(|min| actual < *min) {
        return Some(format!("{name}: expected at least {min}, got {actual}"));
    }
    None
}

fn preview(text: &str) -> String {
    const LIMIT: usize = 80;
    if text.chars().count() <= LIMIT { text.to_owned() } else { format!("{}…", text.chars().take(LIMIT).collect::<String>()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::DoomLoopExpectation;

    fn facts() -> RunFacts<'static> {
        RunFacts {
            outcome: Outcome::FinalAnswer,
            steps_used: 4,
            final_answer: Some("fixed: v.len()"),
            tool_calls: vec!["read_file", "edit_file"],
            doom_loop_detected: false,
            doom_loop_kinds: Vec::new(),
            cache_breaks: 0,
            llm_retries: 1,
            cache_read_tokens: 3_000,
            cache_write_tokens: 1_500,
            exit_code: Some(0),
        }
    }

    fn all_holding() -> Expectations {
        Expectations {
            outcome: Some(Outcome::FinalAnswer),
            steps: Some(Bounds { min: Some(1), max: Some(4) }),
            final_answer_contains: vec!["v.len()".into()],
            tool_calls: Some(vec!["read_file".into(), "edit_file".into()]),
            doom_loop: Some(DoomLoopExpectation { detected: false, kind: None, onset_step: None }),
            cache_breaks: Some(Bounds { min: None, max: Some(0) }),
            llm_retries: Some(Bounds { min: Some(1), max: Some(1) }),
            cache_read_tokens: Some(Bounds { min: Some(1_000), max: None }),
            cache_write_tokens: Some(Bounds { min: Some(1_024), max: Some(2_000) }),
            exit_code: Some(0),
            min_pass_rate: None,
        }
    }

    /// Issue 30: a vcr skeleton with no `expect:` diverged and passed.
    #[test]
    fn a_divergence_fails_unless_the_scenario_expects_it() {
        let diverged = RunFacts { outcome: Outcome::Divergence, ..facts() };
        let failures = check(&Expectations::default(), &diverged);
        assert_eq!(failures.len(), 1);
        assert!(failures[0].starts_with("outcome: divergence"), "{failures:?}");
        let expected = Expectations { outcome: Some(Outcome::Divergence), ..Expectations::default() };
        assert_eq!(check(&expected, &diverged), Vec::<String>::new());
    }

    #[test]
    fn all_expectations_hold() {
        assert_eq!(check(&all_holding(), &facts()), Vec::<String>::new());
    }

    #[test]
    fn each_expectation_kind_can_fail() {
        let base = facts();
        let cases: Vec<(RunFacts<'static>, &str)> = vec![
            (RunFacts { outcome: Outcome::Fail, ..base.clone() }, "outcome: expected final_answer, got fail"),
            (RunFacts { steps_used: 5, ..base.clone() }, "steps: expected at most 4, got 5"),
            (RunFacts { steps_used: 0, ..base.clone() }, "steps: expected at least 1, got 0"),
            (RunFacts { final_answer: Some("nope"), ..base.clone() }, "final_answer_contains: \"v.len()\" not in \"nope\""),
            (RunFacts { final_answer: None, ..base.clone() }, "final_answer_contains: \"v.len()\" expected, but there is no final answer"),
            (RunFacts { tool_calls: vec!["read_file"], ..base.clone() }, "tool_calls: expected [read_file, edit_file], got [read_file]"),
            (RunFacts { doom_loop_detected: true, ..base.clone() }, "doom_loop: expected no doom loop, one was detected"),
            (RunFacts { cache_breaks: 1, ..base.clone() }, "cache_breaks: expected at most 0, got 1"),
            (RunFacts { llm_retries: 0, ..base.clone() }, "llm_retries: expected at least 1, got 0"),
            (RunFacts { cache_read_tokens: 0, ..base.clone() }, "cache_read_tokens: expected at least 1000, got 0"),
            (RunFacts { cache_write_tokens: 2_001, ..base.clone() }, "cache_write_tokens: expected at most 2000, got 2001"),
            (RunFacts { exit_code: Some(3), ..base.clone() }, "exit_code: expected 0, got 3"),
            (RunFacts { exit_code: None, ..base.clone() }, "exit_code: expected 0, got none"),
        ];
        for (facts, message) in cases {
            assert_eq!(check(&all_holding(), &facts), vec![message.to_owned()]);
        }
        let wants_loop = Expectations { doom_loop: Some(DoomLoopExpectation { detected: true, kind: None, onset_step: None }), ..Default::default() };
        assert_eq!(check(&wants_loop, &base), vec!["doom_loop: expected a doom loop, none was detected".to_owned()]);
    }

    #[test]
    fn a_labelled_kind_must_be_among_the_detectors_that_fired() {
        let label = DoomLoopExpectation { detected: true, kind: Some(DoomLoopKind::Cycle), onset_step: Some(1) };
        let expect = Expectations { doom_loop: Some(label), ..Default::default() };
        let facts = RunFacts {
            outcome: Outcome::FinalAnswer,
            steps_used: 3,
            final_answer: None,
            tool_calls: vec![],
            doom_loop_detected: true,
            doom_loop_kinds: vec![DoomLoopKind::IdenticalCalls],
            cache_breaks: 0,
            llm_retries: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            exit_code: None,
        };
        assert_eq!(check(&expect, &facts), vec!["doom_loop: expected the cycle detector to fire, fired: [identical_calls]".to_owned()]);
        let both = RunFacts { doom_loop_kinds: vec![DoomLoopKind::IdenticalCalls, DoomLoopKind::Cycle], ..facts };
        assert!(check(&expect, &both).is_empty());
    }
}
