//! CI gates: rules on metrics (`gates.yaml`), each over all runs, per
//! scenario or per run, judged against a [`Comparison`]. A gate file maps a
//! metric (a `runs.parquet` column) to its rule:
//!
//! ```yaml
//! input_tokens_total: { max_increase: 5% }
//! doom_loop_detected: { max_new: 0 }
//! cache_breaks_simulated: { max_increase_abs: 1, per: run }
//! passed: { no_regressions: true }
//! step_budget_used_ratio: { max: 0.9, only: "long/*" }
//! ```
//!
//! Every example of `docs/gates.md` is judged by a test of the CLI.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use arrow_schema::Schema;

use crate::compare::{Comparison, mean_of};
use crate::gate_noise;
pub use crate::gate_result::GateResult;
use crate::gate_result::{Group, Verdict};
use crate::runs::{KEY_COLUMNS, RunKey, TIMING_COLUMNS};

/// The gates used when no file is given: no new failures, no new doom
/// loops, tokens and cost up at most 5 % over the suite and 15 % in any one
/// scenario, so a single scenario's regression is not diluted by the rest
/// (documented in the README and docs/metrics.md).
pub const DEFAULT_GATES: &str = "\
passed: { no_regressions: true }
doom_loop_detected: { max_new: 0 }
input_tokens_total: { max_increase: 5%, max_increase_per_scenario: 15% }
output_tokens_total: { max_increase: 5% }
estimated_cost_usd: { max_increase: 5%, max_increase_per_scenario: 15% }
";

/// A gate file: metric name → rule.
pub type GateSet = BTreeMap<String, Rule>;

/// What must hold for one metric. Every check is optional; several may be
/// combined.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Largest allowed relative increase of the sum, as `5%` or `0.05`.
    #[serde(default)]
    pub max_increase: Option<Fraction>,
    /// Largest allowed relative increase of any one scenario's sum (its
    /// variants together), as `20%` or `0.2`, whatever `per` says: a
    /// suite-wide limit alone lets one scenario's regression hide in the
    /// sum of the others.
    #[serde(default)]
    pub max_increase_per_scenario: Option<Fraction>,
    /// Largest allowed increase of the sum, in the metric's unit.
    #[serde(default)]
    pub max_increase_abs: Option<f64>,
    /// Most runs allowed to go from zero/false to non-zero/true (added runs
    /// count when non-zero).
    #[serde(default)]
    pub max_new: Option<u64>,
    /// When true, no run may go down (for `passed`: no new failures; added
    /// runs count when zero/false).
    #[serde(default)]
    pub no_regressions: Option<bool>,
    /// Highest allowed value of any run in the new report.
    #[serde(default)]
    pub max: Option<f64>,
    /// Lowest allowed value of any run in the new report.
    #[serde(default)]
    pub min: Option<f64>,
    /// Over what the rule is judged: `all` runs together (default), each
    /// `scenario` (its variants together), or each `run`.
    #[serde(default)]
    pub per: Per,
    /// Only runs whose scenario name, or scenario file, matches this
    /// pattern (`*` matches any text): `long-*`, `long/*`,
    /// `scenarios/long/*`. A file matches when its path or any trailing part
    /// of it from a directory on does (`./` parts dropped), so the pattern
    /// holds however the suite's path was typed (`scenarios/`,
    /// `./scenarios/`, absolute).
    #[serde(default)]
    pub only: Option<String>,
    /// When true, the rule may judge no run at all (by default a rule that
    /// judged nothing fails: a gate must not pass on nothing).
    #[serde(default)]
    pub allow_empty: Option<bool>,
    /// Lowest allowed pass rate of a flag (`passed`) over the new runs'
    /// trials, 0 to 1; over repeated runs it fails only when the rate's
    /// interval lies wholly below.
    #[serde(default)]
    pub min_pass_rate: Option<f64>,
    /// Largest allowed drop of a flag's pass rate from the base to the new
    /// report, as `10%` or `0.1`; over repeated runs it fails only when the
    /// drop's interval lies wholly past it.
    #[serde(default)]
    pub max_pass_rate_drop: Option<Fraction>,
    /// The level of the intervals the rule judges repeated runs on, as
    /// `95%` (the default) or `0.9`.
    #[serde(default)]
    pub confidence: Option<Fraction>,
}

