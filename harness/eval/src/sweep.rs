//! Sweeps: the same scenarios under several compaction strategies (or tuned
//! variants of them), one dataset with a `variant` column, and the figures
//! that compare them.

use std::path::Path;

use reloop_agent::LoopSettings;
use reloop_agent::client::cache_breakpoints::CacheBreakpointSettings;
use reloop_agent::context::plugin::PluginCommand;
pub use reloop_agent::context::{StrategyName, StrategySpec, StrategyTuning};
use serde::Deserialize;

use std::collections::BTreeMap;

use reloop_agent::Outcome;

use crate::run_summary::RunSummary;
use crate::yaml::{self, InputError};

/// One variant: a strategy, optionally with tuned constants.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// The label written to the `variant` column.
    pub name: String,
    /// The strategy: a built-in's name, a plug-in's file (relative to the
    /// variants file) or a plug-in's command.
    pub strategy: StrategySpec,
    /// Tuned constants; absent keeps each scenario's own.
    #[serde(default)]
    pub strategies: Option<StrategyTuning>,
    /// Anthropic breakpoint placement; absent keeps each scenario's own (so
    /// a sweep can compare placements).
    #[serde(default)]
    pub cache_breakpoints: Option<CacheBreakpointSettings>,
}

impl Variant {
    /// The variant running the built-in `strategy` as each scenario tunes it.
    pub fn of_strategy(strategy: StrategyName) -> Self {
        Self { name: strategy.as_str().to_owned(), strategy: strategy.into(), strategies: None, cache_breakpoints: None }
    }

    /// The variant running `strategy` as each scenario tunes it, named as
    /// a built-in is, or as a plug-in declares itself in its handshake
    /// (started once for that, in the current directory).
    pub fn of_spec(strategy: StrategySpec) -> Result<Self, reloop_agent::context::StrategyError> {
        let name = match &strategy {
            StrategySpec::Builtin(name) => name.as_str().to_owned(),
            StrategySpec::File(file) => declared_name(&PluginCommand::for_file(file))?,
            StrategySpec::Command(command) => declared_name(command)?,
        };
        Ok(Self { name, strategy, strategies: None, cache_breakpoints: None })
    }

    /// A scenario's loop `settings` under this variant.
    pub fn apply(&self, settings: &LoopSettings) -> LoopSettings {
        let mut run = settings.clone();
        run.strategy = self.strategy.clone();
        if let Some(tuning) = &self.strategies {
            run.strategies = tuning.clone();
        }
        if let Some(placement) = &self.cache_breakpoints {
            run.cache_breakpoints = placement.clone();
        }
        run
    }
}

/// What a batch runs each scenario as: under a plain label with the
/// scenario's own settings (`reloop run --variant`), or as a swept variant.
#[derive(Debug, Clone, PartialEq)]
pub enum RunVariant {
    /// The scenario's own settings, rows labelled so.
    Label(String),
    /// A strategy or tuned variant.
    Swept(Variant),
}

impl RunVariant {
    /// The label written to the `variant` column.
    pub fn name(&self) -> &str {
        match self {
            Self::Label(name) => name,
            Self::Swept(variant) => &variant.name,
        }
    }

    /// A scenario's loop `settings` under this variant.
    pub fn apply(&self, settings: &LoopSettings) -> LoopSettings {
        match self {
            Self::Label(_) => settings.clone(),
            Self::Swept(variant) => variant.apply(settings),
        }
    }

    /// Whether it runs over `wire`: `native` needs the wire's own mechanism
    /// (a scenario naming it on another wire is refused when it loads).
    pub fn runs_on(&self, wire: reloop_agent::WireFormat) -> bool {
        !matches!(self, Self::Swept(variant) if variant.strategy.is(StrategyName::Native)) || reloop_agent::context::native::has_native(wire)
    }
}

/// A variants file: `variants: [ { name, strategy, strategies, cache_breakpoints } ]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantsFile {
    /// The variants, in order.
    pub variants: Vec<Variant>,
}

