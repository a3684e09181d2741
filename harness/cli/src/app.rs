//! The command line as typed: clap types only, turned into library calls by
//! the command modules.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Replay LLM agent loops against recorded providers, deterministically, and measure what they do:
/// outcomes, tokens and cost, doom loops, what context management saves, cache breaks.
#[derive(Debug, Parser)]
#[command(
    name = "reloop",
    version,
    after_help = "Start with `reloop run scenarios/ --out reports/latest`, then `reloop report reports/latest --html report.html`.\n`reloop COMMAND --help` says more; docs/cli.md has every command."
)]
pub struct App {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios: each agent loop against a mock provider replaying its recording; a results table, Parquet reports, exit 1 when an expectation fails.
    Run(RunArgs),
    /// Run scenarios under several context strategies (and wires) as one dataset with a `variant` column, to compare what each saves; exits as `run`.
    Sweep(SweepArgs),
    /// Serve recordings on loopback as the OpenAI (Chat Completions, Responses), Anthropic and Gemini APIs, for any client, SDK or agent to replay.
    Serve(ServeArgs),
    /// Check the loop's token estimate against o200k on your files: the error per file and per class of text.
    Estimate(EstimateArgs),
    /// Compare two reports run by run and judge the CI gates (tokens, cost, failures, doom loops): exit 0 when they hold, 1 when one fails.
    Compare(CompareArgs),
    /// Score the doom-loop detectors against a labelled suite's report: precision, recall and delay per detector.
    Detectors(DetectorsArgs),
    /// Draw a report (a run or a sweep) as one self-contained HTML page: tables, charts, a trajectory viewer.
    Report(ReportArgs),
    /// Merge the reports of `run --shard k/n` (one per CI job) into one report.
    Merge(MergeArgs),
    /// Export a report's runs as OpenTelemetry GenAI traces (OTLP/JSON, to a file or a collector) or ATIF trajectories.
    Export(ExportArgs),
    /// Check scenarios, recordings and gate files without running them: each error with its file, line and field.
    Validate(ValidateArgs),
    /// Print the JSON Schema of a file format, for editors and other validators.
    Schema(SchemaArgs),
    /// Turn real agent sessions (pi, Codex, Claude Code, SWE-agent, OpenHands, ATIF trajectories, OTLP GenAI traces) and vcrpy cassettes into scenarios and recordings.
    Import(ImportArgs),
    /// Record an agent against a real provider: a loopback proxy that streams the answers back unchanged and writes each exchange (secrets stripped) as a recording, with a scenario skeleton.
    Record(RecordArgs),
    /// Answer an agent's MCP client on stdio from a recording's `mcp:` frames, the server's program absent (docs/black-box.md).
    #[command(hide = true)]
    McpReplay(McpReplayArgs),
    /// Run a stdio MCP server between an agent and reloop, adding what it was asked and answered to a recording's `mcp:` (docs/black-box.md).
    #[command(hide = true)]
    McpRecord(McpRecordArgs),
}

/// `reloop mcp-replay`.
#[derive(Debug, Args)]
pub struct McpReplayArgs {
    /// The recording whose `mcp:` holds the server.
    #[arg(long)]
    pub recording: PathBuf,
    /// The server's name in it.
    #[arg(long)]
    pub server: String,
    /// Append each request (and whether the recording had it) to this JSON-lines file, as a run reads it.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// The real server's command line (`tools: replay-or-live`): a request the recording lacks is asked of it, started then.
    #[arg(last = true, value_name = "LIVE_COMMAND")]
    pub live: Vec<String>,
}

/// `reloop mcp-record`.
#[derive(Debug, Args)]
pub struct McpRecordArgs {
    /// The recording (it must exist) whose `mcp:` gets the server's frames; a server of that name already there is replaced.
    #[arg(long)]
    pub out: PathBuf,
    /// The server's name, as the agent's configuration and `agent.mcp` give it.
    #[arg(long)]
    pub server: String,
    /// Replace every match of this regex in what is recorded with `[REDACTED]` (repeatable).
    #[arg(long = "redact-body", value_name = "REGEX")]
    pub redact_body: Vec<String>,
    /// The server's command line.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// What `record`, `serve --capture` and `import` of cassettes strip before anything is written,
/// besides the credentials always stripped.
#[derive(Debug, Args, Default)]
pub struct RedactArgs {
    /// Also strip this header from the recording (repeatable).
    #[arg(long = "redact-header", value_name = "NAME")]
    pub redact_header: Vec<String>,
    /// Replace every match of this regex in recorded bodies with `[REDACTED]` (repeatable).
    #[arg(long = "redact-body", value_name = "REGEX")]
    pub redact_body: Vec<String>,
}

/// `reloop record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The provider (or any OpenAI- or Anthropic-compatible server) to forward to:
    /// `http://host:port`, the request path is appended.
    #[arg(long)]
    pub upstream: String,
    /// Where to write: `OUT.recording.yaml` and the scenario skeleton `OUT.yaml`.
    #[arg(long, default_value = "recordings/recorded")]
    pub out: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Overwrite `OUT.recording.yaml` and `OUT.yaml` if they exist (without it, record refuses to start).
    #[arg(long)]
    pub force: bool,
    /// Secrets to strip beyond the default ones.
    #[command(flatten)]
    pub redact: RedactArgs,
}

