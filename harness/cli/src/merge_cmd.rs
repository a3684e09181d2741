//! `reloop merge OUT SHARD...`: shard reports joined into one report, the
//! same as a single run's apart from timing.

use reloop_eval::report::write_parquet;

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
    for (name, batch) in &tables {
        write_parquet(&args.out.join(format!("{name}.parquet")), batch)?;
    }
    let runs = tables.first().map_or(0, |(_, batch)| batch.num_rows());
    println!("merged {} shards, {runs} runs: {}", args.shards.len(), args.out.display());
    Ok(exit_code::SUCCESS)
}