/// The name `command` declares, asked in the current directory with the
/// built-ins' default constants.
fn declared_name(command: &PluginCommand) -> Result<String, reloop_agent::context::StrategyError> {
    reloop_agent::context::plugin::declared_name(command, &StrategyTuning::default(), Path::new("."))
}

/// Reads a variants file, rejecting duplicate names; a plug-in's file is
/// taken relative to the variants file.
pub fn load_variants(path: &Path) -> Result<Vec<Variant>, InputError> {
    let mut file: VariantsFile = yaml::load(path)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    for variant in &mut file.variants {
        variant.strategy = std::mem::take(&mut variant.strategy).relative_to(dir);
    }
    for (i, variant) in file.variants.iter().enumerate() {
        if file.variants[..i].iter().any(|v| v.name == variant.name) {
            return Err(InputError::field(path, format!("variants[{i}].name"), format!("`{}` is used twice", variant.name)));
        }
    }
    Ok(file.variants)
}

/// What one variant achieved over all its runs, summed run by run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VariantSummary {
    /// The variant.
    pub variant: String,
    /// Runs.
    pub runs: usize,
    /// Runs whose expectations held.
    pub passed: usize,
    /// Σ input tokens sent (main calls, server count).
    pub input_tokens: u64,
    /// Σ what the same calls would have sent uncompacted.
    pub input_tokens_uncompacted: u64,
    /// Σ steps used.
    pub steps: u64,
    /// Σ compactions per layer.
    pub compactions: [u64; 5],
    /// Σ summary calls.
    pub compaction_calls: u64,
    /// Σ cache breaks the server's cache simulation saw.
    pub cache_breaks_simulated: u64,
    /// Σ cache breaks the loop's detector reported.
    pub cache_breaks_detected: u64,
    /// Σ of those on a call where the server saw one too.
    pub cache_breaks_matched: u64,
    /// Σ estimated cost (every answered call).
    pub cost_usd: f64,
    /// Σ of that paid for summary calls.
    pub compaction_cost_usd: f64,
    /// Σ references to earlier tool results that later actions used.
    pub references_needed: u64,
    /// Σ of those the context no longer held when they were used.
    pub references_lost: u64,
}

impl VariantSummary {
    /// Adds one finished run of this variant.
    pub fn add(&mut self, run: &RunSummary) {
        let f = &run.figures;
        self.runs += 1;
        self.passed += usize::from(run.passed);
        self.input_tokens += f.input_tokens_total;
        self.input_tokens_uncompacted += f.input_tokens_uncompacted_total;
        self.steps += u64::from(f.steps_used);
        for (total, count) in self.compactions.iter_mut().zip(f.compactions) {
            *total += u64::from(count);
        }
        self.compaction_calls += u64::from(f.compaction_calls);
        self.cache_breaks_simulated += u64::from(f.cache_breaks_simulated);
        self.cache_breaks_detected += u64::from(f.cache_breaks);
        self.cache_breaks_matched += u64::from(f.cache_breaks_matched);
        self.cost_usd += f.cost_usd;
        self.compaction_cost_usd += f.compaction_cost_usd;
        self.references_needed += u64::from(f.references_needed);
        self.references_lost += u64::from(f.references_lost);
    }

    /// 1 − Σ lost / Σ needed over all runs; `None` when nothing was needed.
    pub fn retention(&self) -> Option<f64> {
        (self.references_needed > 0).then(|| 1.0 - self.references_lost as f64 / self.references_needed as f64)
    }

    /// The cost relative to `base`'s (`+0.5`: half as dear again); `None`
    /// when `base` cost nothing.
    pub fn cost_against(&self, base: &VariantSummary) -> Option<f64> {
        (base.cost_usd > 0.0).then(|| self.cost_usd / base.cost_usd - 1.0)
    }

    /// The share of the cost paid for summary calls; `None` when nothing was priced.
    pub fn summary_share(&self) -> Option<f64> {
        (self.cost_usd > 0.0).then(|| self.compaction_cost_usd / self.cost_usd)
    }

