//! A file-size limit (`ulimit -f`) kills a process that writes past it
//! with SIGXFSZ: no message, no results table, a `.partial` folder left.
//! With the signal caught, the write fails with `EFBIG` instead ("File
//! too large"), and the report's writer names the file and what it was
//! writing, as for a full disk. tokio's handler is the safe way to catch
//! it (the workspace denies `unsafe`); once installed it stays for the
//! life of the process, whatever happens to the runtime that installed it.

use tokio::signal::unix::{SignalKind, signal};

/// Catches SIGXFSZ for the rest of the process; a failure leaves the
/// default (the process dies at the limit), and is said.
pub fn report_instead_of_dying() {
    let installed = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .and_then(|runtime| runtime.block_on(async { signal(SignalKind::from_raw(rustix::process::Signal::XFSZ.as_raw())).map(drop) }));
    if let Err(error) = installed {
        eprintln!("warning: SIGXFSZ not caught ({error}): a file-size limit will end reloop without a message");
    }
}
