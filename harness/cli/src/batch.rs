//! What `reloop run` and `reloop sweep` share: the batch validated before
//! anything runs, `--out` checked before the first run, then the runs with a
//! progress bar, each finished run's rows streamed to the report and only
//! its summary kept, the report published as one set, and the exit code.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use reloop_agent::WireFormat;
use reloop_agent::context::native::NATIVE_WIRES;
use reloop_agent::price_table::{self, PriceTable};
use reloop_eval::report::{FinishedRun, ReportStream, RunKey, table_batches, table_schemas, write_atomically};
use reloop_eval::sweep::RunVariant;
use reloop_eval::{Outcome, Plan, RunOptions, RunSummary, SharedNames, run_all};
use reloop_report::trials::TrialVerdict;

use crate::app::{BatchArgs, LiveArgs, RecordModeArg};
use crate::{exit_code, junit};
use reloop_eval::scenario::LiveSettings;
use reloop_mock::live::{Trigger, Upstream};
use reloop_recording::capture::Redaction;

/// Everything checked before the first run: the `--prices` table loaded,
/// every scenario under the batch's paths validated (every error printed), then `out` created and written to.
/// `Err` is the exit code for bad input.
/// `cancel` (the first Ctrl-C) also ends the live calls in flight.
pub fn prepare(batch: &BatchArgs, variants: Vec<RunVariant>, wires: Option<&[WireFormat]>, out: &Path, cancel: &Arc<AtomicBool>) -> Result<Prepared, i32> {
    install_prices(batch.prices.as_deref())?;
    let shard = batch.shard.map(|shard| shard.resolve()).transpose().map_err(|error| {
        eprintln!("error: {error}");
        exit_code::BAD_INPUT
    })?;
    let paths = &batch.paths;
    let mut plan = Plan::validate_over(paths, variants, wires, jobs(batch))
        .map_err(|errors| {
            for error in errors {
                eprintln!("error: {error}");
            }
            exit_code::BAD_INPUT
        })?
        .repeated(batch.repeat);
    if let Some(shard) = shard {
        plan.files.retain(|file| shard.contains(&file.path));
    }
    for skipped in &plan.skipped {
        eprintln!("{skipped}");
    }
    match plan.skipped_native() {
        0 => {}
        runs => eprintln!("note: {runs} native run(s) left out: their wire has no provider-side context management (native runs on {NATIVE_WIRES})"),
    }
    let live = live_settings(&batch.live, &plan, cancel).map_err(|error| {
        eprintln!("error: {error}");
        exit_code::BAD_INPUT
    })?;
    if live.is_some() {
        crate::live_calls::check(&plan, &batch.live).map_err(|error| {
            eprintln!("error: {error}");
            exit_code::BAD_INPUT
        })?;
    }
    let every = Duration::from_secs(batch.checkpoint_secs);
    let opened = if batch.resume.is_some() {
        ReportStream::resume(out, table_schemas(), every)
    } else {
        ReportStream::open(out, table_schemas(), every).map(|report| (report, BTreeMap::new()))
    };
    let (report, resumed) = opened.map_err(|error| {
        if error.kind() == std::io::ErrorKind::WouldBlock {
            // Another batch holds `OUT.lock`; the message names its PID.
            eprintln!("error: --out: {error}");
        } else {
            eprintln!("error: --out {}: cannot write reports there: {error}", out.display());
        }
        exit_code::BAD_INPUT
    })?;
    let plan = plan.resuming(resumed.keys().cloned());
    if batch.resume.is_some() {
        eprintln!("resuming: {} runs finished in {} already, {} to run", resumed.len(), out.display(), plan.runs());
    }
    Ok(Prepared { plan, report, live, resumed })
}

/// A batch checked and ready to run: its plan, its report opened, its
/// live settings (`--upstream`), built once, and the runs it resumes.
pub struct Prepared {
    pub plan: Plan,
    pub report: ReportStream,
    pub live: Option<Arc<LiveSettings>>,
    /// With `--resume`, the runs a cut-short batch finished (their rows
    /// already in the report); the plan leaves them out.
    pub resumed: BTreeMap<RunKey, FinishedRun>,
}