impl Rule {
    /// Whether the rule has any check to make.
    pub fn has_check(&self) -> bool {
        self.max_increase.is_some()
            || self.max_increase_per_scenario.is_some()
            || self.max_increase_abs.is_some()
            || self.max_new.is_some()
            || self.no_regressions == Some(true)
            || self.max.is_some()
            || self.min.is_some()
            || self.min_pass_rate.is_some()
            || self.max_pass_rate_drop.is_some()
    }

    /// The level of the rule's intervals.
    pub fn confidence(&self) -> f64 {
        self.confidence.map_or(DEFAULT_CONFIDENCE, |Fraction(level)| level)
    }
}

/// The level of a gate's intervals unless its `confidence:` says otherwise.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// What is wrong with a gate set as a whole: no rules, or a rule with no
/// check. Either would pass on nothing.
pub fn check_set(gates: &GateSet) -> Result<(), String> {
    if gates.is_empty() {
        return Err("the gate file has no rules: it would pass on nothing".to_owned());
    }
    if let Some((metric, _)) = gates.iter().find(|(_, rule)| !rule.has_check()) {
        return Err(format!(
            "{metric}: the rule has no check (max_increase, max_increase_per_scenario, max_increase_abs, max_new, no_regressions, max, min, min_pass_rate or max_pass_rate_drop)"
        ));
    }
    for (metric, rule) in gates {
        if rule.confidence.is_some_and(|Fraction(level)| !(level > 0.0 && level < 1.0)) {
            return Err(format!("{metric}: confidence must be above 0 and below 1 (`95%` or `0.95`)"));
        }
        if rule.min_pass_rate.is_some_and(|rate| !(0.0..=1.0).contains(&rate)) {
            return Err(format!("{metric}: min_pass_rate is a rate from 0 to 1"));
        }
    }
    Ok(())
}

/// The unit a rule is judged over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    /// All selected runs together.
    #[default]
    All,
    /// Each scenario, its variants together.
    Scenario,
    /// Each scenario × variant.
    Run,
}

/// A ratio written as `5%` or `0.05`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fraction(pub f64);

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(f64),
            Text(String),
        }
        match Written::deserialize(deserializer)? {
            Written::Number(value) => Ok(Self(value)),
            Written::Text(text) => text
                .trim()
                .strip_suffix('%')
                .and_then(|number| number.trim().parse::<f64>().ok())
                .map(|percent| Self(percent / 100.0))
                .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not a percentage like `5%` or a number like `0.05`"))),
        }
    }
}

/// The schema of what [`Fraction`]'s parser accepts: a number, or a decimal
/// number followed by `%` (surrounding spaces allowed).
impl JsonSchema for Fraction {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Fraction".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A ratio: a percentage like `5%` or a number like `0.05`.",
            "anyOf": [
                { "type": "number" },
                { "type": "string", "pattern": r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*%\s*$" }
            ]
        })
    }
}

/// A gate whose metric is not a column the gates can judge: missing from
/// the runs table, a timing column, or not a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnProblem {
    /// The metric as the gate file names it.
    pub metric: String,
    /// What is wrong.
    pub problem: String,
}