    /// The loop detector's recall against the simulation, over all runs;
    /// `None` when the server saw no break.
    pub fn cache_break_recall(&self) -> Option<f64> {
        (self.cache_breaks_simulated > 0).then(|| self.cache_breaks_matched as f64 / self.cache_breaks_simulated as f64)
    }

    /// The loop detector's precision against the simulation, over all runs.
    pub fn cache_break_precision(&self) -> Option<f64> {
        (self.cache_breaks_detected > 0).then(|| self.cache_breaks_matched as f64 / self.cache_breaks_detected as f64)
    }

    /// 1 − input / uncompacted, over all runs.
    pub fn savings_ratio(&self) -> f64 {
        if self.input_tokens_uncompacted == 0 { 0.0 } else { 1.0 - self.input_tokens as f64 / self.input_tokens_uncompacted as f64 }
    }
}

/// Per-variant summaries, in the order the variants were given (runs
/// finish in any order).
#[derive(Debug, Clone, Default)]
struct SweepTally {
    variants: Vec<VariantSummary>,
}

impl SweepTally {
    /// An empty summary per variant.
    fn new(variants: &[RunVariant]) -> Self {
        let variants = variants.iter().map(|v| VariantSummary { variant: v.name().to_owned(), ..VariantSummary::default() }).collect();
        Self { variants }
    }

    /// Adds one finished run to its variant's summary (a variant not given
    /// to [`SweepTally::new`] gets a summary of its own, last).
    fn add(&mut self, run: &RunSummary) {
        let index = self.variants.iter().position(|v| *v.variant == *run.variant).unwrap_or_else(|| {
            self.variants.push(VariantSummary { variant: run.variant.to_string(), ..VariantSummary::default() });
            self.variants.len() - 1
        });
        self.variants[index].add(run);
    }
}

/// Left-out scenarios the like-for-like line names before counting the rest.
pub const NAMES_SHOWN: usize = 10;

/// Sweep totals over like with like: the scenarios every variant completed
/// (ended with a final answer, or where an imported session ended). A variant whose run of a scenario stopped
/// early (a context overflow at step 261 against 558 for the others) would
/// otherwise look cheap for having done less. A variant that completed no
/// scenario at all is not asked to (it would leave nothing to compare);
/// it is named as such. The HTML report sums the same way
/// (`reloop_report::strategy_totals`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LikeForLike {
    /// Per variant, in the order given, over the common scenarios only.
    pub summaries: Vec<VariantSummary>,
    /// Scenarios every variant completed.
    pub scenarios: usize,
    /// The other scenarios, by name, with each variant that did not
    /// complete them and how its run ended (`None`: the variant has no run).
    pub left_out: BTreeMap<String, Vec<(String, Option<Outcome>)>>,
    /// Variants that completed no scenario (`none` on scenarios/long/, where
    /// it overflows every window): they do not empty the comparison, and
    /// their rows sum their runs of the common scenarios as far as they got.
    pub completed_none: Vec<String>,
}

