//! A sweep's strategies side by side, like with like: per variant the
//! savings, the cost with the prompt cache priced, that cost against
//! `none`'s, the simulated cache breaks and the retention, as a table and
//! bars; a sentence for each strategy that saves tokens yet costs more than
//! `none` (each edit rewrites the cached prefix); and the frontier, cost
//! against retention, overall first, then one small chart per scenario.

use std::fmt::Write as _;

use super::escape;
use super::frontier::{self, Point};
use super::svg;
use crate::error::ReportError;
use crate::figures::number;
use crate::runs::Runs;
use crate::strategy_totals::{StrategyTotals, SweepTotals, UNCOMPACTED_VARIANT, pareto_optimal};
use crate::table::Table;

/// The section, for a table of at least two variants.
pub(super) fn section(html: &mut String, runs: &Table) -> Result<(), ReportError> {
    let totals = SweepTotals::of(&Runs::from_table(runs)?);
    html.push_str("<h2>Savings and cost by strategy</h2>");
    let _ = write!(html, "<p class=\"like-for-like\">{}</p>", escape(&like_for_like(&totals)));
    let base = totals.overall.iter().find(|t| t.variant == UNCOMPACTED_VARIANT && t.completed());
    table(html, &totals.overall, base);
    if let Some(base) = base {
        for sentence in totals.overall.iter().filter_map(|t| dearer_for_saving(t, base)) {
            let _ = write!(html, "<p class=\"headline\">{}</p>", escape(&sentence));
        }
    }
    bars(html, &totals.overall);
    frontiers(html, &totals);
    Ok(())
}

/// `Over the 4 of 5 scenarios every strategy completed; left out: …`.
fn like_for_like(totals: &SweepTotals) -> String {
    let mut text = format!("Over the {} of {} scenarios every strategy completed", totals.common.len(), totals.scenarios.len());
    let left_out: Vec<String> = totals
        .scenarios
        .iter()
        .filter(|s| !totals.common.contains(&s.scenario))
        .map(|s| {
            let how: Vec<String> = s.strategies.iter().filter(|t| !t.completed()).map(|t| format!("{}: {}", t.variant, t.incomplete.join(", "))).collect();
            format!("{} ({})", s.scenario, how.join("; "))
        })
        .collect();
    if !left_out.is_empty() {
        let _ = write!(text, "; left out: {}", left_out.join(", "));
    }
    let unfinished: Vec<&str> = totals.overall.iter().filter(|t| !t.completed()).map(|t| t.variant.as_str()).collect();
    if !unfinished.is_empty() {
        let _ =
            write!(text, ". Completed no scenario, so summed over these as far as it got, drawn hollow and never on the frontier: {}", unfinished.join(", "));
    }
    text.push('.');
    text
}

fn table(html: &mut String, overall: &[StrategyTotals], base: Option<&StrategyTotals>) {
    html.push_str("<table class=\"sortable\" id=\"by-variant\"><thead><tr><th>variant</th><th>savings</th><th>cost $</th><th>cost vs none</th><th>cache breaks (sim)</th><th>retention</th><th>cache hit ratio</th><th>cached tokens lost to breaks</th></tr></thead><tbody>");
    for t in overall {
        let against = base.and_then(|base| t.cost_against(base));
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{:.4}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.variant),
            percent(t.savings()),
            t.cost_usd,
            crate::figures::percent(against),
            number(t.cache_breaks_simulated),
            percent(t.retention()),
            percent(t.cache_hit_ratio()),
            number(t.cache_tokens_lost)
        );
    }
    html.push_str("</tbody></table>");
}

/// `12.3%`, `-` when undefined.
fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

