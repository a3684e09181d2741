//! The command line as typed: clap types only, turned into library calls by
//! the command modules.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// reloop: replay LLM agent loops against recorded providers and measure
/// doom loops, compaction savings, cache breaks and step budgets.
#[derive(Debug, Parser)]
#[command(name = "reloop", version, about, long_about = None)]
pub struct App {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios: table on stdout, Parquet reports, exit code from expectations.
    Run(RunArgs),
    /// Serve a recording on loopback for any OpenAI-compatible client.
    Serve(ServeArgs),
    /// Compare the loop's token estimate with o200k on files, per file and per class.
    Estimate(EstimateArgs),
}

/// `reloop run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario files or directories of them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Where the Parquet reports go.
    #[arg(long, default_value = "reports/latest")]
    pub out: PathBuf,
    /// Runs in parallel (default: available cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Label written to every report row, to tell variants apart.
    #[arg(long, default_value = "default")]
    pub variant: String,
    /// Also write JUnit XML here, one test case per run.
    #[arg(long)]
    pub junit: Option<PathBuf>,
}

/// `reloop serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The recording to replay.
    #[arg(long)]
    pub recording: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Stream with the recorded latency in real time (default: as fast as possible).
    #[arg(long)]
    pub realtime: bool,
    /// Refuse prompts above this many tokens with the provider's context-length error.
    #[arg(long)]
    pub context_window: Option<u64>,
}

/// `reloop estimate`.
#[derive(Debug, Args)]
pub struct EstimateArgs {
    /// Text files or directories of them. Files in a directory named after a
    /// class (code, prose, json, cjk, mixed) are judged as that class; others
    /// as the class the estimator detects.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}
