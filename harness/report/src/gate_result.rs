//! What a gate found: one check's verdict over one group of runs, below
//! both the gates ([`crate::gates`]) and the interval checks over repeated
//! runs ([`crate::gate_noise`]), which build it alike.

use serde::Serialize;

use crate::compare::Comparison;
use crate::first_named::first_named;
use crate::runs::RunKey;

/// The verdict of one check over one group of runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateResult {
    /// The metric.
    pub metric: String,
    /// The check, as written (`max_increase 5%`).
    pub check: String,
    /// What it was judged over: `all runs`, a scenario, or a run.
    pub scope: String,
    /// The base figure the check looked at (sum, count), when it has one.
    pub base: Option<f64>,
    /// The new figure.
    pub new: f64,
    /// The limit.
    pub limit: f64,
    /// Whether it held.
    pub held: bool,
    /// The runs that broke it, worst first where that means something.
    pub offenders: Vec<RunKey>,
    /// The scenario file of the first offender, for annotations.
    pub file: Option<String>,
    /// Over repeated runs, the interval the check was judged on, in the
    /// unit of its figure (a relative change for `max_increase`, a rate or
    /// a drop of rates for the pass-rate checks); `None` without repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
}

impl GateResult {
    /// One line for people: `input_tokens_total max_increase 5% (all runs): 1000 → 1100 (+10.0%)`.
    pub fn describe(&self) -> String {
        let figures = match self.base {
            Some(base) => format!("{} → {}", crate::figures::number(base), crate::figures::number(self.new)),
            None => crate::figures::number(self.new),
        };
        let mut text = format!("{} {} ({}): {figures}", self.metric, self.check, self.scope);
        if let Some(relative) = self.base.and_then(|b| crate::stats::relative(b, self.new)).filter(|_| self.check.starts_with("max_increase")) {
            text.push_str(&format!(" ({:+.1}%)", relative * 100.0));
        }
        if let Some(interval) = self.interval_shown() {
            text.push_str(&format!(", interval {interval}"));
        }
        if let Some(names) = self.offenders_named() {
            text.push_str(&format!(": {names}"));
        }
        text
    }

    /// Why it failed, in one line for JUnit's `message`:
    /// `input_tokens_total +18.2 % > 5 % in refactor-log-to-tracing`.
    pub fn reason(&self) -> String {
        let number = crate::figures::number;
        let kind = self.check.split(' ').next().unwrap_or_default();
        let base = self.base.unwrap_or(0.0);
        let what = match kind {
            "max_increase" | "max_increase_per_scenario" => match crate::stats::relative(base, self.new) {
                Some(relative) => format!("{:+.1} % > {} %", relative * 100.0, number(self.limit * 100.0)),
                None => format!("{} → {} (from zero)", number(base), number(self.new)),
            },
            "max_increase_abs" => format!("{:+} > {}", number(self.new - base), number(self.limit)),
            "max_new" => format!("{} new > {}", number(self.new - base), number(self.limit)),
            "no_regressions" => format!("{} regressed", number(self.new)),
            "max" => format!("{} > {}", number(self.new), number(self.limit)),
            "min" | "min_pass_rate" => format!("{} < {}", number(self.new), number(self.limit)),
            "max_pass_rate_drop" => format!("{:+.1} % > {} %", (self.new - base) * 100.0, number(self.limit * 100.0)),
            _ => self.check.clone(),
        };
        let at = match self.offenders_named() {
            Some(names) if self.scope == "all runs" => names,
            Some(names) => format!("{} ({names})", self.scope),
            None => self.scope.clone(),
        };
        match self.interval_shown() {
            Some(interval) => format!("{} {what} (interval {interval}) in {at}", self.metric),
            None => format!("{} {what} in {at}", self.metric),
        }
    }

    /// The interval judged on, as its check reads: `[+2.0%, +18.0%]` for a
    /// relative change, `[0.26, 0.66]` for a rate.
    fn interval_shown(&self) -> Option<String> {
        let (low, high) = self.interval?;
        Some(if self.check.starts_with("max_increase") || self.check.starts_with("max_pass_rate_drop") {
            format!("[{:+.1}%, {:+.1}%]", low * 100.0, high * 100.0)
        } else {
            format!("[{low:.2}, {high:.2}]")
        })
    }

    /// The offenders, worst first: the first few then `and N more`; `None` when there are none, or the one offender is the
    /// scope itself.
    fn offenders_named(&self) -> Option<String> {
        if self.offenders.is_empty() || (self.offenders.len() == 1 && self.offenders[0].to_string() == self.scope) {
            return None;
        }
        Some(first_named(&self.offenders, ToString::to_string))
    }
}

/// Runs judged together: matched (base rows, new rows) and added new rows.
pub(crate) struct Group<'a> {
    pub(crate) scope: String,
    pub(crate) pairs: Vec<(&'a RunKey, &'a [usize], &'a [usize])>,
    pub(crate) added: Vec<(&'a RunKey, &'a [usize])>,
}

/// What one check found over one group, before it is a [`GateResult`].
pub(crate) struct Verdict {
    /// The check as printed (`max_increase 5%`).
    pub check: String,
    /// The base figure, when the check compares with one.
    pub base: Option<f64>,
    /// The new figure.
    pub new: f64,
    /// The limit.
    pub limit: f64,
    /// Whether it held.
    pub held: bool,
    /// The interval it was judged on, over repeated runs.
    pub interval: Option<(f64, f64)>,
    /// The runs that moved the wrong way, worst first.
    pub offenders: Vec<RunKey>,
}

impl Verdict {
    /// The result for `metric` over `group`. A held check names no
    /// offenders and points at no file (its movers broke nothing); a failed
    /// one points at its worst offender's scenario file.
    pub(crate) fn into_result(self, comparison: &Comparison, metric: &str, group: &Group<'_>) -> GateResult {
        let offenders = if self.held { Vec::new() } else { self.offenders };
        GateResult {
            metric: metric.to_owned(),
            check: self.check,
            scope: group.scope.clone(),
            base: self.base,
            new: self.new,
            limit: self.limit,
            held: self.held,
            file: offenders.first().and_then(|key| file_of(comparison, key)),
            offenders,
            interval: self.interval,
        }
    }
}

/// The scenario file of `key` in the new report.
fn file_of(comparison: &Comparison, key: &RunKey) -> Option<String> {
    let row = comparison.new.scenario.iter().zip(&comparison.new.variant).position(|(s, v)| *s == key.scenario && *v == key.variant)?;
    Some(comparison.new.scenario_file[row].clone()).filter(|f| !f.is_empty())
}