/// `reloop import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Session files.
    #[arg(required_unless_present = "otlp_listen")]
    pub files: Vec<PathBuf>,
    /// Where the scenarios, recordings and import reports go.
    #[arg(long)]
    pub out: PathBuf,
    /// The source format; `auto` tells it from the file.
    #[arg(long, value_enum, default_value_t = ImportFormat::Auto)]
    pub format: ImportFormat,
    /// A file whose text replaces the session's system prompt.
    #[arg(long)]
    pub system: Option<PathBuf>,
    /// Tool declarations replacing the preset: a JSON/YAML list of {name, description, parameters} or a preset file.
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// The directory the session worked in (default: the deepest one holding its cwd and every absolute path).
    #[arg(long)]
    pub workspace_root: Option<String>,
    /// Vcr cassettes: secrets to strip beyond the default ones.
    #[command(flatten)]
    pub redact: RedactArgs,
    /// Replace files an earlier import (or an edit) left in --out; without it, existing files are refused.
    #[arg(long)]
    pub force: bool,
    /// Also write NAME-AGENT.yaml: the session's own agent (codex) as a black box on the recording, its shell answered from the session's commands (`replay`, or `replay-or-live` to run the ones it lacks), its workspace the files the session read.
    #[arg(long, value_name = "TOOLS", value_enum, num_args = 0..=1, default_missing_value = "replay", conflicts_with = "otlp_listen")]
    pub agent: Option<AgentTools>,
    /// Receive OTLP traces instead of reading files: POST /v1/traces (JSON or protobuf) on ADDR (default 127.0.0.1:4318); each trace becomes a scenario at Ctrl-C or --otlp-exit-after.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:4318", conflicts_with = "files")]
    pub otlp_listen: Option<String>,
    /// With --otlp-listen: accept an ADDR that is not loopback (anyone who reaches it can send traces).
    #[arg(long, requires = "otlp_listen")]
    pub otlp_allow_remote: bool,
    /// With --otlp-listen: stop once N traces have finished (their root span received), then write them.
    #[arg(long, value_name = "N", requires = "otlp_listen", value_parser = clap::value_parser!(u64).range(1..))]
    pub otlp_exit_after: Option<u64>,
}

/// `reloop import --agent`: where the black-box scenario's shell commands are answered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentTools {
    /// From the recording only; a command it lacks is a `tool_side` divergence.
    Replay,
    /// From the recording; the commands it lacks run for real, each counted.
    ReplayOrLive,
}

/// The formats `reloop import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// Tell the format from the file.
    Auto,
    /// pi coding-agent session JSONL.
    Pi,
    /// Codex CLI rollout JSONL.
    Codex,
    /// Claude Code transcript JSONL.
    ClaudeCode,
    /// SWE-agent `.traj` or an OpenHands event list.
    OpenaiMessages,
    /// An ATIF trajectory (Harbor's Agent Trajectory Interchange Format, v1.0 to v1.8).
    Atif,
    /// A Gemini CLI chat recording: `session-*.json` (to v0.38) or `.jsonl` (v0.39+).
    GeminiCli,
    /// An Inspect AI eval log, `.eval` (zip) or `.json`: one scenario per sample and epoch.
    Inspect,
    /// An OpenCode session export (`opencode export <sessionID>`).
    Opencode,
    /// A Goose session: `goose session export --format json`, or a session JSONL file (`~/.local/share/goose/sessions/*.jsonl`).
    Goose,
    /// OpenTelemetry GenAI traces, OTLP/JSON (a document or one request a line) or OTLP protobuf: one scenario per trace.
    Otlp,
    /// A vcrpy cassette (YAML): a v2 recording, neutral and raw, plus a scenario skeleton.
    Vcr,
}

/// `reloop schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file format.
    #[arg(value_enum)]
    pub format: SchemaFormat,
}

