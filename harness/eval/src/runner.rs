//! Running scenarios: each in its own single-threaded tokio runtime with its
//! own mock server on an ephemeral loopback port and a virtual clock, runs
//! spread across cores with rayon. A batch loads each scenario file when its
//! runs start and drops it when they end; the file's wires and variants share
//! it. The runner hands each finished run to a callback, which owns it from
//! then on, and knows nothing of tables, bars or Parquet.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use reloop_agent::{AgentLoop, Clock, LoopDeps, LoopSettings, Outcome, ProviderClient, ProviderConfig, SharedClock, SystemPromptSource, VirtualClock};

use crate::collect::{Finished, collect};
use crate::fixture_tools::FixtureTools;
use crate::plan::{Plan, PlannedFile};
use crate::result::{RunMetrics, RunReport};
use crate::scenario::{LastRecording, Scenario, ScenarioFile};
use crate::script::{ScriptedApprovals, ScriptedUser};
use crate::sweep::RunVariant;
use reloop_agent::context::StrategyName;
use reloop_agent::grounding::Workspace;
use reloop_wire::context_management::ContextManagement;

/// Real time one run may take before it is abandoned as a harness error.
/// Virtual time makes every healthy run take milliseconds.
pub const RUN_WALL_LIMIT: Duration = Duration::from_secs(120);

/// The API key the loop sends; the mock accepts anything.
const REPLAY_API_KEY: &str = "sk-reloop-replay";

/// How to run a batch.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Runs in parallel.
    pub jobs: usize,
    /// Set to stop starting new runs (Ctrl-C); finished runs are kept.
    pub cancel: Arc<AtomicBool>,
    /// Where calls that go live are sent, if anywhere.
    pub live: Option<Arc<crate::scenario::LiveSettings>>,
}

/// Receives each finished run with its position in the plan's order
/// (file, then run, then variant), which a reader may sort by.
pub type OnFinished<'a> = &'a (dyn Fn(usize, RunReport) + Sync);

/// Runs every planned run, handing each report to `on_finished` as it
/// completes (in completion order). Stops starting runs once
/// `options.cancel` is set; runs in flight finish and are handed over.
pub fn run_all(plan: &Plan, options: &RunOptions, on_finished: OnFinished<'_>) -> Result<(), rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(options.jobs.max(1)).build()?;
    let firsts: Vec<usize> = plan
        .files
        .iter()
        .scan(0, |next, file| {
            let first = *next;
            *next += plan.runs_of(file).len() * plan.trials as usize;
            Some(first)
        })
        .collect();
    let last = LastRecording::default();
    pool.install(|| {
        plan.files.par_iter().zip(firsts).for_each(|(file, first)| run_file(plan, file, &last, first, options, on_finished));
    });
    Ok(())
}

/// Loads `planned` (its recording from `last` when the file before named the
/// same) and runs each of its runs under each variant, sharing the loaded
/// file between them; it is dropped when the last one ends. `first` is the
/// plan position of its first run; its runs follow in order, each trial
/// after the one before.
fn run_file(plan: &Plan, planned: &PlannedFile, last: &LastRecording, first: usize, options: &RunOptions, on_finished: OnFinished<'_>) {
    let cancelled = || options.cancel.load(Ordering::SeqCst);
    if cancelled() {
        return;
    }
    let runs = plan.runs_of(planned);
    if runs.iter().all(|((name, _), variant)| (0..plan.trials).all(|trial| plan.is_finished(name, variant, trial))) {
        return;
    }
    let file = ScenarioFile::load_sharing(&planned.path, last);
    // Each trial is a run of its own: its own mock server and session, its
    // own workspace, in parallel with the others.
    let trials: Vec<(usize, u64)> = (0..runs.len()).flat_map(|run| (0..plan.trials).map(move |trial| (run, trial))).collect();
    trials.par_iter().enumerate().for_each(|(index, &(run, trial))| {
        let ((name, wire), variant) = runs[run];
        if cancelled() || plan.is_finished(name, variant, trial) {
            return;
        }
        let mut report = match &file {
            Ok(file) => run_cancellable(
                &Scenario {
                    variant: variant.name().to_owned(),
                    loop_settings: variant.apply(&file.spec.loop_settings),
                    live: options.live.clone(),
                    ..file.run(name.clone(), *wire)
                },
                &options.cancel,
            ),
            Err(error) => unloadable(planned, name, *wire, variant, &format!("the scenario changed since it was checked: {error}")),
        };
        report.trial = trial;
        on_finished(first + index, report);
    });
}

/// The report of a run whose scenario could not be loaded again.
fn unloadable(planned: &PlannedFile, name: &str, wire: reloop_agent::WireFormat, variant: &RunVariant, error: &str) -> RunReport {
    RunReport {
        scenario: name.to_owned(),
        scenario_file: planned.path.display().to_string(),
        variant: variant.name().to_owned(),
        trial: 0,
        min_pass_rate: None,
        strategy: String::new(),
        wire: wire.as_str().to_owned(),
        model: String::new(),
        system_under_test: String::new(),
        agent_exit_code: None,
        source: None,
        outcome: Outcome::HarnessError,
        passed: false,
        failed_expectations: vec![format!("harness_error: {error}")],
        final_answer: None,
        error: Some(error.to_owned()),
        metrics: RunMetrics::default(),
        steps: Vec::new(),
        events: Vec::new(),
        divergences: Vec::new(),
    }
}

