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

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compare::{Comparison, mean_of};
use crate::runs::RunKey;

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
    /// Only runs whose scenario name or file matches this pattern (`*`
    /// matches any text), e.g. `long/*`.
    #[serde(default)]
    pub only: Option<String>,
    /// When true, the rule may judge no run at all (by default a rule that
    /// judged nothing fails: a gate must not pass on nothing).
    #[serde(default)]
    pub allow_empty: Option<bool>,
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
    }
}

/// What is wrong with a gate set as a whole: no rules, or a rule with no
/// check. Either would pass on nothing.
pub fn check_set(gates: &GateSet) -> Result<(), String> {
    if gates.is_empty() {
        return Err("the gate file has no rules: it would pass on nothing".to_owned());
    }
    match gates.iter().find(|(_, rule)| !rule.has_check()) {
        Some((metric, _)) => Err(format!("{metric}: the rule has no check (max_increase, max_increase_per_scenario, max_increase_abs, max_new, no_regressions, max or min)")),
        None => Ok(()),
    }
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
        if !self.offenders.is_empty() && self.offenders.len() <= 5 && self.scope == "all runs" {
            let names: Vec<String> = self.offenders.iter().map(ToString::to_string).collect();
            text.push_str(&format!(": {}", names.join(", ")));
        }
        text
    }
}

/// A gate names a metric neither report has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMetric(pub String);

/// Judges every rule of `gates` against `comparison`.
pub fn evaluate(gates: &GateSet, comparison: &Comparison) -> Result<Vec<GateResult>, UnknownMetric> {
    let mut results = Vec::new();
    for (metric, rule) in gates {
        if comparison.base.metric(metric).is_none() && comparison.new.metric(metric).is_none() {
            return Err(UnknownMetric(metric.clone()));
        }
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
                results.push(max_increase(comparison, metric, &group, "max_increase_per_scenario", limit));
            }
        }
    }
    Ok(results)
}

/// Runs judged together: matched (base rows, new rows) and added new rows.
struct Group<'a> {
    scope: String,
    pairs: Vec<(&'a RunKey, &'a [usize], &'a [usize])>,
    added: Vec<(&'a RunKey, &'a [usize])>,
}

fn groups<'a>(comparison: &'a Comparison, rule: &Rule) -> Vec<Group<'a>> {
    let selected = |key: &RunKey, rows: &[usize]| {
        rule.only.as_deref().is_none_or(|pattern| {
            glob_match(pattern, &key.scenario) || rows.first().is_some_and(|&row| glob_match(pattern, &comparison.new.scenario_file[row]))
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
    let pairs: Vec<(&RunKey, f64, f64)> = group
        .pairs
        .iter()
        .map(|(key, base, new)| (*key, mean_of(base_metric, base).unwrap_or(0.0), mean_of(new_metric, new).unwrap_or(0.0)))
        .collect();
    let added: Vec<(&RunKey, f64)> = group.added.iter().map(|(key, rows)| (*key, mean_of(new_metric, rows).unwrap_or(0.0))).collect();
    let base_sum: f64 = pairs.iter().map(|p| p.1).sum();
    let new_sum: f64 = pairs.iter().map(|p| p.2).sum();
    let movers = |worse: fn(f64, f64) -> bool| -> Vec<RunKey> {
        let mut keys: Vec<(&RunKey, f64)> = pairs.iter().filter(|p| worse(p.1, p.2)).map(|p| (p.0, (p.2 - p.1).abs())).collect();
        keys.sort_by(|a, b| b.1.total_cmp(&a.1));
        keys.into_iter().map(|(k, _)| k.clone()).collect()
    };
    let result = |check: String, base: Option<f64>, new: f64, limit: f64, held: bool, offenders: Vec<RunKey>| GateResult {
        metric: metric.to_owned(),
        check,
        scope: group.scope.clone(),
        base,
        new,
        limit,
        held,
        file: offenders.first().and_then(|key| file_of(comparison, key)),
        offenders: if held { Vec::new() } else { offenders },
    };
    let mut results = Vec::new();
    if let Some(Fraction(limit)) = rule.max_increase {
        results.push(max_increase(comparison, metric, group, "max_increase", limit));
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
        over.sort_by(|a, b| b.1.total_cmp(&a.1));
        let worst = all_new().map(|v| v.1).fold(f64::NEG_INFINITY, f64::max).max(f64::MIN);
        let check = format!("max {}", crate::figures::number(limit));
        results.push(result(check, None, worst, limit, over.is_empty(), over.into_iter().map(|v| v.0.clone()).collect()));
    }
    if let Some(limit) = rule.min {
        let mut under: Vec<(&RunKey, f64)> = all_new().filter(|v| v.1 < limit).collect();
        under.sort_by(|a, b| a.1.total_cmp(&b.1));
        let worst = all_new().map(|v| v.1).fold(f64::INFINITY, f64::min).min(f64::MAX);
        let check = format!("min {}", crate::figures::number(limit));
        results.push(result(check, None, worst, limit, under.is_empty(), under.into_iter().map(|v| v.0.clone()).collect()));
    }
    results
}

/// The sums of `metric` over `group`'s matched runs may grow at most `limit`.
fn max_increase(comparison: &Comparison, metric: &str, group: &Group<'_>, name: &str, limit: f64) -> GateResult {
    let (base_metric, new_metric) = (comparison.base.metric(metric), comparison.new.metric(metric));
    let pairs: Vec<(&RunKey, f64, f64)> = group
        .pairs
        .iter()
        .map(|(key, base, new)| (*key, mean_of(base_metric, base).unwrap_or(0.0), mean_of(new_metric, new).unwrap_or(0.0)))
        .collect();
    let (base_sum, new_sum): (f64, f64) = (pairs.iter().map(|p| p.1).sum(), pairs.iter().map(|p| p.2).sum());
    let held = if base_sum == 0.0 { new_sum <= 0.0 } else { (new_sum - base_sum) / base_sum.abs() <= limit + 1e-12 };
    let mut movers: Vec<(&RunKey, f64)> = pairs.iter().filter(|p| p.2 > p.1).map(|p| (p.0, p.2 - p.1)).collect();
    movers.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let offenders: Vec<RunKey> = if held { Vec::new() } else { movers.into_iter().map(|(k, _)| k.clone()).collect() };
    GateResult {
        metric: metric.to_owned(),
        check: format!("{name} {}%", crate::figures::number(limit * 100.0)),
        scope: group.scope.clone(),
        base: Some(base_sum),
        new: new_sum,
        limit,
        held,
        file: offenders.first().and_then(|key| file_of(comparison, key)),
        offenders,
    }
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
    }
}

fn file_of(comparison: &Comparison, key: &RunKey) -> Option<String> {
    let row = comparison.new.scenario.iter().zip(&comparison.new.variant).position(|(s, v)| *s == key.scenario && *v == key.variant)?;
    Some(comparison.new.scenario_file[row].clone()).filter(|f| !f.is_empty())
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
        let table = || runs(&[("a", "default", &[("passed", 1.0), ("doom_loop_detected", 0.0), ("input_tokens_total", 100.0), ("output_tokens_total", 5.0), ("estimated_cost_usd", 0.01)])]);
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
            let values: &'static [(&'static str, f64)] =
                Box::leak(vec![("passed", 1.0), ("doom_loop_detected", 0.0), ("input_tokens_total", tokens), ("output_tokens_total", 10.0), ("estimated_cost_usd", 0.01)].into_boxed_slice());
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
        assert_eq!(evaluate(&gates("nope: { max: 1 }"), &compare(table(), table())), Err(UnknownMetric("nope".into())));
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