/// The file formats with a JSON Schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaFormat {
    /// A scenario (`docs/scenario-format.md`).
    Scenario,
    /// A recording (`docs/recording-format.md`).
    Recording,
    /// A gates file of `reloop compare`.
    Gates,
    /// A line of the plug-in strategy protocol, either way (`docs/strategies.md`).
    Strategy,
}

/// `reloop validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Files, or directories searched for `*.yaml` recursively.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// What every batch of runs takes.
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// Scenario files or directories of them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Runs in parallel (default: available cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Also write JUnit XML here, one test case per run.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Price with this table (the shape of the repository's `prices.yaml`) instead of the embedded one.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Run each scenario (× variant × wire) N times, each trial with its own mock session and
    /// workspace (runs.parquet `trial`); a scenario passes when every trial does (pass^N).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub repeat: u64,
    /// Over repeated trials, pass a scenario whose pass rate is at least R (0 to 1), overriding
    /// its `expect.min_pass_rate`.
    #[arg(long, value_name = "R", value_parser = parse_rate)]
    pub min_pass_rate: Option<f64>,
    /// Run only shard k of n (`2/8`), chosen by a stable hash of each scenario file's path; `auto`
    /// reads it from a Kubernetes Indexed Job, a Slurm array or RELOOP_SHARD (docs/scale.md).
    #[arg(long, value_name = "K/N|auto")]
    pub shard: Option<crate::shard::ShardArg>,
    /// Make the finished runs readable in OUT.partial/ at most every SECS seconds while the
    /// batch goes on, so a killed batch loses at most that much work (0: after every run).
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    pub checkpoint_secs: u64,
    /// Go on with the batch that wrote OUT and was cut short (killed, preempted, Ctrl-C): keep
    /// the runs it finished and make only the others, into the same report (in place of --out).
    #[arg(long, value_name = "OUT", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// Going live against an upstream and re-recording (docs/rerecord.md).
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `--upstream`, `--record-mode`, `--fork-at`: which calls go to a real
/// (or local) server instead of the recording, and where what it answers
/// is recorded.
#[derive(Debug, Args, Default)]
pub struct LiveArgs {
    /// The OpenAI-, Anthropic- or Gemini-compatible server live calls go to (`https://api.openai.com`,
    /// `http://127.0.0.1:8080`; the API path is appended); keys from OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY.
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// Ask the upstream for this model instead of the scenario's.
    #[arg(long, value_name = "MODEL", requires = "upstream")]
    pub upstream_model: Option<String>,
    /// once: replay only; new: replay while requests match, live from the first divergence; all: every call live.
    #[arg(long, value_enum, default_value_t = RecordModeArg::Once)]
    pub record_mode: RecordModeArg,
    /// Replay the first STEP model calls, then go live (with the strategy or variant given).
    #[arg(long, value_name = "STEP", requires = "upstream")]
    pub fork_at: Option<usize>,
    /// Refuse to start when the batch could make more than N upstream calls (every trial's
    /// recorded exchanges past --fork-at, counted before the first run).
    #[arg(long, value_name = "N", requires = "upstream")]
    pub max_live_calls: Option<u64>,
    /// Write the re-recording here (a batch of one run) instead of NAME.rerecorded.yaml beside the recording.
    #[arg(long, value_name = "PATH", requires = "upstream")]
    pub rerecord_to: Option<PathBuf>,
    /// What is stripped from live exchanges, as `reloop record` strips it.
    #[command(flatten)]
    pub redact: RedactArgs,
}

/// `--record-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RecordModeArg {
    /// Replay only.
    #[default]
    Once,
    /// Replay while requests match; from the first divergence, live and recorded.
    New,
    /// Every call live, recorded afresh.
    All,
}

impl RecordModeArg {
    /// The mock's mode.
    pub fn mode(self) -> reloop_mock::live::RecordMode {
        use reloop_mock::live::RecordMode;
        match self {
            Self::Once => RecordMode::Once,
            Self::New => RecordMode::New,
            Self::All => RecordMode::All,
        }
    }
}

/// `reloop run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenarios and how to run them.
    #[command(flatten)]
    pub batch: BatchArgs,
    /// Where the Parquet reports go.
    #[arg(long, default_value = "reports/latest")]
    pub out: PathBuf,
    /// Label written to every report row, to tell variants apart.
    #[arg(long, default_value = "default")]
    pub variant: String,
    /// After the run, compare with this report (directory or runs.parquet) and judge the gates.
    #[arg(long, value_name = "BASE")]
    pub baseline: Option<PathBuf>,
    /// Gates, markdown and format of the comparison with `--baseline`.
    #[command(flatten)]
    pub decide: DecideArgs,
}

