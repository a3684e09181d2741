//! `reloop sweep`: scenarios × variants into one dataset, and a table that
//! compares the variants.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use reloop_eval::report::write_atomically;
use reloop_eval::sweep::{LikeForLike, RunVariant, Variant, VariantSummary, load_variants};

use crate::app::SweepArgs;
use crate::batch::{Prepared, execute, exit_code_of, prepare};
use crate::exit_code;
use crate::short_name::{MAX_NAME_CHARS, shortened};
use crate::stdout::print_stdout;

/// Runs the command; returns the exit code, as `run`'s: 1 when a run's
/// expectation failed (under any variant), so a sweep in CI fails on what a
/// run would fail on; the table and reports are written all the same.
pub fn run(args: SweepArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    let mut variants: Vec<Variant> = args.strategies.iter().map(|s| Variant::of_strategy(s.name())).collect();
    if let Some(path) = &args.variants {
        match load_variants(path) {
            Ok(loaded) => variants.extend(loaded),
            Err(error) => {
                eprintln!("error: {error}");
                return Ok(exit_code::BAD_INPUT);
            }
        }
    }
    if variants.is_empty() {
        eprintln!("error: give --strategies, --variants, or both");
        return Ok(exit_code::BAD_INPUT);
    }
    let variants: Vec<RunVariant> = variants.into_iter().map(RunVariant::Swept).collect();
    let Prepared { plan, report, live } = match prepare(&args.batch, variants.clone(), (!args.wires.is_empty()).then_some(args.wires.as_slice()), &args.out) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let finished = execute(&plan, &args.batch, report, live, &cancel)?;
    // Totals over like with like; every run's own figures stay in the Parquet.
    let like = LikeForLike::of(&finished.runs, &variants);
    // Paired per scenario, from the report just published (as the page and the comment read it).
    let pairings = reloop_report::paired::pairings(&reloop_report::Runs::load(&args.out)?);
    let paired = reloop_report::render::paired::text(&pairings);
    // Repeated: each scenario × variant's verdict over its trials first.
    let trials = if plan.trials > 1 { crate::trials_table::render(&finished.runs, &finished.verdicts, plan.trials) } else { String::new() };
    print_stdout(&format!("{trials}{}{}\n{paired}reports: {}\n", render(&like.summaries), like.describe(), args.out.display()))?;
    if let Some(path) = &args.markdown {
        let comment = reloop_report::render::run_comment::render(&finished.verdicts, plan.trials) + &reloop_report::render::paired::markdown(&pairings);
        write_atomically(path, |file| file.write_all(comment.as_bytes()))?;
    }
    Ok(exit_code_of(&finished.runs, &finished.verdicts, plan.runs(), &cancel))
}

/// One row per variant.
fn render(summaries: &[VariantSummary]) -> String {
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
        "summary share",
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
            s.summary_share().map_or_else(|| "-".to_owned(), |share| format!("{:.1}%", share * 100.0)),
            format!("{}/{}", s.passed, s.runs),
        ]);
    }
    format!("{table}\n")
}

/// A ratio with two decimals, `-` when undefined.
fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}
