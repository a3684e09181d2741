//! `reloop estimate`: the loop's token estimator against o200k on files, per
//! file and per class, beside Roku's plain bytes/4; then the runtime
//! calibration replayed over the same files. The figures come from
//! `reloop_eval::estimator_report`; this module only lays them out.

use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use reloop_eval::estimator_report::{ClassSummary, EstimatorReport, FileEstimate, estimator_report};

use crate::app::EstimateArgs;
use crate::exit_code;
use crate::stdout::print_stdout;

/// Runs the command; returns the exit code.
pub fn run(args: EstimateArgs) -> anyhow::Result<i32> {
    let report = match estimator_report(&args.paths) {
        Ok(report) if report.files.is_empty() => {
            eprintln!("error: no files under {}", args.paths[0].display());
            return Ok(exit_code::BAD_INPUT);
        }
        Ok(report) => report,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    print_stdout(&render(&report))?;
    Ok(exit_code::SUCCESS)
}

/// The two tables and the calibration line.
pub fn render(report: &EstimatorReport) -> String {
    let c = &report.calibration;
    format!(
        "{}\n{}\ncalibration over {} requests (Layer 0 on, files interleaved): MAPE {} uncalibrated, {} calibrated\n",
        files_table(&report.files),
        classes_table(&report.classes),
        c.requests,
        percent(c.uncalibrated_mape),
        percent(c.calibrated_mape),
    )
}

fn files_table(files: &[FileEstimate]) -> Table {
    let mut table = new_table(&["file", "class", "detected", "bytes", "o200k", "bytes/4", "error", "estimate", "error"]);
    for f in files {
        table.add_row(vec![
            Cell::new(f.path.display()),
            Cell::new(&f.group),
            Cell::new(f.detected_name()),
            number(f.bytes),
            number(f.reference),
            number(f.baseline),
            signed_percent(f.baseline_error()),
            number(f.estimate),
            signed_percent(f.error()),
        ]);
    }
    table
}

fn classes_table(classes: &[ClassSummary]) -> Table {
    let mut table = new_table(&["class", "files", "MAPE bytes/4", "MAPE estimator"]);
    for class in classes {
        table.add_row(vec![
            Cell::new(&class.class),
            number(class.files as u64),
            Cell::new(percent(class.baseline_mape)).set_alignment(CellAlignment::Right),
            Cell::new(percent(class.estimator_mape)).set_alignment(CellAlignment::Right),
        ]);
    }
    table
}

fn new_table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_header(header.to_vec());
    table
}

fn number(value: u64) -> Cell {
    Cell::new(value).set_alignment(CellAlignment::Right)
}

fn signed_percent(fraction: f64) -> Cell {
    Cell::new(format!("{:+.1}%", fraction * 100.0)).set_alignment(CellAlignment::Right)
}

fn percent(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}
