//! `reloop serve`: the mock server alone, for outside clients (an SDK, an
//! agent CLI). Loopback only, bounded (header timeout, connection and
//! session limits); runs until Ctrl-C.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use std::time::Duration;

use reloop_mock::{
    ConnectionLimits, DEFAULT_SESSION, MockServer, NoPacer, Pacer, RealPacer, Recording, Registry, SessionLimits, recording_factory,
    scenario_factory,
};

use reloop_mock::json_log::JsonLog;
use reloop_mock::recording::{Exchange, ReplayMode, ReplyUsage};

use reloop_eval::InputError;
use reloop_files::kind::{FileKind, Skipped, files_below, session_name};
use reloop_import::capture_writer::{CaptureWriter, Target};
use reloop_mock::record::{RecordProxy, Redaction};

use crate::app::ServeArgs;
use crate::record_cmd::record_until_ctrl_c;
use crate::exit_code;

/// Runs the command; returns the exit code.
pub fn run(args: ServeArgs) -> anyhow::Result<i32> {
    let pacer: Arc<dyn Pacer> = if args.realtime { Arc::new(RealPacer::default()) } else { Arc::new(NoPacer) };
    let mut skipped_scenarios = None;
    let (source, names, factory) = match (&args.scenario, &args.recording) {
        (Some(file), _) => match reloop_eval::ScenarioFile::load(file) {
            Ok(scenario) => {
                let window = args.context_window.or(Some(scenario.spec.context_window));
                let recording = if args.raw || args.recorded_usage {
                    Arc::new(as_asked(&args, (*scenario.recording).clone()))
                } else {
                    Arc::clone(&scenario.recording)
                };
                let factory = scenario_factory(recording, scenario.spec.faults.clone(), pacer, window);
                (file.clone(), vec![scenario.name.clone()], factory)
            }
            Err(error) => {
                eprintln!("error: {error}");
                return Ok(exit_code::BAD_INPUT);
            }
        },
        (None, Some(path)) => match load_recordings(path) {
            Ok((recordings, skipped)) => {
                skipped_scenarios = skipped;
                let recordings: HashMap<String, Arc<Recording>> = recordings
                    .into_iter()
                    .map(|(name, recording)| (name, Arc::new(as_asked(&args, recording))))
                    .collect();
                let mut names: Vec<String> = recordings.keys().cloned().collect();
                names.sort();
                (path.clone(), names, recording_factory(recordings, pacer, args.context_window))
            }
            Err(errors) => {
                for error in errors {
                    eprintln!("error: {error}");
                }
                return Ok(exit_code::BAD_INPUT);
            }
        },
        (None, None) => anyhow::bail!("give --recording or --scenario"),
    };
    let sessions = SessionLimits {
        idle_ttl: Duration::from_secs(args.session_ttl_secs),
        max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
    };
    let connections = ConnectionLimits {
        header_read_timeout: Duration::from_secs(args.header_timeout_secs),
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
        let server = MockServer::start_with(if capture.is_some() { 0 } else { args.port }, registry, connections).await?;
        let captured = match capture {
            Some(writer) => {
                let (sink, observed) = tokio::sync::mpsc::unbounded_channel();
                let proxy = RecordProxy::start(args.port, &format!("http://{}", server.addr()), sink).await?;
                Some((proxy, observed, writer))
            }
            None => None,
        };
        let addr = captured.as_ref().map_or(server.addr(), |(proxy, _, _)| proxy.addr());
        println!("reloop serve: {} on http://{addr}", source.display());
        if let Some(skipped) = &skipped_scenarios {
            println!("{skipped}");
        }
        if names.len() == 1 {
            print_base_urls(addr, DEFAULT_SESSION);
        }
        for name in &names {
            println!("session `{name}` (a fresh replay per distinct path /s/{name}/r/<run>/v1):");
            print_base_urls(addr, name);
        }
        if let (Some(dir), Some(_)) = (&args.capture, &captured) {
            println!("capturing every session's exchanges to {}/NAME.recording.yaml (and NAME.yaml)", dir.display());
        }
        if args.scenario.is_some() {
            println!("with --scenario, every session name replays the scenario's recording afresh, with its faults");
        }
        println!("any API key is accepted; one log line per request on stderr; Ctrl-C stops");
        if let Some(dir) = &args.log_json {
            println!("JSON log: one file per session in {}", dir.display());
        }
        match captured {
            Some((proxy, observed, writer)) => record_until_ctrl_c(proxy, observed, writer).await?,
            None => tokio::signal::ctrl_c().await?,
        }
        Ok(exit_code::SUCCESS)
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

fn print_base_urls(addr: std::net::SocketAddr, session: &str) {
    let base = MockServer::base_url_at(addr, session);
    println!("  OpenAI base URL:    {base}   (chat/completions, responses, models)");
    println!("  Anthropic base URL: {}", base.trim_end_matches("/v1"));
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
                let name = session_name(&file);
                if recordings.insert(name.clone(), recording).is_some() {
                    errors.push(InputError::file(&file, format!("session `{name}` is already served from another file of {}", path.display())));
                }
            }
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() { Ok((recordings, skipped)) } else { Err(errors) }
}