/// The batch's live settings from `--upstream` and its companions, `None`
/// without an upstream; `Err` says what is wrong (a mode that needs an
/// upstream without one, a URL that is not http(s), a bad pattern, one
/// `--rerecord-to` for a batch of several runs or naming the recording
/// replayed), all before anything is sent upstream.
fn live_settings(args: &LiveArgs, plan: &Plan, cancel: &Arc<AtomicBool>) -> Result<Option<Arc<LiveSettings>>, String> {
    let runs = plan.runs();
    let Some(url) = &args.upstream else {
        return match args.record_mode {
            RecordModeArg::Once => Ok(None),
            mode => Err(format!("--record-mode {}: needs --upstream URL (where the live calls go)", if mode == RecordModeArg::New { "new" } else { "all" })),
        };
    };
    if args.record_mode == RecordModeArg::Once && args.fork_at.is_none() {
        return Err("--upstream: nothing would go live; give --record-mode new|all or --fork-at STEP".into());
    }
    if args.rerecord_to.is_some() && runs > 1 {
        return Err(format!("--rerecord-to: the batch makes {runs} runs, and each writes its own re-recording; leave it out (each goes beside its recording)"));
    }
    if let (Some(path), [file]) = (&args.rerecord_to, plan.files.as_slice()) {
        reloop_eval::live_run::check_rerecord_to(path, &file.path)?;
    }
    let redaction = Redaction::new(&args.redact.redact_header, &args.redact.redact_body)?;
    let trigger = Trigger { mode: args.record_mode.mode(), fork_at: args.fork_at };
    let upstream = Upstream::new(url, args.upstream_model.clone(), trigger, redaction)?.interrupted_by(Arc::clone(cancel));
    Ok(Some(Arc::new(LiveSettings { upstream, rerecord_to: args.rerecord_to.clone() })))
}

/// Installs the `--prices` table for the whole process; a file that does
/// not parse is bad input, named with its line and field.
fn install_prices(path: Option<&Path>) -> Result<(), i32> {
    let Some(path) = path else { return Ok(()) };
    let table = reloop_eval::yaml::load::<PriceTable>(path).map_err(|error| {
        eprintln!("error: {error}");
        exit_code::BAD_INPUT
    })?;
    // A second batch in the same process keeps the first table: one process, one price list.
    let _ = price_table::install(table);
    Ok(())
}

