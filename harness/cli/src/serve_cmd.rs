//! `reloop serve`: the mock server alone, for outside clients (an SDK, an
//! agent CLI). Loopback only, bounded (header timeout, connection and
//! session limits); runs until Ctrl-C.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::time::Duration;

use reloop_mock::{
    ConnectionLimits, DEFAULT_SESSION, MockServer, NoPacer, Pacer, RealPacer, Recording, Registry, SessionLimits, recording_factory,
    scenario_factory,
};

use reloop_mock::json_log::JsonLog;
use reloop_mock::recording::{Exchange, ReplayMode, ReplyUsage};

use reloop_mock::record::RecordProxy;

use crate::app::ServeArgs;
use crate::capture_writer::{CaptureWriter, Target};
use crate::record_cmd::record_until_ctrl_c;
use crate::exit_code;

/// Runs the command; returns the exit code.
pub fn run(args: ServeArgs) -> anyhow::Result<i32> {
    let pacer: Arc<dyn Pacer> = if args.realtime { Arc::new(RealPacer::default()) } else { Arc::new(NoPacer) };
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
            Ok(recordings) => {
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
    let capture = match args.capture.clone().map(|dir| CaptureWriter::new(Target::PerSession(dir), &args.redact, args.force)).transpose() {
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
    println!("  Gemini base URL:    {}   (v1beta/models/MODEL:generateContent)", base.trim_end_matches("/v1"));
}

/// The recordings of a file (named by its stem) or of every `*.yaml` in a
/// directory, with every error reported.
fn load_recordings(path: &Path) -> Result<HashMap<String, Recording>, Vec<reloop_eval::InputError>> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| vec![reloop_eval::InputError::file(path, format!("cannot list: {e}"))])?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|ext| ext == "yaml" || ext == "yml"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_owned()]
    };
    let mut recordings = HashMap::new();
    let mut errors = Vec::new();
    for file in files {
        let name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        match reloop_eval::yaml::load_checked::<Recording>(&file, reloop_eval::validate_settings::check_recording) {
            Ok(recording) => {
                recordings.insert(name, recording);
            }
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() { Ok(recordings) } else { Err(errors) }
}