/// How a comparison is judged and shown.
#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The gate file (default: the documented default gates).
    #[arg(long)]
    pub gates: Option<PathBuf>,
    /// Also write a pull-request comment in Markdown here.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// How to print the comparison.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Accept a report without runs on either side (by default exit 2: no
    /// gate can judge nothing).
    #[arg(long)]
    pub allow_empty: bool,
    /// Accept runs of the base missing from the new report (by default
    /// each removed run fails the `runs no_removed` check).
    #[arg(long)]
    pub allow_removed: bool,
    /// Also gate runs an upstream answered live (`live_steps` > 0; by default they are not judged,
    /// being not deterministic).
    #[arg(long)]
    pub gate_live: bool,
}

/// The printed form of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A table per metric, then the runs that moved and the failed gates.
    Table,
    /// One JSON document.
    Json,
}

/// `reloop compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base report: a report directory or a runs.parquet file.
    pub base: PathBuf,
    /// The new report.
    pub new: PathBuf,
    /// How to judge and show it.
    #[command(flatten)]
    pub decide: DecideArgs,
    /// Also write the gate results as JUnit XML here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
}

/// `reloop detectors`.
#[derive(Debug, Args)]
pub struct DetectorsArgs {
    /// A report of a labelled suite (`reloop run scenarios/doom-loops --out DIR`): directory or runs.parquet.
    pub report: PathBuf,
    /// Exit 1 when a detector with labelled runs has precision or recall below this.
    #[arg(long)]
    pub min: Option<f64>,
}

/// `reloop report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The report directory (runs, steps and events .parquet).
    pub dir: PathBuf,
    /// Where the page goes.
    #[arg(long)]
    pub html: PathBuf,
    /// Show the diff against this report, judged by the gates.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// The gate file for the diff (default: the documented default gates).
    #[arg(long, requires = "baseline")]
    pub gates: Option<PathBuf>,
}

/// `reloop export`: at least one of the outputs.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("output").required(true).multiple(true).args(["otlp", "otlp_endpoint", "atif"])))]
pub struct ExportArgs {
    /// The report directory (runs, steps and events .parquet).
    pub report: PathBuf,
    /// Write the runs as OpenTelemetry traces in OTLP/JSON to this file (one trace per run).
    #[arg(long, value_name = "FILE")]
    pub otlp: Option<PathBuf>,
    /// Send the same traces over OTLP/HTTP (JSON) to this collector, e.g. `http://127.0.0.1:4318` (`/v1/traces` is appended).
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// The GenAI semantic conventions the traces are named by: current (gen_ai.provider.name, input tokens with the
    /// cached ones, the cache's reads and writes), or v1.36 (gen_ai.system, the provider's own input count), for a
    /// backend that has not moved on.
    #[arg(long, value_name = "RELEASE", default_value = "current", value_parser = parse_conventions)]
    pub otel_conventions: reloop_report::export::otlp::Conventions,
    /// Write each run as an ATIF trajectory (`SCENARIO[.VARIANT].json`) into this directory.
    #[arg(long, value_name = "DIR")]
    pub atif: Option<PathBuf>,
}

/// `reloop merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Where the merged report goes.
    pub out: PathBuf,
    /// The shard report directories.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
}

/// `reloop sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The scenarios and how to run them.
    #[command(flatten)]
    pub batch: BatchArgs,
    /// Strategies to compare, each as the scenarios tune it: built-in names
    /// (roku, opencode, codex, masking, none, native) or plug-ins' files
    /// (`docs/strategies.md`), e.g. `masking,examples/strategies/masking.py`.
    #[arg(long, value_delimiter = ',', value_name = "NAME|FILE")]
    pub strategies: Vec<reloop_eval::sweep::StrategySpec>,
    /// A YAML file of named variants (strategy plus tuned constants).
    #[arg(long)]
    pub variants: Option<PathBuf>,
    /// Run each built-in-loop scenario over these wire formats instead of
    /// its own (as `name@wire`), e.g. `anthropic,openai-responses` to sweep
    /// `native` on every wire that has it.
    #[arg(long, value_delimiter = ',', value_parser = parse_wire)]
    pub wires: Vec<reloop_agent::WireFormat>,
    /// Where the Parquet reports go.
    #[arg(long, default_value = "reports/sweep")]
    pub out: PathBuf,
    /// Also write a pull-request comment in Markdown here: the verdicts and
    /// the paired comparison of each variant against the first by name.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

/// A pass rate: a number from 0 to 1.
fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!("`{text}` is not a pass rate: give a number from 0 to 1 (0.8 for 80 %)")),
    }
}