impl LikeForLike {
    /// Sums `runs` of `variants` over the scenarios all of them completed,
    /// leaving out of that condition the variants that completed none.
    pub fn of(runs: &[RunSummary], variants: &[RunVariant]) -> Self {
        let completed = |run: &RunSummary| run.outcome.completed();
        // Each scenario's runs, grouped once: looking them up in all runs
        // for every scenario was quadratic (a 15,000-run sweep's table took
        // longer than its runs).
        let mut by_scenario: BTreeMap<&str, Vec<&RunSummary>> = BTreeMap::new();
        for run in runs {
            by_scenario.entry(&*run.scenario).or_default().push(run);
        }
        let (judged, completed_none): (Vec<&RunVariant>, Vec<&RunVariant>) =
            variants.iter().partition(|variant| runs.iter().any(|r| &*r.variant == variant.name() && completed(r)));
        let mut left_out = BTreeMap::new();
        for (scenario, scenario_runs) in &by_scenario {
            let of = |variant: &RunVariant| -> Vec<&RunSummary> { scenario_runs.iter().copied().filter(|r| &*r.variant == variant.name()).collect() };
            // Alike: every variant ran it and every trial ended one way (a
            // scenario stopped at its doom loop under every variant is
            // compared), or each variant that completed anything completed
            // every trial of it.
            let first = scenario_runs.first().map(|r| r.outcome);
            let alike = variants.iter().all(|variant| {
                let trials = of(variant);
                !trials.is_empty() && trials.iter().all(|r| Some(r.outcome) == first)
            });
            let missing: Vec<(String, Option<Outcome>)> = judged
                .iter()
                .filter_map(|variant| {
                    let trials = of(variant);
                    let failed = trials.iter().find(|r| !completed(r));
                    (trials.is_empty() || failed.is_some()).then(|| (variant.name().to_owned(), failed.map(|r| r.outcome)))
                })
                .collect();
            if !alike && !missing.is_empty() {
                left_out.insert((*scenario).to_owned(), missing);
            }
        }
        let mut tally = SweepTally::new(variants);
        for run in runs.iter().filter(|r| !left_out.contains_key(&*r.scenario)) {
            tally.add(run);
        }
        let completed_none = completed_none.iter().map(|v| v.name().to_owned()).collect();
        Self { summaries: tally.variants, scenarios: by_scenario.len() - left_out.len(), left_out, completed_none }
    }

