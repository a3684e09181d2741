//! `reloop sweep`: scenarios × variants into one dataset, and a table that
//! compares the variants.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use reloop_eval::report::write_atomically;
use reloop_eval::sweep::{LikeForLike, RunVariant, StrategyName, Variant, load_variants};

use crate::app::SweepArgs;
use crate::batch::{execute, prepare};
use crate::exit_code;
use crate::short_name::{MAX_NAME_CHARS, shortened};
use crate::stdout::print_stdout;

/// Runs the command; returns the exit code, as `run`'s: 1 when a run's
/// expectation failed (under any variant), so a sweep in CI fails on what a
/// run would fail on; the table and reports are written all the same.
pub fn run(mut args: SweepArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    args.out = args.batch.resume.clone().unwrap_or(args.out);
    let mut variants = Vec::new();
    for strategy in &args.strategies {
        match Variant::of_spec(strategy.clone()) {
            Ok(variant) => variants.push(variant),
            Err(error) => {
                eprintln!("error: --strategies: {error}");
                return Ok(exit_code::BAD_INPUT);
            }
        }
    }
    if let Some(path) = &args.variants {
        match load_variants(path) {
            Ok(loaded) => variants.extend(loaded),
            Err(error) => {
                eprintln!("error: {error}");
                return Ok(exit_code::BAD_INPUT);
            }
        }
    }
    if let Some(twice) = variants.iter().enumerate().find_map(|(i, v)| variants[..i].iter().any(|w| w.name == v.name).then_some(&v.name)) {
        eprintln!("error: two variants are named `{twice}`; give one another name in a variants file (--variants)");
        return Ok(exit_code::BAD_INPUT);
    }
    if variants.is_empty() {
        eprintln!("error: give --strategies, --variants, or both");
        return Ok(exit_code::BAD_INPUT);
    }
    let variants: Vec<RunVariant> = variants.into_iter().map(RunVariant::Swept).collect();
    let prepared = match prepare(&args.batch, variants.clone(), (!args.wires.is_empty()).then_some(args.wires.as_slice()), &args.out, &cancel) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let (plan, finished) = execute(prepared, &args.batch, &cancel)?;
    // Totals over like with like; every run's own figures stay in the Parquet.
    let like = LikeForLike::of(&finished.runs, &variants);
    // Repeated: each scenario × variant's verdict over its trials first.
    let trials = if plan.trials > 1 { crate::trials_table::render(&finished.runs, &finished.verdicts, plan.trials) } else { String::new() };
    if finished.unwritten.is_some() {
        print_stdout(&format!("{trials}{}{}\n", render(&like), like.describe()))?;
        return Ok(finished.exit_code(plan.runs(), &cancel));
    }
    // Paired per scenario, from the report just published (as the page and the comment read it).
    let pairings = reloop_report::paired::read(&args.out)?;
    let paired = reloop_report::render::paired::text(&pairings);
    print_stdout(&format!("{trials}{}{}\n{paired}{}", render(&like), like.describe(), finished.reports_line(&args.out)))?;
    if let Some(path) = &args.markdown {
        let comment = reloop_report::render::run_comment::render(&finished.verdicts, plan.trials) + &reloop_report::render::paired::markdown(&pairings);
        write_atomically(path, |file| file.write_all(comment.as_bytes()))?;
    }
    Ok(finished.exit_code(plan.runs(), &cancel))
}

/// One row per variant. `cost vs none` is against the variant named `none`
/// (the run without compaction), `-` when the sweep has none or it completed
/// no scenario; `retention` is `-` when the runs needed no reference to an
/// earlier tool result.
fn render(like: &LikeForLike) -> String {
    let summaries = &like.summaries;
    let none = StrategyName::None.as_str();
    let base = summaries.iter().find(|s| s.variant == none && !like.completed_none.iter().any(|v| v == none));
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_header(vec![
        "variant",
        "savings",
        "input tok",
        "uncompacted tok",
        "steps",
        "compactions L0/L1/L2/L3/L4",
        "summary calls",
        "cache breaks (sim)",
        "detected (P / R)",
        "cost $",
        "cost vs none",
        "summary share",
        "retention",
        "pass",
    ]);
    for s in summaries {
        let layers: Vec<String> = s.compactions.iter().map(u64::to_string).collect();
        table.add_row(vec![
            shortened(&s.variant, MAX_NAME_CHARS),
            format!("{:.1}%", s.savings_ratio() * 100.0),
            s.input_tokens.to_string(),
            s.input_tokens_uncompacted.to_string(),
            s.steps.to_string(),
            layers.join("/"),
            s.compaction_calls.to_string(),
            s.cache_breaks_simulated.to_string(),
            format!("{} ({} / {})", s.cache_breaks_detected, ratio(s.cache_break_precision()), ratio(s.cache_break_recall())),
            format!("{:.4}", s.cost_usd),
            base.and_then(|base| s.cost_against(base)).map_or_else(|| "-".to_owned(), |against| format!("{:+.1}%", against * 100.0)),
            s.summary_share().map_or_else(|| "-".to_owned(), |share| format!("{:.1}%", share * 100.0)),
            s.retention().map_or_else(|| "-".to_owned(), |retention| format!("{:.1}%", retention * 100.0)),
            format!("{}/{}", s.passed, s.runs),
        ]);
    }
    format!("{table}\n")
}

/// A ratio with two decimals, `-` when undefined.
fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}