/// How many runs go at once (`--jobs`, else one per core); the batch's
/// files are read and checked on as many threads.
fn jobs(batch: &BatchArgs) -> usize {
    batch.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A finished batch: its runs' summaries in plan order, their verdicts
/// over trials (the resumed runs' included), its wall time, and why its
/// report could not be written, if it could not (a full disk, a file-size
/// limit): the table of what finished is printed all the same.
pub struct Finished {
    pub runs: Vec<RunSummary>,
    pub verdicts: Vec<TrialVerdict>,
    pub wall: Duration,
    pub unwritten: Option<String>,
    /// How many runs were resumed, and whether one of them was reloop's failure.
    pub resumed: (usize, bool),
}

impl Finished {
    /// `reports: OUT` once the report is written; nothing when it is not.
    pub fn reports_line(&self, out: &Path) -> String {
        match (&self.unwritten, self.resumed.0) {
            (Some(_), _) => String::new(),
            (None, 0) => format!("reports: {}\n", out.display()),
            (None, resumed) => format!("reports: {} (with the {resumed} runs resumed, not in the table above)\n", out.display()),
        }
    }

    /// The exit code: a report that could not be written is reloop's own
    /// failure (said here), else [`exit_code_of`].
    pub fn exit_code(&self, planned: usize, cancel: &AtomicBool) -> i32 {
        match &self.unwritten {
            Some(message) => {
                eprintln!("error: {message}; the previous report (if any) is as it was");
                exit_code::INTERNAL
            }
            None if self.resumed.1 && !cancel.load(Ordering::SeqCst) => exit_code::INTERNAL,
            None => exit_code_of(&self.runs, &self.verdicts, planned, cancel),
        }
    }
}

/// Runs `plan` with a progress bar, streaming each finished run to
/// `report`, then publishes it (and JUnit when asked).
pub fn execute(prepared: Prepared, batch: &BatchArgs, cancel: &Arc<AtomicBool>) -> anyhow::Result<(Plan, Finished)> {
    let Prepared { plan, report, live, resumed } = prepared;
    let started = std::time::Instant::now();
    let jobs = jobs(batch);
    let bar = ProgressBar::new(plan.runs() as u64).with_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("static template"));
    let options = RunOptions { jobs, cancel: Arc::clone(cancel), live };
    // Room for every run's summary at once: grown by doubling, the vector
    // held up to twice what it needed, and both halves while it moved.
    let summaries = Vec::with_capacity(plan.runs());
    let sink = Mutex::new(Sink { report, failed: None, summaries, unpriced: BTreeSet::new() });
    let names = SharedNames::default();
    run_all(&plan, &options, &|index, run| {
        bar.set_message(reloop_report::escape::terminal(&run.scenario));
        bar.inc(1);
        let summary = RunSummary::of(&run, &names);
        let unpriced = (!price_table::is_priced(&run.model)).then(|| run.model.clone());
        let batches = table_batches(std::slice::from_ref(&run));
        drop(run);
        let mut sink = sink.lock().expect("report sink poisoned");
        if sink.failed.is_none()
            && let Err(error) = batches.map_err(std::io::Error::other).and_then(|batches| sink.report.append(&batches))
        {
            // The report cannot hold more runs: stop starting them.
            sink.failed = Some(error);
            cancel.store(true, Ordering::SeqCst);
        }
        sink.summaries.push((index, summary));
        sink.unpriced.extend(unpriced);
    })?;
    bar.finish_and_clear();
    let Sink { report, failed, mut summaries, unpriced } = sink.into_inner().expect("report sink poisoned");
    for model in unpriced {
        eprintln!("warning: model `{model}` is not in the price table; its runs have no estimated_cost_usd (add a row with --prices FILE)");
    }
    let mut unwritten = match failed {
        Some(error) => {
            report.abandon();
            Some(format!("cannot write the report: {error}"))
        }
        None => report.publish().err().map(|error| format!("cannot write the report: {error}")),
    };
    // Indices are distinct, so the unstable sort gives the same order without
    // the stable sort's scratch copy of every summary.
    summaries.sort_unstable_by_key(|(index, _)| *index);
    let runs: Vec<RunSummary> = summaries.into_iter().map(|(_, summary)| summary).collect();
    // One line per session: every strategy's run of it shares one fit.
    let refused: BTreeMap<&str, &str> = runs.iter().filter_map(|r| Some((&*r.scenario, r.texts().token_fit_refusal.as_deref()?))).collect();
    for (scenario, reason) in refused {
        eprintln!("warning: {scenario}: the provider-token fit is not credible ({reason}); provider_tokens_per_o200k is left empty");
    }
    let live: u64 = runs.iter().map(|r| u64::from(r.figures.live_steps)).sum();
    if live > 0 {
        let went = runs.iter().filter(|r| r.figures.live_steps > 0).count();
        eprintln!(
            "note: {live} calls of {went} runs were answered live by the upstream: those runs are not deterministic (steps.parquet `live`, runs.parquet `live_steps`)"
        );
    }
    let wall = started.elapsed();
    let verdicts = crate::verdicts::of(&runs, &resumed, batch.min_pass_rate);
    if let Some(path) = batch.junit.as_ref().filter(|_| unwritten.is_none()) {
        let written = write_atomically(path, |file| file.write_all(junit::render(&runs, &verdicts, &[], wall).as_bytes()));
        unwritten = written.err().map(|error| format!("{}: cannot write the JUnit report: {error}", path.display()));
    }
    let resumed = (resumed.len(), resumed.values().any(|run| run.outcome == Outcome::HarnessError));
    Ok((plan, Finished { runs, verdicts, wall, unwritten, resumed }))
}

/// Where finished runs go: the report, and the summaries kept.
struct Sink {
    report: ReportStream,
    failed: Option<std::io::Error>,
    summaries: Vec<(usize, RunSummary)>,
    /// Models the price table does not know, warned about at the end.
    unpriced: BTreeSet<String>,
}

/// The exit code of a finished batch, `run`'s and `sweep`'s alike:
/// interrupted, harness error, 1 when a scenario failed its verdict over
/// its trials (a skipped run is not a failure), else 0.
pub fn exit_code_of(runs: &[RunSummary], verdicts: &[TrialVerdict], planned: usize, cancel: &AtomicBool) -> i32 {
    if cancel.load(Ordering::SeqCst) {
        eprintln!("interrupted: {} of {planned} runs finished", runs.len());
        return exit_code::INTERRUPTED;
    }
    if runs.iter().any(|r| r.outcome == Outcome::HarnessError) {
        return exit_code::INTERNAL;
    }
    if verdicts.iter().all(TrialVerdict::holds) { exit_code::SUCCESS } else { exit_code::EXPECTATIONS_FAILED }
}
