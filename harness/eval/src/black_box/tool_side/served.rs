//! How far the conversation was when a command ran: a Unix socket in the
//! run's scratch folder that answers each connection with the number of
//! requests the run's mock has handled so far, asked by a shim as its
//! command starts. The mock logs a request before its reply leaves, so a
//! command the reply asked for finds that request counted, and the next
//! request (sent after the command's result) not yet; the run maps the
//! count to the exchange served last ([`super::after_exchange`]). Exact,
//! where comparing two processes' clocks would not be.

use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

use reloop_mock::Session;

/// The socket's answering task, stopped when dropped.
pub struct ServedCounter {
    task: tokio::task::JoinHandle<()>,
}

impl ServedCounter {
    /// Answers on `path` for `session` until dropped. Called on the run's
    /// runtime.
    ///
    /// # Errors
    ///
    /// The socket cannot be made (a path longer than a socket address holds).
    pub fn start(path: &Path, session: Arc<Session>) -> Result<Self, String> {
        let listener = tokio::net::UnixListener::bind(path).map_err(|e| format!("cannot make the shell shims' request counter {}: {e}", path.display()))?;
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let handled = session.last_record().map_or(0, |record| record.index + 1);
                // A shim that went away asks nothing more.
                if stream.writable().await.is_ok() {
                    let _ = stream.try_write(handled.to_string().as_bytes());
                }
            }
        });
        Ok(Self { task })
    }
}

impl Drop for ServedCounter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The requests the run's mock had handled, asked of the counter at
/// `path`; `None` when it does not answer.
pub fn ask(path: &Path) -> Option<usize> {
    let mut stream = std::os::unix::net::UnixStream::connect(path).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.trim().parse().ok()
}
