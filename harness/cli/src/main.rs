//! The `reloop` binary: argument parsing and wiring only. Everything it
//! does lives in the `reloop-eval` and `reloop-mock` libraries.

mod allocator;
mod app;
mod batch;
mod compare_cmd;
mod detectors_cmd;
mod estimate_cmd;
mod exit_code;
mod export_cmd;
mod file_size_limit;
mod import_cmd;
mod import_otlp_listen;
mod interrupt;
mod junit;
mod live_calls;
mod mcp_cmd;
mod merge_cmd;
mod record_cmd;
mod report_cmd;
mod run_cmd;
mod schema_cmd;
mod serve_cmd;
mod serve_live;
mod shard;
mod short_name;
mod stdout;
mod summary;
mod sweep_cmd;
mod trials_table;
mod validate_cmd;
mod verdicts;

use clap::Parser;

use app::{App, Command};
use interrupt::Interrupt;

fn main() {
    allocator::give_freed_memory_back_sooner();
    // `reloop __agent-keeper …`: this process keeps a black-box agent.
    if let Some(code) = reloop_eval::black_box::keeper::enter_if_asked() {
        std::process::exit(code);
    }
    // Started as `bash` or `sh` through a run's shell shim (`agent.tools: replay`):
    // answer the agent's command from the recording.
    if let Some(code) = reloop_eval::black_box::tool_side::shim::called_as_shim() {
        std::process::exit(code);
    }
    file_size_limit::report_instead_of_dying();
    let app = App::parse();
    // The commands that stop cleanly on a signal listen for one; the others
    // keep the default and end at once (a `timeout` ends an `import` too).
    let interrupt = match app.command {
        Command::Run(_) | Command::Sweep(_) => Interrupt::install("finishing the runs in flight, then writing the report"),
        Command::Serve(_) | Command::Record(_) => Interrupt::install("finishing the exchanges under way, then writing what was recorded"),
        Command::Import(ref args) if args.otlp_listen.is_some() => Interrupt::install("writing the traces received"),
        _ => Interrupt::default(),
    };
    let cancel = interrupt.flag();
    let batch = matches!(app.command, Command::Run(_) | Command::Sweep(_));
    if batch {
        reloop_eval::black_box::keeper::adopt_orphans();
    }
    let result = match app.command {
        Command::Run(args) => run_cmd::run(args, cancel),
        Command::Sweep(args) => sweep_cmd::run(args, cancel),
        Command::Serve(args) => serve_cmd::run(args, &interrupt),
        Command::Estimate(args) => estimate_cmd::run(args),
        Command::Compare(args) => compare_cmd::run(args),
        Command::Detectors(args) => detectors_cmd::run(&args),
        Command::Report(args) => report_cmd::run(args),
        Command::Merge(args) => merge_cmd::run(args),
        Command::Export(args) => export_cmd::run(&args),
        Command::Validate(args) => validate_cmd::run(args),
        Command::Schema(args) => schema_cmd::run(&args),
        Command::Import(args) => import_cmd::run(&args, &interrupt),
        Command::Record(args) => record_cmd::run(args, &interrupt),
        Command::McpReplay(args) => mcp_cmd::replay(&args),
        Command::McpRecord(args) => mcp_cmd::record(&args),
    };
    let code = result.unwrap_or_else(|error| {
        eprintln!("error: {error:#}");
        exit_code::INTERNAL
    });
    if batch {
        // Whatever an agent left running (having killed its keeper) ends with the batch.
        reloop_eval::black_box::keeper::end_adopted();
    }
    std::process::exit(code);
}
