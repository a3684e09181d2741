//! `reloop report DIR --html FILE`: the report as one self-contained page,
//! with the diff against a baseline when given.

use std::io::Write as _;

use reloop_eval::report::write_atomically;
use reloop_report::render::Verdict;

use crate::app::ReportArgs;
use crate::compare_cmd::{Allowed, judge};
use crate::exit_code;

/// Runs the command; returns the exit code.
pub fn run(args: ReportArgs) -> anyhow::Result<i32> {
    let judged = match &args.baseline {
        None => None,
        Some(baseline) => match judge(baseline, &args.dir, args.gates.as_deref(), Allowed::default()) {
            Ok(judged) => Some(judged),
            Err(message) => return Ok(bad_input(&message)),
        },
    };
    let verdict = judged.as_ref().map(|(comparison, gates)| Verdict { comparison, gates });
    let page = match reloop_report::html::render(&args.dir, verdict.as_ref()) {
        Ok(page) => page,
        Err(error) => return Ok(bad_input(&error)),
    };
    write_atomically(&args.html, |file| file.write_all(page.as_bytes()))?;
    println!("report: {}", args.html.display());
    Ok(exit_code::SUCCESS)
}

fn bad_input(message: &dyn std::fmt::Display) -> i32 {
    eprintln!("error: {message}");
    exit_code::BAD_INPUT
}