/// Runs one scenario to its report. Never panics: a failure of reloop itself
/// becomes outcome `harness_error`.
pub fn run_scenario(scenario: &Scenario) -> RunReport {
    run_cancellable(scenario, &AtomicBool::new(false))
}

/// As [`run_scenario`]; a black-box agent is killed once `cancel` is set
/// (the built-in loop's virtual time makes its runs too short to matter).
pub fn run_cancellable(scenario: &Scenario, cancel: &AtomicBool) -> RunReport {
    let wall = Instant::now();
    let attempt = std::panic::catch_unwind(AssertUnwindSafe(|| -> Result<RunReport, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().map_err(|e| format!("cannot start a runtime: {e}"))?;
        runtime.block_on(async {
            if let Some(agent) = &scenario.spec.agent {
                // The agent's own `timeout_s` bounds it, and is reported as such.
                return crate::black_box::run(scenario, agent, cancel, wall).await;
            }
            tokio::time::timeout(RUN_WALL_LIMIT, replay(scenario, wall))
                .await
                .map_err(|_| format!("the run took more than {} s of real time", RUN_WALL_LIMIT.as_secs()))?
        })
    }));
    let error = match attempt {
        Ok(Ok(report)) => return report,
        Ok(Err(error)) => error,
        Err(panic) => {
            let text = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()));
            format!("panic: {}", text.unwrap_or_default())
        }
    };
    harness_error(scenario, error, wall)
}

/// What `strategy: native` asks the provider for on the scenario's wire.
fn native_context(scenario: &Scenario) -> Option<ContextManagement> {
    let settings = &scenario.loop_settings;
    settings.strategy.is(StrategyName::Native).then(|| settings.strategies.native.request(scenario.wire, settings.context_window)).flatten()
}

async fn replay(scenario: &Scenario, wall: Instant) -> Result<RunReport, String> {
    let clock = VirtualClock::new();
    let shared: SharedClock = Arc::new(clock.clone());
    let (server, session) = crate::run_mock::start_mock(scenario, &shared).await?;

    let client = ProviderClient::new(
        ProviderConfig {
            base_url: server.session_base_url("run"),
            api_key: REPLAY_API_KEY.to_owned(),
            wire: scenario.wire,
            model: scenario.spec.model.clone(),
            cache_breakpoints: scenario.loop_settings.cache_breakpoints.clone(),
            context_management: native_context(scenario),
        },
        Arc::clone(&shared),
    )
    .map_err(|e| e.to_string())?;
    let workspace = scenario.spec.workspace_root.clone().map_or(Workspace::Virtual, Workspace::VirtualAt);
    let tools = FixtureTools::in_workspace(scenario.spec.tools.clone(), workspace);
    let mut user = ScriptedUser::new(&scenario.spec);
    let mut approvals = ScriptedApprovals::new(&scenario.spec);
    let (events_tx, mut events_rx) = tokio::sync::mpsc::unbounded_channel();
    // A plug-in strategy runs in the scenario's folder.
    let plugin_dir = scenario.file.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let state = AgentLoop::new(LoopDeps {
        client,
        settings: LoopSettings { plugin_dir: plugin_dir.to_owned(), ..scenario.loop_settings.clone() },
        system_prompt: scenario,
        tools: &tools,
        user: &mut user,
        approvals: &mut approvals,
        clock: Arc::clone(&shared),
        events: events_tx,
    })
    .run(&scenario.spec.task)
    .await;

    let mut events = Vec::new();
    while let Ok(event) = events_rx.try_recv() {
        events.push(event);
    }
    let mut report = collect(Finished { scenario, state, events, session: &session, virtual_ms: clock.now_ms(), wall_ms: elapsed_ms(wall) });
    crate::live_run::finish(scenario, &session, &mut report, None);
    Ok(report)
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn harness_error(scenario: &Scenario, error: String, wall: Instant) -> RunReport {
    let mut report = RunReport::of(scenario, Outcome::HarnessError);
    report.failed_expectations = vec![format!("harness_error: {error}")];
    report.error = Some(error);
    report.metrics.wall_ms = elapsed_ms(wall);
    report
}

impl SystemPromptSource for Scenario {
    fn system_prompt(&self, step: u32) -> String {
        self.system_prompt_at(step).to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn a_scenario_gone_since_it_was_checked_is_a_harness_error_per_run_not_a_lost_run() {
        let dir = tempfile::tempdir().unwrap();
        let planned = PlannedFile { path: dir.path().join("gone.yaml"), runs: vec![("gone".into(), reloop_agent::WireFormat::Anthropic)] };
        let plan = Plan {
            files: vec![planned],
            variants: vec![RunVariant::Label("a".into()), RunVariant::Label("b".into())],
            skipped: Vec::new(),
            trials: 1,
            finished: Default::default(),
        };
        let options = RunOptions { jobs: 1, cancel: Arc::default(), live: None };
        let reports = Mutex::new(Vec::new());
        run_all(&plan, &options, &|index, report| reports.lock().unwrap().push((index, report))).unwrap();
        let mut reports = reports.into_inner().unwrap();
        reports.sort_by_key(|(index, _)| *index);
        let labels: Vec<(usize, &str, &str)> = reports.iter().map(|(i, r)| (*i, r.variant.as_str(), r.wire.as_str())).collect();
        assert_eq!(labels, [(0, "a", "anthropic"), (1, "b", "anthropic")]);
        for (_, report) in &reports {
            assert_eq!(report.outcome, Outcome::HarnessError);
            assert!(report.error.as_deref().unwrap().contains("changed since it was checked"), "{:?}", report.error);
        }
    }
}