/// A wire format by the name scenarios give it (`openai-chat`, ...).
fn parse_wire(name: &str) -> Result<reloop_agent::WireFormat, String> {
    one_of(&reloop_agent::WireFormat::ALL, |wire| wire.as_str(), name, "wire format")
}

/// A release of the GenAI conventions by its `--otel-conventions` name.
fn parse_conventions(name: &str) -> Result<reloop_report::export::otlp::Conventions, String> {
    one_of(&reloop_report::export::otlp::Conventions::ALL, |release| release.as_str(), name, "release of the GenAI conventions")
}

/// The one of `all` that `name_of` calls `name`; else an error naming them all.
fn one_of<T: Copy>(all: &[T], name_of: fn(T) -> &'static str, name: &str, what: &str) -> Result<T, String> {
    all.iter().copied().find(|item| name_of(*item) == name).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|item| name_of(*item)).collect();
        format!("unknown {what}; one of: {}", names.join(", "))
    })
}

/// `reloop serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The recording to replay, or a directory of them (one session each, by file stem).
    #[arg(long, required_unless_present = "scenario", conflicts_with = "scenario")]
    pub recording: Option<PathBuf>,
    /// A scenario: every session name replays its recording afresh, with its
    /// faults and context window. Repeated: session `NAME` replays the
    /// scenario named `NAME` (`/s/NAME/r/RUN` afresh).
    #[arg(long)]
    pub scenario: Vec<PathBuf>,
    /// Print only the first line (the address), not one line per session.
    #[arg(long)]
    pub quiet: bool,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Stream with the recorded latency in real time (default: as fast as possible).
    #[arg(long)]
    pub realtime: bool,
    /// Refuse prompts above this many tokens with the provider's context-length error.
    #[arg(long)]
    pub context_window: Option<u64>,
    /// Send every exchange that has recorded bytes (`raw:`) byte for byte, as
    /// if each said `replay: raw` (a client of another API still gets the parts).
    #[arg(long)]
    pub raw: bool,
    /// Neutral replies report each exchange's recorded usage (its provider
    /// object as is) instead of the server's count, as if the recording said
    /// `reply_usage: recorded`.
    #[arg(long)]
    pub recorded_usage: bool,
    /// Record what clients send and get, one v2 recording and scenario
    /// skeleton per session in this directory (as `reloop record` does).
    #[arg(long, value_name = "DIR")]
    pub capture: Option<PathBuf>,
    /// With `--capture`: overwrite the files of an earlier capture in DIR
    /// (without it, serve refuses to start when DIR holds a `*.yaml` file).
    #[arg(long, requires = "capture")]
    pub force: bool,
    /// With `--capture` or `--upstream`: secrets to strip beyond the default ones.
    #[command(flatten)]
    pub redact: RedactArgs,
    /// Drop a connection that has not sent its request headers within this many seconds.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout_secs: u64,
    /// Drop a connection that has not sent a request's body within this many seconds of its headers.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout_secs: u64,
    /// The largest request body read, in MiB (413 above it); `run` sizes its own mock to the scenario's window.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_body_mib: u64,
    /// Connections served at once; more wait in the kernel's queue.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub max_connections: u64,
    /// Release a session unused for this many seconds (its next request replays afresh).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub session_ttl_secs: u64,
    /// Live sessions at most; a new session beyond it gets 503.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_sessions: u64,
    /// Also log every request as one JSON line into DIR/<session>.jsonl
    /// (status, exchange, tokens, retry, divergence reason); DIR is created.
    #[arg(long, value_name = "DIR")]
    pub log_json: Option<PathBuf>,
    /// Where calls go live (docs/rerecord.md): `https://api.openai.com`, with or without `/v1`; keys from
    /// OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY. Each session that goes live leaves its re-recording in --rerecord-dir.
    #[arg(long, value_name = "URL", requires = "rerecord_dir", conflicts_with = "capture")]
    pub upstream: Option<String>,
    /// Ask the upstream for this model instead of the recording's.
    #[arg(long, value_name = "MODEL", requires = "upstream")]
    pub upstream_model: Option<String>,
    /// With --upstream: new replays while a session's requests match and goes live from its first divergence
    /// (vcrpy's new_episodes); all sends every call live.
    #[arg(long, value_enum, default_value_t = RecordModeArg::New, requires = "upstream")]
    pub record_mode: RecordModeArg,
    /// With --upstream: each session that went live is written here as NAME.recording.yaml (the exchanges it
    /// replayed, then the live ones), rewritten after each live call, so a stop at any time loses none.
    #[arg(long, value_name = "DIR", requires = "upstream")]
    pub rerecord_dir: Option<PathBuf>,
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