/// Checks that every gate names a number (or flag) column of one of
/// `schemas`: the one check `compare` makes against both reports and
/// `validate` (and `run --baseline`, before the first run) against the
/// table `run` writes.
pub fn check_columns(gates: &GateSet, schemas: &[&Schema]) -> Result<(), ColumnProblem> {
    for metric in gates.keys() {
        let types: Vec<&arrow_schema::DataType> = schemas.iter().filter_map(|s| s.field_with_name(metric).ok()).map(|f| f.data_type()).collect();
        let problem = match types.first() {
            None => "no such column in runs.parquet (see docs/metrics.md)".to_owned(),
            Some(_) if TIMING_COLUMNS.contains(&metric.as_str()) => "measures the machine, not the loop: never compared".to_owned(),
            Some(_) if KEY_COLUMNS.contains(&metric.as_str()) => "numbers a run's trials: a key, not a metric".to_owned(),
            Some(_) if types.iter().any(|t| crate::table::numeric_type(t)) => continue,
            Some(other) => format!("is a column of {other}, not of numbers: gates judge numbers and flags"),
        };
        return Err(ColumnProblem { metric: metric.clone(), problem });
    }
    Ok(())
}

/// The check that no run of the base is missing from the new report: a
/// removed scenario is judged by no other gate. `compare` adds it unless
/// `--allow-removed`.
pub fn no_removed(comparison: &Comparison) -> GateResult {
    let removed = &comparison.removed;
    let file = removed.first().and_then(|key| {
        let base = &comparison.base;
        let row = base.scenario.iter().zip(&base.variant).position(|(s, v)| *s == key.scenario && *v == key.variant)?;
        Some(base.scenario_file[row].clone()).filter(|f| !f.is_empty())
    });
    GateResult {
        metric: "runs".to_owned(),
        check: "no_removed (--allow-removed to accept)".to_owned(),
        scope: "all runs".to_owned(),
        base: None,
        new: removed.len() as f64,
        limit: 0.0,
        held: removed.is_empty(),
        offenders: removed.clone(),
        file,
        interval: None,
    }
}

/// Judges every rule of `gates` against `comparison`, after
/// [`check_columns`] against both reports.
pub fn evaluate(gates: &GateSet, comparison: &Comparison) -> Result<Vec<GateResult>, ColumnProblem> {
    check_columns(gates, &[&comparison.base.schema, &comparison.new.schema])?;
    let mut results = Vec::new();
    for (metric, rule) in gates {
        let selected = groups(comparison, rule);
        if selected.iter().all(|g| g.pairs.is_empty() && g.added.is_empty()) && rule.allow_empty != Some(true) {
            results.push(judged_nothing(metric, rule));
            continue;
        }
        for group in &selected {
            results.extend(judge(comparison, metric, rule, group));
        }
        if let Some(Fraction(limit)) = rule.max_increase_per_scenario {
            let per_scenario = Rule { per: Per::Scenario, ..rule.clone() };
            for group in groups(comparison, &per_scenario) {
                results.push(max_increase(comparison, metric, &group, "max_increase_per_scenario", (limit, rule.confidence())));
            }
        }
    }
    Ok(results)
}

