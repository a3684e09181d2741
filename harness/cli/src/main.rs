//! The `reloop` binary: argument parsing and wiring only. Everything it
//! does lives in the `reloop-eval` and `reloop-mock` libraries.

mod app;
mod batch;
mod compare_cmd;
mod detectors_cmd;
mod estimate_cmd;
mod import_cmd;
mod exit_code;
mod junit;
mod merge_cmd;
mod record_cmd;
mod report_cmd;
mod run_cmd;
mod schema_cmd;
mod serve_cmd;
mod shard;
mod short_name;
mod stdout;
mod sweep_cmd;
mod validate_cmd;
mod summary;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

use app::{App, Command};

fn main() {
    let app = App::parse();
    let cancel = Arc::new(AtomicBool::new(false));
    let handler_flag = Arc::clone(&cancel);
    let on_interrupt = match app.command {
        Command::Run(_) | Command::Sweep(_) => "finishing the runs in flight, then writing the report",
        Command::Serve(_) | Command::Record(_) => "finishing the exchanges under way, then writing what was recorded",
        _ => "stopping",
    };
    // First Ctrl-C, SIGTERM or SIGHUP (a CI timeout, `docker stop`, a closed
    // terminal): stop starting runs, report what finished. Second: leave now.
    let _ = ctrlc::set_handler(move || {
        if handler_flag.swap(true, Ordering::SeqCst) {
            reloop_eval::black_box::kill_live_agents();
            std::process::exit(exit_code::INTERRUPTED);
        }
        eprintln!("\ninterrupt: {on_interrupt} (interrupt again to quit now)");
    });
    let result = match app.command {
        Command::Run(args) => run_cmd::run(args, cancel),
        Command::Sweep(args) => sweep_cmd::run(args, cancel),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Estimate(args) => estimate_cmd::run(args),
        Command::Compare(args) => compare_cmd::run(args),
        Command::Detectors(args) => detectors_cmd::run(&args),
        Command::Report(args) => report_cmd::run(args),
        Command::Merge(args) => merge_cmd::run(args),
        Command::Validate(args) => validate_cmd::run(args),
        Command::Schema(args) => schema_cmd::run(&args),
        Command::Import(args) => import_cmd::run(&args),
        Command::Record(args) => record_cmd::run(args),
    };
    let code = result.unwrap_or_else(|error| {
        eprintln!("error: {error:#}");
        exit_code::INTERNAL
    });
    std::process::exit(code);
}
