//! `reloop record`: a loopback proxy in front of a provider; every answer
//! streams back unchanged and is recorded (`capture_writer`). Runs until
//! Ctrl-C.

use reloop_mock::record::{Observed, RecordProxy, url_shown};
use tokio::sync::mpsc;

use crate::app::RecordArgs;
use crate::capture_writer::{CaptureWriter, Target};
use crate::exit_code;

/// Runs the command; returns the exit code.
pub fn run(args: RecordArgs) -> anyhow::Result<i32> {
    if !(args.upstream.starts_with("http://") || args.upstream.starts_with("https://")) {
        eprintln!("error: --upstream `{}`: expected an http:// or https:// URL", url_shown(&args.upstream));
        return Ok(exit_code::BAD_INPUT);
    }
    let mut writer = match CaptureWriter::new(Target::Prefix(args.out.clone()), &args.redact) {
        Ok(writer) => writer,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    runtime.block_on(async {
        let (sink, observed) = mpsc::unbounded_channel();
        let proxy = RecordProxy::start(args.port, &args.upstream, sink).await?;
        println!("reloop record: {} on http://{}", url_shown(&args.upstream), proxy.addr());
        println!("  OpenAI base URL:    http://{}/v1", proxy.addr());
        println!("  Anthropic base URL: http://{}", proxy.addr());
        println!("recording to {}.recording.yaml (and the scenario skeleton {}.yaml); Ctrl-C stops", args.out.display(), args.out.display());
        record_until_ctrl_c(observed, &mut writer).await?;
        Ok(exit_code::SUCCESS)
    })
}

/// Writes each observed exchange as it completes, until Ctrl-C.
pub async fn record_until_ctrl_c(mut observed: mpsc::UnboundedReceiver<Observed>, writer: &mut CaptureWriter) -> anyhow::Result<()> {
    loop {
        tokio::select! {
            next = observed.recv() => match next {
                Some(exchange) => {
                    if let Some(line) = writer.add(&exchange)? {
                        eprintln!("{line}");
                    }
                }
                None => return Ok(()),
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}
