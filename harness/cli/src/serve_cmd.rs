//! `reloop serve`: the mock server alone, for outside clients (an SDK, an
//! agent CLI). Loopback only, bounded (header timeout, connection and
//! session limits); runs until the first Ctrl-C, SIGTERM or SIGHUP, then
//! finishes the exchanges under way and exits 130.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::time::Duration;

use reloop_mock::{
    ConnectionLimits, MockServer, NoPacer, Pacer, RealPacer, Recording, Registry, SessionFactory, SessionLimits, recording_factory, scenario_factory,
};

use reloop_mock::json_log::JsonLog;
use reloop_recording::{Exchange, ReplayMode, ReplyUsage};

use reloop_eval::InputError;
use reloop_files::kind::{FileKind, Skipped, files_below};
use reloop_import::capture_writer::{CaptureWriter, Target};
use reloop_mock::record::{RecordProxy, UpstreamBase};
use reloop_recording::capture::{Redaction, url_shown};
use reloop_recording::session_path;

use crate::app::ServeArgs;
use crate::exit_code;
use crate::interrupt::Interrupt;
use crate::record_cmd::{GRACE_AFTER_INTERRUPT, record_until_interrupted};

/// Runs the command; returns the exit code.
pub fn run(args: ServeArgs, interrupt: &Interrupt) -> anyhow::Result<i32> {
    let pacer: Arc<dyn Pacer> = if args.realtime { Arc::new(RealPacer::default()) } else { Arc::new(NoPacer) };
    let mut skipped_scenarios = None;
    let (source, names, factory) = match (args.scenario.as_slice(), &args.recording) {
        ([], None) => anyhow::bail!("give --recording or --scenario"),
        ([], Some(path)) => match load_recordings(path) {
            Ok((recordings, skipped)) => {
                skipped_scenarios = skipped;
                let recordings: HashMap<String, Arc<Recording>> =
                    recordings.into_iter().map(|(name, recording)| (name, Arc::new(as_asked(&args, recording)))).collect();
                let mut names: Vec<String> = recordings.keys().cloned().collect();
                names.sort();
                (path.display().to_string(), names, recording_factory(recordings, pacer, args.context_window))
            }
            Err(errors) => return Ok(bad_input(errors)),
        },
        (files, _) => match load_scenarios(files) {
            Ok(scenarios) => {
                let names = scenarios.iter().map(|scenario| scenario.name.clone()).collect();
                let source = match files {
                    [file] => file.display().to_string(),
                    _ => format!("{} scenarios", files.len()),
                };
                (source, names, scenarios_factory(&args, scenarios, &pacer))
            }
            Err(errors) => return Ok(bad_input(errors)),
        },
    };
    let sessions =
        SessionLimits { idle_ttl: Duration::from_secs(args.session_ttl_secs), max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX) };
    let connections = ConnectionLimits {
        header_read_timeout: Duration::from_secs(args.header_timeout_secs),
        body_read_timeout: Duration::from_secs(args.body_timeout_secs),
        max_body_bytes: usize::try_from(args.max_body_mib.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX),
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
    };
    let mut registry = Registry::serving(factory, sessions);
    if let Some(dir) = &args.log_json {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: {}: cannot create the --log-json folder: {e}", dir.display());
            return Ok(exit_code::BAD_INPUT);
        }
        registry = registry.with_json_log(JsonLog::new(dir));
    }
    let mut rerecord = None;
    match crate::serve_live::live_of(&args, interrupt.flag()) {
        Ok(None) => {}
        Ok(Some((upstream, writer))) => {
            let (sink, went_live) = tokio::sync::mpsc::unbounded_channel();
            registry = registry.with_live(upstream).with_live_sink(sink);
            rerecord = Some((writer, went_live));
        }
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    }
    let registry = Arc::new(registry);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    let capture = args.capture.clone().map(|dir| {
        let redaction = Redaction::new(&args.redact.redact_header, &args.redact.redact_body)?;
        CaptureWriter::new(Target::PerSession(dir), redaction, args.force)
    });
    let capture = match capture.transpose() {
        Ok(capture) => capture,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    runtime.block_on(async {
        // With --capture, clients talk to a recording proxy on the port asked
        // for, and the server listens behind it on a free one.
        let server = MockServer::start_with(if capture.is_some() { 0 } else { args.port }, Arc::clone(&registry), connections).await?;
        // The writer ends once the registry, which holds the sink, is gone.
        let writing = rerecord.map(|(writer, went_live)| tokio::spawn(writer.run(went_live)));
        let captured = match capture {
            Some(writer) => {
                let (sink, observed) = tokio::sync::mpsc::unbounded_channel();
                let proxy = RecordProxy::start(args.port, &UpstreamBase::http(server.addr()), sink).await?;
                Some((proxy, observed, writer))
            }
            None => None,
        };
        let addr = captured.as_ref().map_or(server.addr(), |(proxy, _, _)| proxy.addr());
        println!("reloop serve: {source} on http://{addr}");
        if let Some(skipped) = &skipped_scenarios {
            println!("{skipped}");
        }
        if !args.quiet {
            print_sessions(addr, &names, &args);
        }
        match captured {
            Some((proxy, observed, writer)) => record_until_interrupted(proxy, observed, writer, interrupt).await?,
            None => {
                interrupt.requested().await;
                server.stop(GRACE_AFTER_INTERRUPT).await;
            }
        }
        if let Some(writing) = writing {
            drop(registry);
            // Calls still in flight hold the registry no longer than the grace.
            let _ = tokio::time::timeout(GRACE_AFTER_INTERRUPT, writing).await;
        }
        Ok(exit_code::INTERRUPTED)
    })
}

