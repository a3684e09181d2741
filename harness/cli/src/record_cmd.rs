//! `reloop record`: a loopback proxy in front of a provider; every answer
//! streams back unchanged and is recorded (`reloop_import::capture_writer`).
//! Runs until the first Ctrl-C, SIGTERM or SIGHUP, then finishes the exchanges under
//! way, writes them and exits 130.

use std::time::Duration;

use reloop_import::capture_writer::{CaptureWriter, Target};
use reloop_mock::record::{RecordProxy, UpstreamBase};
use reloop_recording::capture::{Observed, Redaction, url_shown};
use tokio::sync::mpsc;

use crate::app::RecordArgs;
use crate::exit_code;
use crate::interrupt::Interrupt;

/// Runs the command; returns the exit code.
pub fn run(args: RecordArgs, interrupt: &Interrupt) -> anyhow::Result<i32> {
    let upstream = match UpstreamBase::parse(&args.upstream) {
        Ok(upstream) => upstream,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    let redaction = Redaction::new(&args.redact.redact_header, &args.redact.redact_body);
    let writer = match redaction.and_then(|redaction| CaptureWriter::new(Target::Prefix(args.out.clone()), redaction, args.force)) {
        Ok(writer) => writer,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    runtime.block_on(async {
        let (sink, observed) = mpsc::unbounded_channel();
        let proxy = RecordProxy::start(args.port, &upstream, sink).await?;
        println!("reloop record: {} on http://{}", url_shown(&args.upstream), proxy.addr());
        println!("  OpenAI base URL:    http://{}/v1", proxy.addr());
        println!("  Anthropic base URL: http://{}", proxy.addr());
        println!("recording to {}.recording.yaml (and the scenario skeleton {}.yaml); Ctrl-C stops", args.out.display(), args.out.display());
        record_until_interrupted(proxy, observed, writer, interrupt).await?;
        Ok(exit_code::INTERRUPTED)
    })
}

/// How long, after the interrupt, exchanges still in flight may take to
/// complete and be recorded (real time; a client that keeps its connection
/// idle must not hold the exit, which comes well within 3 s).
pub const GRACE_AFTER_INTERRUPT: Duration = Duration::from_secs(2);

/// Hands each observed exchange to the writer as it completes, until
/// the interrupt; then stops accepting connections, hands over what is
/// queued and what completes within [`GRACE_AFTER_INTERRUPT`], and waits
/// for the writes.
pub async fn record_until_interrupted(
    proxy: RecordProxy,
    mut observed: mpsc::UnboundedReceiver<Observed>,
    writer: CaptureWriter,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    loop {
        tokio::select! {
            next = observed.recv() => match next {
                Some(exchange) => writer.add(exchange),
                None => return Ok(writer.finish()?),
            },
            () = interrupt.requested() => break,
        }
    }
    // Connections open keep the sink; the channel closes once the last ends.
    drop(proxy);
    let deadline = tokio::time::Instant::now() + GRACE_AFTER_INTERRUPT;
    while let Ok(Some(exchange)) = tokio::time::timeout_at(deadline, observed.recv()).await {
        writer.add(exchange);
    }
    Ok(writer.finish()?)
}