/// `masking sends 50.0% fewer input tokens than none, yet costs 376.6% more
/// with the prompt cache priced (362 simulated cache breaks)`, for a
/// strategy that saves tokens and costs more than the uncompacted run.
fn dearer_for_saving(t: &StrategyTotals, base: &StrategyTotals) -> Option<String> {
    let saved = 1.0 - t.input_tokens / base.input_tokens.max(1.0);
    let dearer = t.cost_against(base)?;
    (t.completed() && saved > 0.0 && dearer > 0.0).then(|| {
        format!(
            "{} sends {:.1}% fewer input tokens than {}, yet costs {:.1}% more with the prompt cache priced (${:.4} against ${:.4}; {} simulated cache breaks against {}): each edit rewrites the cached prefix.",
            t.variant,
            saved * 100.0,
            base.variant,
            dearer * 100.0,
            t.cost_usd,
            base.cost_usd,
            number(t.cache_breaks_simulated),
            number(base.cache_breaks_simulated)
        )
    })
}

fn bars(html: &mut String, overall: &[StrategyTotals]) {
    let savings: Vec<(String, f64)> = overall.iter().map(|t| (t.variant.clone(), t.savings().unwrap_or(0.0))).collect();
    let top_cost = overall.iter().map(|t| t.cost_usd).fold(0.0, f64::max);
    let costs: Vec<(String, f64, String)> =
        overall.iter().map(|t| (t.variant.clone(), if top_cost > 0.0 { t.cost_usd / top_cost } else { 0.0 }, format!("${:.4}", t.cost_usd))).collect();
    let _ = write!(
        html,
        "<div class=\"charts\"><figure>{}<figcaption>savings: 1 − input tokens sent / uncompacted</figcaption></figure><figure>{}<figcaption>cost, USD (prompt cache priced)</figcaption></figure></div>",
        svg::bars(&savings, "compaction savings by variant"),
        svg::labelled_bars(&costs, "cost by variant")
    );
}

/// The overall frontier, then one per scenario.
fn frontiers(html: &mut String, totals: &SweepTotals) {
    html.push_str("<h2 id=\"frontier\">Cost against retention</h2><p>One point per strategy: what it kept of the references the session used later (<code>retention</code>) against what it cost with the prompt cache priced. Ringed and joined: the frontier, where no other strategy is as cheap and retains as much while better at one. Hollow: runs that did not complete. Left of the axis: no retention figure.</p>");
    let optimal = |strategies: &[StrategyTotals]| {
        let flags = pareto_optimal(strategies);
        let names: Vec<&str> = strategies.iter().zip(&flags).filter(|(_, on)| **on).map(|(t, _)| t.variant.as_str()).collect();
        (flags, if names.is_empty() { "no strategy with a retention figure".to_owned() } else { names.join(", ") })
    };
    let (flags, names) = optimal(&totals.overall);
    let _ = write!(
        html,
        "<figure class=\"frontier overall\" id=\"frontier-overall\">{}<figcaption>overall, {} scenarios; on the frontier: {}</figcaption></figure>",
        frontier::chart(&points(totals, &totals.overall, &flags), "cost against retention, overall"),
        totals.common.len(),
        escape(&names)
    );
    let _ = write!(html, "<details class=\"frontiers\" open><summary>per scenario ({})</summary><div class=\"charts\">", totals.scenarios.len());
    for scenario in &totals.scenarios {
        let (flags, names) = optimal(&scenario.strategies);
        let _ = write!(
            html,
            "<figure class=\"frontier scenario\" data-scenario=\"{name}\">{}<figcaption>{name}; on the frontier: {}</figcaption></figure>",
            frontier::chart(&points(totals, &scenario.strategies, &flags), &format!("cost against retention, {}", scenario.scenario)),
            escape(&names),
            name = escape(&scenario.scenario)
        );
    }
    html.push_str("</div></details>");
}

fn points<'a>(totals: &SweepTotals, strategies: &'a [StrategyTotals], optimal: &[bool]) -> Vec<Point<'a>> {
    strategies.iter().zip(optimal).map(|(t, &optimal)| Point { totals: t, colour: totals.index_of(&t.variant), optimal }).collect()
}