    /// `12 of 14 scenarios ended alike under every variant; left out: a (none: context_exceeded), b (masking: llm_error)`,
    /// naming the first [`NAMES_SHOWN`] and counting the rest (a suite's
    /// line was once 5,000 characters).
    pub fn describe(&self) -> String {
        let total = self.scenarios + self.left_out.len();
        let mut text = format!("like for like: {} of {total} scenarios ended alike under every variant", self.scenarios);
        if !self.left_out.is_empty() {
            let names: Vec<String> = self
                .left_out
                .iter()
                .take(NAMES_SHOWN)
                .map(|(scenario, runs)| {
                    let how: Vec<String> = runs.iter().map(|(variant, outcome)| format!("{variant}: {}", outcome.map_or("no run", Outcome::as_str))).collect();
                    format!("{scenario} ({})", how.join(", "))
                })
                .collect();
            text.push_str(&format!("; left out: {}", names.join(", ")));
            if self.left_out.len() > NAMES_SHOWN {
                text.push_str(&format!(" and {} more", self.left_out.len() - NAMES_SHOWN));
            }
        }
        if !self.completed_none.is_empty() {
            text.push_str(&format!("; completed none, summed as far as they got: {}", self.completed_none.join(", ")));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_figures::RunFigures;

    fn run(scenario: &str, variant: &str, outcome: Outcome, input_tokens: u64) -> RunSummary {
        RunSummary {
            scenario: scenario.into(),
            scenario_file: format!("{scenario}.yaml").into(),
            variant: variant.into(),
            trial: 0,
            min_pass_rate: None,
            outcome,
            passed: true,
            figures: RunFigures { input_tokens_total: input_tokens, ..RunFigures::default() },
            metrics_digest: 0,
            texts: None,
        }
    }

    /// Issue 30: `none` looked cheapest on scenarios/long/ because all its
    /// runs stopped at a context overflow, long before the others finished.
    #[test]
    fn totals_leave_out_the_scenarios_a_variant_did_not_complete_and_say_which() {
        let variants = [RunVariant::Swept(Variant::of_strategy(StrategyName::Roku)), RunVariant::Swept(Variant::of_strategy(StrategyName::None))];
        let runs = [
            run("long-a", "roku", Outcome::FinalAnswer, 500),
            run("long-a", "none", Outcome::ContextExceeded, 200),
            run("long-b", "roku", Outcome::FinalAnswer, 300),
            run("long-b", "none", Outcome::FinalAnswer, 400),
            run("imported-stopped", "roku", Outcome::Stopped, 100),
            run("imported-stopped", "none", Outcome::Stopped, 100),
        ];
        let like = LikeForLike::of(&runs, &variants);
        let inputs: Vec<(&str, u64)> = like.summaries.iter().map(|s| (s.variant.as_str(), s.input_tokens)).collect();
        // An imported session that ends where its source stopped is complete.
        assert_eq!(inputs, [("roku", 400), ("none", 500)]);
        assert_eq!(like.describe(), "like for like: 2 of 3 scenarios ended alike under every variant; left out: long-a (none: context_exceeded)");
    }

    /// Issue 45: a scenario that ends in its expected `doom_loop_stopped`
    /// under every variant was left out as not completed, and the line
    /// named every left-out scenario (5,000 characters on the bundled suite).
    #[test]
    fn a_scenario_ending_alike_under_every_variant_is_compared_and_the_line_names_ten() {
        let variants = [RunVariant::Swept(Variant::of_strategy(StrategyName::Roku)), RunVariant::Swept(Variant::of_strategy(StrategyName::None))];
        let mut runs = vec![
            run("loop", "roku", Outcome::DoomLoopStopped, 10),
            run("loop", "none", Outcome::DoomLoopStopped, 20),
            run("done", "roku", Outcome::FinalAnswer, 5),
            run("done", "none", Outcome::FinalAnswer, 5),
        ];
        for i in 0..12 {
            runs.push(run(&format!("s{i:02}"), "roku", Outcome::FinalAnswer, 1));
            runs.push(run(&format!("s{i:02}"), "none", Outcome::ContextExceeded, 1));
        }
        let like = LikeForLike::of(&runs, &variants);
        assert_eq!(like.scenarios, 2);
        assert_eq!(like.summaries[0].input_tokens, 15);
        let line = like.describe();
        assert!(line.starts_with("like for like: 2 of 14 scenarios ended alike under every variant; left out: s00 (none: context_exceeded), "), "{line}");
        assert!(line.ends_with("s09 (none: context_exceeded) and 2 more"), "{line}");
    }

    /// Issue 40: on scenarios/long/ `none` overflows every window, and the
    /// totals were over 0 of 5 scenarios, all zeros.
    #[test]
    fn a_variant_that_completed_nothing_does_not_empty_the_totals() {
        let variants = [RunVariant::Swept(Variant::of_strategy(StrategyName::Masking)), RunVariant::Swept(Variant::of_strategy(StrategyName::None))];
        let runs = [
            run("long-a", "masking", Outcome::FinalAnswer, 500),
            run("long-a", "none", Outcome::ContextExceeded, 200),
            run("long-b", "masking", Outcome::ContextExceeded, 300),
            // Not alike (a scenario both overflowed would be compared).
            run("long-b", "none", Outcome::LlmError, 400),
        ];
        let like = LikeForLike::of(&runs, &variants);
        let inputs: Vec<(&str, u64)> = like.summaries.iter().map(|s| (s.variant.as_str(), s.input_tokens)).collect();
        assert_eq!(inputs, [("masking", 500), ("none", 200)]);
        assert_eq!(
            like.describe(),
            "like for like: 1 of 2 scenarios ended alike under every variant; left out: long-b (masking: context_exceeded); completed none, summed as far as they got: none"
        );
    }

    /// Issue 40: a strategy's retention is over its references, summed run
    /// by run, not a mean of the runs' ratios.
    #[test]
    fn retention_and_cost_against_none_are_over_all_runs() {
        let with = |needed, lost, cost| {
            let mut run = run("s", "masking", Outcome::FinalAnswer, 0);
            run.figures.references_needed = needed;
            run.figures.references_lost = lost;
            run.figures.cost_usd = cost;
            run
        };
        let mut masking = VariantSummary::default();
        masking.add(&with(2, 1, 3.0));
        masking.add(&with(8, 1, 3.0));
        assert_eq!(masking.retention(), Some(0.8));
        let mut none = VariantSummary::default();
        assert_eq!(none.retention(), None, "nothing needed, nothing to retain");
        none.add(&with(0, 0, 4.0));
        assert_eq!(masking.cost_against(&none), Some(0.5));
    }
}
