//! `reloop detectors REPORT [--min X]`: the doom-loop detectors' precision,
//! recall and mean detection delay over a labelled suite's report.

use reloop_report::detectors::DetectorTable;
use reloop_report::table::Table;

use crate::app::DetectorsArgs;
use crate::exit_code;
use crate::stdout::print_stdout;

/// Runs the command; returns the exit code.
pub fn run(args: &DetectorsArgs) -> anyhow::Result<i32> {
    let table = match Table::load(&args.report, "runs").and_then(|runs| DetectorTable::score(&runs)) {
        Ok(table) => table,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    print_stdout(&table.render())?;
    let weakest = table.weakest();
    match (args.min, weakest) {
        (Some(min), Some(weakest)) if weakest < min => {
            println!("below --min {min}: the weakest precision or recall is {weakest}");
            Ok(exit_code::EXPECTATIONS_FAILED)
        }
        (Some(_), None) => {
            eprintln!("error: {}: no labelled run has a doom-loop label", args.report.display());
            Ok(exit_code::BAD_INPUT)
        }
        _ => Ok(exit_code::SUCCESS),
    }
}
