//! `reloop merge OUT SHARD...`: shard reports joined into one report, the
//! same as a single run's apart from timing.

use reloop_eval::report::ReportStream;

use crate::app::MergeArgs;
use crate::exit_code;

/// Runs the command; returns the exit code.
pub fn run(args: MergeArgs) -> anyhow::Result<i32> {
    let tables = match reloop_report::merge::merge(&args.shards) {
        Ok(tables) => tables,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    let batches = tables.map(|(_, batch)| batch);
    // Published like a batch's report: the three tables as one set.
    let mut report = ReportStream::open(&args.out, batches.clone().map(|batch| batch.schema()), std::time::Duration::MAX)?;
    report.append(&batches)?;
    report.publish()?;
    let runs = batches[0].num_rows();
    println!("merged {} shards, {runs} runs: {}", args.shards.len(), args.out.display());
    Ok(exit_code::SUCCESS)
}