/// The recording as the flags ask: `--raw` replays recorded bytes,
/// `--recorded-usage` reports recorded usage.
fn as_asked(args: &ServeArgs, recording: Recording) -> Recording {
    let recording = if args.raw { replay_raw(recording) } else { recording };
    if args.recorded_usage { Recording { reply_usage: ReplyUsage::Recorded, ..recording } } else { recording }
}

/// `--raw`: every exchange with recorded bytes replays them.
fn replay_raw(recording: Recording) -> Recording {
    let exchanges = recording
        .exchanges
        .into_iter()
        .map(|exchange| match exchange.raw {
            Some(_) => Exchange { replay: ReplayMode::Raw, ..exchange },
            None => exchange,
        })
        .collect();
    Recording { exchanges, ..recording }
}

/// The sessions, one line each with its OpenAI base URL, under one line
/// saying how the other clients and fresh replays address them.
fn print_sessions(addr: std::net::SocketAddr, names: &[String], args: &ServeArgs) {
    let root = format!("http://{addr}");
    println!(
        "any API key; a log line per request on stderr; Ctrl-C stops. Base URLs: OpenAI {root}/s/NAME/v1, Anthropic and Gemini {root}/s/NAME; /s/NAME/r/RUN/… replays afresh"
    );
    if let [scenario] = args.scenario.as_slice() {
        println!("every session name replays {} afresh, with its faults", scenario.display());
    }
    if let Some(dir) = &args.capture {
        println!("capturing every session to {}/NAME.recording.yaml (and NAME.yaml)", dir.display());
    }
    if let Some(dir) = &args.log_json {
        println!("JSON log: one file per session in {}", dir.display());
    }
    if let (Some(upstream), Some(dir)) = (&args.upstream, &args.rerecord_dir) {
        let from = if args.record_mode == crate::app::RecordModeArg::All { "every call" } else { "from a session's first divergence" };
        println!("live {from} to {}; each session that goes live is written to {}/NAME.recording.yaml", url_shown(upstream), dir.display());
    }
    let width = names.iter().map(|name| name.chars().count()).max().unwrap_or(0);
    for name in names {
        println!("  {name:<width$}  {}", MockServer::base_url_at(addr, name));
    }
}

fn bad_input(errors: Vec<InputError>) -> i32 {
    for error in errors {
        eprintln!("error: {error}");
    }
    exit_code::BAD_INPUT
}

/// Every `--scenario` file, each named once.
fn load_scenarios(files: &[PathBuf]) -> Result<Vec<reloop_eval::ScenarioFile>, Vec<InputError>> {
    let mut scenarios: Vec<reloop_eval::ScenarioFile> = Vec::with_capacity(files.len());
    let mut errors = Vec::new();
    for file in files {
        match reloop_eval::ScenarioFile::load(file) {
            Ok(scenario) => match scenarios.iter().find(|other| other.name == scenario.name) {
                Some(other) => errors.push(InputError::file(
                    file,
                    format!("scenario name `{}` is also {}'s: each --scenario needs its own name", scenario.name, other.file.display()),
                )),
                None => scenarios.push(scenario),
            },
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() { Ok(scenarios) } else { Err(errors) }
}

/// One scenario: every session name replays it (its faults, its context
/// window). Several: session `NAME` (or `NAME/r/RUN`) replays scenario `NAME`.
fn scenarios_factory(args: &ServeArgs, scenarios: Vec<reloop_eval::ScenarioFile>, pacer: &Arc<dyn Pacer>) -> SessionFactory {
    let mut served: HashMap<String, SessionFactory> = scenarios
        .into_iter()
        .map(|scenario| {
            let window = args.context_window.or(Some(scenario.spec.context_window));
            let recording =
                if args.raw || args.recorded_usage { Arc::new(as_asked(args, (*scenario.recording).clone())) } else { Arc::clone(&scenario.recording) };
            (scenario.name.clone(), scenario_factory(recording, scenario.spec.faults.clone(), Arc::clone(pacer), window))
        })
        .collect();
    if served.len() == 1 {
        return served.drain().map(|(_, factory)| factory).next().expect("one scenario");
    }
    Box::new(move |name: &str| served.get(session_path::recording_of(name)).and_then(|factory| factory(name)))
}

/// Recordings by session name.
type Recordings = HashMap<String, Recording>;

/// The recordings of a file or of every `*.yaml` in a directory, by
/// session name (the file's stem without `.recording`), with every error
/// reported. A directory's scenarios (an import's output, a capture's
/// skeletons) are skipped, and counted; a scenario named on its own is an
/// error.
fn load_recordings(path: &Path) -> Result<(Recordings, Option<Skipped>), Vec<InputError>> {
    let (files, skipped) = if path.is_dir() {
        files_below(path, FileKind::Recording, false).map_err(|error| vec![error])?
    } else if path.is_file() && FileKind::of(path) == FileKind::Scenario && reloop_eval::yaml::load::<Recording>(path).is_err() {
        return Err(vec![InputError::file(path, "is a scenario, not a recording (it has no `format: reloop.recording/...` tag); serve it with --scenario")]);
    } else {
        (vec![path.to_owned()], None)
    };
    let mut recordings = HashMap::new();
    let mut errors = Vec::new();
    for file in files {
        match reloop_eval::yaml::load_checked::<Recording>(&file, reloop_eval::validate_settings::check_recording) {
            Ok(recording) => {
                let name = session_path::of_file(&file);
                if recordings.insert(name.clone(), recording).is_some() {
                    errors.push(InputError::file(&file, format!("session `{name}` is already served from another file of {}", path.display())));
                }
            }
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() { Ok((recordings, skipped)) } else { Err(errors) }
}