fn groups<'a>(comparison: &'a Comparison, rule: &Rule) -> Vec<Group<'a>> {
    let selected = |key: &RunKey, rows: &[usize]| {
        rule.only.as_deref().is_none_or(|pattern| {
            glob_match(pattern, &key.scenario) || rows.first().is_some_and(|&row| path_match(pattern, &comparison.new.scenario_file[row]))
        })
    };
    let scope_of = |key: &RunKey| match rule.per {
        Per::All => "all runs".to_owned(),
        Per::Scenario => key.scenario.clone(),
        Per::Run => key.to_string(),
    };
    let mut groups: Vec<Group<'a>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut group_for = |scope: String| -> usize {
        *index.entry(scope.clone()).or_insert_with(|| {
            groups.push(Group { scope, pairs: Vec::new(), added: Vec::new() });
            groups.len() - 1
        })
    };
    let pairs: Vec<(usize, &'a crate::compare::Pair)> =
        comparison.pairs.iter().filter(|p| selected(&p.key, &p.new_rows)).map(|p| (group_for(scope_of(&p.key)), p)).collect();
    let added: Vec<(usize, &'a (RunKey, Vec<usize>))> =
        comparison.added.iter().filter(|(k, r)| selected(k, r)).map(|a| (group_for(scope_of(&a.0)), a)).collect();
    for (group, pair) in pairs {
        groups[group].pairs.push((&pair.key, &pair.base_rows, &pair.new_rows));
    }
    for (group, (key, rows)) in added {
        groups[group].added.push((key, rows));
    }
    if groups.is_empty() && rule.per == Per::All {
        groups.push(Group { scope: "all runs".to_owned(), pairs: Vec::new(), added: Vec::new() });
    }
    groups
}

fn judge(comparison: &Comparison, metric: &str, rule: &Rule, group: &Group<'_>) -> Vec<GateResult> {
    let base_metric = comparison.base.metric(metric);
    let new_metric = comparison.new.metric(metric);
    // Per matched run: (key, base mean, new mean); per added run: (key, new mean).
    let pairs: Vec<(&RunKey, f64, f64)> =
        group.pairs.iter().map(|(key, base, new)| (*key, mean_of(base_metric, base).unwrap_or(0.0), mean_of(new_metric, new).unwrap_or(0.0))).collect();
    let added: Vec<(&RunKey, f64)> = group.added.iter().map(|(key, rows)| (*key, mean_of(new_metric, rows).unwrap_or(0.0))).collect();
    let base_sum: f64 = pairs.iter().map(|p| p.1).sum();
    let new_sum: f64 = pairs.iter().map(|p| p.2).sum();
    let movers = |worse: fn(f64, f64) -> bool| -> Vec<RunKey> {
        let mut keys: Vec<(&RunKey, f64)> = pairs.iter().filter(|p| worse(p.1, p.2)).map(|p| (p.0, (p.2 - p.1).abs())).collect();
        keys.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        keys.into_iter().map(|(k, _)| k.clone()).collect()
    };
    let result = |check: String, base: Option<f64>, new: f64, limit: f64, held: bool, offenders: Vec<RunKey>| {
        Verdict { check, base, new, limit, held, interval: None, offenders }.into_result(comparison, metric, group)
    };
    let mut results = Vec::new();
    if let Some(Fraction(limit)) = rule.max_increase {
        results.push(max_increase(comparison, metric, group, "max_increase", (limit, rule.confidence())));
    }
    if let Some(limit) = rule.min_pass_rate {
        results.push(gate_noise::min_pass_rate(comparison, metric, group, limit, rule.confidence()));
    }
    if let Some(Fraction(limit)) = rule.max_pass_rate_drop {
        results.push(gate_noise::max_pass_rate_drop(comparison, metric, group, limit, rule.confidence()));
    }
    if let Some(limit) = rule.max_increase_abs {
        let held = new_sum - base_sum <= limit + 1e-12;
        let check = format!("max_increase_abs {}", crate::figures::number(limit));
        results.push(result(check, Some(base_sum), new_sum, limit, held, movers(|b, n| n > b)));
    }
    if let Some(limit) = rule.max_new {
        let mut offenders = movers(|b, n| b == 0.0 && n != 0.0);
        offenders.extend(added.iter().filter(|a| a.1 != 0.0).map(|a| a.0.clone()));
        let count = offenders.len() as f64;
        let base_count = pairs.iter().filter(|p| p.1 != 0.0).count() as f64;
        results.push(result(format!("max_new {limit}"), Some(base_count), base_count + count, limit as f64, count <= limit as f64, offenders));
    }
    if rule.no_regressions == Some(true) {
        let mut offenders = movers(|b, n| n < b);
        offenders.extend(added.iter().filter(|a| a.1 == 0.0).map(|a| a.0.clone()));
        let count = offenders.len() as f64;
        results.push(result("no_regressions".to_owned(), None, count, 0.0, count == 0.0, offenders));
    }
    let all_new = || pairs.iter().map(|p| (p.0, p.2)).chain(added.iter().map(|a| (a.0, a.1)));
    if let Some(limit) = rule.max {
        let mut over: Vec<(&RunKey, f64)> = all_new().filter(|v| v.1 > limit).collect();
        over.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let worst = all_new().map(|v| v.1).fold(f64::NEG_INFINITY, f64::max).max(f64::MIN);
        let check = format!("max {}", crate::figures::number(limit));
        results.push(result(check, None, worst, limit, over.is_empty(), over.into_iter().map(|v| v.0.clone()).collect()));
    }
    if let Some(limit) = rule.min {
        let mut under: Vec<(&RunKey, f64)> = all_new().filter(|v| v.1 < limit).collect();
        under.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        let worst = all_new().map(|v| v.1).fold(f64::INFINITY, f64::min).min(f64::MAX);
        let check = format!("min {}", crate::figures::number(limit));
        results.push(result(check, None, worst, limit, under.is_empty(), under.into_iter().map(|v| v.0.clone()).collect()));
    }
    results
}

/// The sums of `metric` over `group`'s matched runs may grow at most
/// `limit`; over repeated runs, judged on the lower bound of the relative
/// change's interval at `confidence` ([`gate_noise::sum_difference`]).
fn max_increase(comparison: &Comparison, metric: &str, group: &Group<'_>, name: &str, (limit, confidence): (f64, f64)) -> GateResult {
    let (base_metric, new_metric) = (comparison.base.metric(metric), comparison.new.metric(metric));
    let pairs: Vec<(&RunKey, f64, f64)> =
        group.pairs.iter().map(|(key, base, new)| (*key, mean_of(base_metric, base).unwrap_or(0.0), mean_of(new_metric, new).unwrap_or(0.0))).collect();
    let (base_sum, new_sum): (f64, f64) = (pairs.iter().map(|p| p.1).sum(), pairs.iter().map(|p| p.2).sum());
    let interval = (base_sum != 0.0)
        .then(|| gate_noise::sum_difference(base_metric, new_metric, &group.pairs, confidence))
        .flatten()
        .map(|(low, high)| (low / base_sum.abs(), high / base_sum.abs()));
    let held = match interval {
        Some((low, _)) => low <= limit + 1e-12,
        None if base_sum == 0.0 => new_sum <= 0.0,
        None => (new_sum - base_sum) / base_sum.abs() <= limit + 1e-12,
    };
    let mut movers: Vec<(&RunKey, f64)> = pairs.iter().filter(|p| p.2 > p.1).map(|p| (p.0, p.2 - p.1)).collect();
    movers.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let offenders = movers.into_iter().map(|(k, _)| k.clone()).collect();
    let check = format!("{name} {}%", crate::figures::number(limit * 100.0));
    Verdict { check, base: Some(base_sum), new: new_sum, limit, held, interval, offenders }.into_result(comparison, metric, group)
}

/// The failure of a rule whose selection held no run on either side.
fn judged_nothing(metric: &str, rule: &Rule) -> GateResult {
    let scope = rule.only.as_deref().map_or_else(|| "all runs".to_owned(), |only| format!("only: {only}"));
    GateResult {
        metric: metric.to_owned(),
        check: "judged no run (allow_empty: true to accept)".to_owned(),
        scope,
        base: None,
        new: 0.0,
        limit: 0.0,
        held: false,
        offenders: Vec::new(),
        file: None,
        interval: None,
    }
}

/// Whether `pattern` matches the scenario file `path` or a trailing part of
/// it starting at a directory: `long/*` and `scenarios/long/*` both match
/// `/home/ci/repo/./scenarios/long/a.yaml`, so the suite's root is found
/// whatever way its path was typed. `.` parts of either are dropped.
fn path_match(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim_start_matches("./");
    let parts: Vec<&str> = path.split('/').filter(|part| *part != ".").collect();
    glob_match(pattern, path) || (0..parts.len()).any(|from| glob_match(pattern, &parts[from..].join("/")))
}

/// `*` matches any run of characters; everything else matches itself.
fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) || text.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::compare::tests::{Row, runs};

    fn gates(yaml: &str) -> GateSet {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn failed(results: &[GateResult]) -> Vec<String> {
        results.iter().filter(|r| !r.held).map(GateResult::describe).collect()
    }

    #[test]
    fn identical_reports_hold_every_default_gate() {
        let table = || {
            runs(&[(
                "a",
                "default",
                &[("passed", 1.0), ("doom_loop_detected", 0.0), ("input_tokens_total", 100.0), ("output_tokens_total", 5.0), ("estimated_cost_usd", 0.01)],
            )])
        };
        let results = evaluate(&gates(DEFAULT_GATES), &compare(table(), table())).unwrap();
        assert_eq!(results.len(), 7, "five suite-wide checks and two for the one scenario");
        assert!(failed(&results).is_empty(), "{:?}", failed(&results));
    }

    #[test]
    fn increases_new_flags_regressions_and_bounds_are_named_with_figures() {
        let base = runs(&[
            ("a", "default", &[("tok", 100.0), ("doom", 0.0), ("passed", 1.0), ("ratio", 0.5)]),
            ("b", "default", &[("tok", 100.0), ("doom", 0.0), ("passed", 1.0), ("ratio", 0.5)]),
        ]);
        let new = runs(&[
            ("a", "default", &[("tok", 120.0), ("doom", 1.0), ("passed", 0.0), ("ratio", 0.95)]),
            ("b", "default", &[("tok", 100.0), ("doom", 0.0), ("passed", 1.0), ("ratio", 0.5)]),
        ]);
        let set = gates("tok: { max_increase: 5% }\ndoom: { max_new: 0 }\npassed: { no_regressions: true }\nratio: { max: 0.9 }");
        let failures = failed(&evaluate(&set, &compare(base, new)).unwrap());
        assert_eq!(
            failures,
            vec![
                "doom max_new 0 (all runs): 0 → 1: a",
                "passed no_regressions (all runs): 1: a",
                "ratio max 0.9 (all runs): 0.95: a",
                "tok max_increase 5% (all runs): 200 → 220 (+10.0%): a",
            ]
        );
    }

    #[test]
    fn per_run_absolute_increase_and_only_select_runs() {
        let base = runs(&[("long-a", "default", &[("breaks", 1.0)]), ("short", "default", &[("breaks", 0.0)])]);
        let new = runs(&[("long-a", "default", &[("breaks", 2.0)]), ("short", "default", &[("breaks", 3.0)])]);
        let set = gates("breaks: { max_increase_abs: 1, per: run }");
        let results = evaluate(&set, &compare(base.clone(), new.clone())).unwrap();
        assert_eq!(failed(&results), vec!["breaks max_increase_abs 1 (short): 0 → 3"]);
        let only_long = gates("breaks: { max_increase_abs: 1, per: run, only: long-* }");
        assert!(failed(&evaluate(&only_long, &compare(base, new)).unwrap()).is_empty());
    }

    /// Issue 30: the 5 % suite-wide token gate passed a change that raised
    /// one long scenario's input tokens by 18.2 %.
    #[test]
    fn one_scenarios_regression_fails_the_default_gates_however_large_the_suite() {
        let row = |name: &'static str, tokens: f64| -> Row<'static> {
            let values: &'static [(&'static str, f64)] = Box::leak(
                vec![("passed", 1.0), ("doom_loop_detected", 0.0), ("input_tokens_total", tokens), ("output_tokens_total", 10.0), ("estimated_cost_usd", 0.01)]
                    .into_boxed_slice(),
            );
            (name, "default", values)
        };
        let base = runs(&[row("refactor-log-to-tracing", 100_000.0), row("other-a", 400_000.0), row("other-b", 500_000.0)]);
        let new = runs(&[row("refactor-log-to-tracing", 118_200.0), row("other-a", 400_000.0), row("other-b", 500_000.0)]);
        let failures = failed(&evaluate(&gates(DEFAULT_GATES), &compare(base, new)).unwrap());
        assert_eq!(failures, vec!["input_tokens_total max_increase_per_scenario 15% (refactor-log-to-tracing): 100000 → 118200 (+18.2%)"]);
    }

    #[test]
    fn a_gate_that_judged_nothing_fails_unless_allowed_and_an_empty_set_is_refused() {
        let table = || runs(&[("short", "default", &[("tok", 1.0)])]);
        let nothing = failed(&evaluate(&gates("tok: { max_increase: 5%, only: \"long-*\" }"), &compare(table(), table())).unwrap());
        assert_eq!(nothing, vec!["tok judged no run (allow_empty: true to accept) (only: long-*): 0"]);
        let allowed = gates("tok: { max_increase: 5%, only: \"long-*\", allow_empty: true }");
        assert!(failed(&evaluate(&allowed, &compare(table(), table())).unwrap()).is_empty());
        assert!(check_set(&gates("{}")).unwrap_err().contains("no rules"));
        assert!(check_set(&gates("passed: {}")).unwrap_err().starts_with("passed: the rule has no check"));
        assert_eq!(check_set(&gates(DEFAULT_GATES)), Ok(()));
    }

    #[test]
    fn a_gate_on_a_missing_column_is_bad_input() {
        let table = || runs(&[("a", "default", &[("x", 1.0)])]);
        let problem = evaluate(&gates("nope: { max: 1 }"), &compare(table(), table())).unwrap_err();
        assert_eq!((problem.metric.as_str(), problem.problem.as_str()), ("nope", "no such column in runs.parquet (see docs/metrics.md)"));
    }

    /// Issue 30: `validate` accepted a gate `compare` refused, and a column
    /// that exists but is not a number was called "no such column".
    #[test]
    fn columns_that_are_not_numbers_are_named_as_such() {
        let table = runs(&[("a", "default", &[("x", 1.0)])]);
        let problem = check_columns(&gates("outcome: { max: 1 }"), &[&table.schema]).unwrap_err();
        assert_eq!(problem.problem, "is a column of Utf8, not of numbers: gates judge numbers and flags");
        assert_eq!(check_columns(&gates("x: { max: 1 }"), &[&table.schema]), Ok(()));
        let timing = arrow_schema::Schema::new(vec![arrow_schema::Field::new("wall_ms", arrow_schema::DataType::UInt64, false)]);
        assert!(check_columns(&gates("wall_ms: { max: 1 }"), &[&timing]).unwrap_err().problem.contains("never compared"));
        let trial = arrow_schema::Schema::new(vec![arrow_schema::Field::new("trial", arrow_schema::DataType::Int64, false)]);
        assert!(check_columns(&gates("trial: { max: 1 }"), &[&trial]).unwrap_err().problem.contains("a key, not a metric"));
    }

    /// Issue 30: `only:` was matched against `scenario_file` as typed, so
    /// `long/*` matched nothing and `./scenarios/` broke `scenarios/long/*`.
    #[test]
    fn only_matches_the_name_or_the_path_from_the_suite_root_however_it_was_typed() {
        for file in [
            "scenarios/long/refactor.yaml",
            "./scenarios/long/refactor.yaml",
            "/home/ci/repo/scenarios/long/refactor.yaml",
            "/home/ci/repo/./scenarios/long/refactor.yaml",
        ] {
            for pattern in ["long/*", "scenarios/long/*", "./scenarios/long/*", "*/long/refactor.yaml"] {
                assert!(path_match(pattern, file), "{pattern} on {file}");
            }
            assert!(!path_match("short/*", file) && !path_match("cenarios/long/*", file), "{file}");
        }
    }

    /// Issue 30: with many offenders the gate line read "26 → 53" with no
    /// names; the first ten are named, worst first, then a count.
    #[test]
    fn a_failed_gate_names_its_first_ten_offenders_worst_first_then_counts_the_rest() {
        let names: Vec<String> = (0..13).map(|i| format!("s{i:02}")).collect();
        let rows = |grow: bool| -> Vec<Row<'_>> {
            names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let value = if grow { 100.0 + i as f64 } else { 100.0 };
                    (name.as_str(), "default", &*Box::leak(vec![("tok", value)].into_boxed_slice()))
                })
                .collect()
        };
        let comparison = compare(runs(&rows(false)), runs(&rows(true)));
        let results = evaluate(&gates("tok: { max_increase: 1% }"), &comparison).unwrap();
        assert_eq!(results[0].describe(), "tok max_increase 1% (all runs): 1300 → 1378 (+6.0%): s12, s11, s10, s09, s08, s07, s06, s05, s04, s03 and 2 more");
        assert_eq!(results[0].reason(), "tok +6.0 % > 1 % in s12, s11, s10, s09, s08, s07, s06, s05, s04, s03 and 2 more");
        assert_eq!(results[0].file.as_deref(), Some("scenarios/s12.yaml"));
    }

    /// Issue 30: removed scenarios were never gated.
    #[test]
    fn removed_runs_fail_their_check_and_held_gates_point_at_no_file() {
        let base = runs(&[("a", "default", &[("tok", 1.0)]), ("gone", "default", &[("tok", 1.0)])]);
        let new = runs(&[("a", "default", &[("tok", 2.0)])]);
        let comparison = compare(base, new);
        let removed = no_removed(&comparison);
        assert_eq!((removed.held, removed.describe()), (false, "runs no_removed (--allow-removed to accept) (all runs): 1: gone".to_owned()));
        assert_eq!(removed.file.as_deref(), Some("scenarios/gone.yaml"));
        let held = evaluate(&gates("tok: { max_increase: 200% }"), &comparison).unwrap();
        assert!(held[0].held && held[0].file.is_none(), "{held:?}");
    }

    #[test]
    fn reasons_say_what_broke_where() {
        let result = |check: &str, scope: &str, base: Option<f64>, new: f64, limit: f64| GateResult {
            metric: "m".into(),
            check: check.into(),
            scope: scope.into(),
            base,
            new,
            limit,
            held: false,
            offenders: Vec::new(),
            file: None,
            interval: None,
        };
        assert_eq!(result("max_increase_per_scenario 5%", "refactor", Some(100.0), 118.2, 0.05).reason(), "m +18.2 % > 5 % in refactor");
        assert_eq!(result("max_new 0", "all runs", Some(1.0), 3.0, 0.0).reason(), "m 2 new > 0 in all runs");
        assert_eq!(result("max 0.9", "all runs", None, 0.95, 0.9).reason(), "m 0.95 > 0.9 in all runs");
    }

    #[test]
    fn fractions_read_as_percent_or_number() {
        let rule: Rule = serde_json::from_str(r#"{ "max_increase": "7.5%" }"#).unwrap();
        assert_eq!(rule.max_increase, Some(Fraction(0.075)));
        let rule: Rule = serde_json::from_str(r#"{ "max_increase": 0.1 }"#).unwrap();
        assert_eq!(rule.max_increase, Some(Fraction(0.1)));
        assert!(serde_json::from_str::<Rule>(r#"{ "max_increase": "lots" }"#).is_err());
    }

    #[test]
    fn globs() {
        assert!(glob_match("long/*", "long/refactor"));
        assert!(glob_match("*refactor*", "scenarios/long/refactor.yaml"));
        assert!(!glob_match("long/*", "short"));
        assert!(glob_match("exact", "exact"));
    }
}
