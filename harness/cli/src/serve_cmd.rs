//! `reloop serve`: the mock server alone, for outside clients (an SDK, an
//! agent CLI). Loopback only; runs until Ctrl-C.

use std::sync::Arc;

use reloop_mock::{DEFAULT_SESSION, MockServer, NoPacer, Pacer, RealPacer, Recording, Registry, Session, SessionConfig};

use crate::app::ServeArgs;
use crate::exit_code;

/// Runs the command; returns the exit code.
pub fn run(args: ServeArgs) -> anyhow::Result<i32> {
    let recording: Recording = match reloop_eval::yaml::load(&args.recording) {
        Ok(recording) => recording,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    let pacer: Arc<dyn Pacer> = if args.realtime { Arc::new(RealPacer::default()) } else { Arc::new(NoPacer) };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    runtime.block_on(async {
        let registry = Arc::new(Registry::default());
        let session = Session::new(SessionConfig {
            recording: Arc::new(recording),
            context_window: args.context_window,
            pacer,
            faults: Vec::new(),
        })
        .map_err(anyhow::Error::msg)?;
        registry.insert(DEFAULT_SESSION, Arc::new(session));
        let server = MockServer::start(args.port, registry).await?;
        let base = server.session_base_url(DEFAULT_SESSION);
        println!("reloop serve: replaying {} on {}", args.recording.display(), server.addr());
        println!("  OpenAI base URL:  {base}");
        println!("  any API key is accepted; press Ctrl-C to stop");
        tokio::signal::ctrl_c().await?;
        Ok(exit_code::SUCCESS)
    })
}
