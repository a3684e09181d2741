//! The accept loop of the mock server, bounded: at most
//! [`ConnectionLimits::max_connections`] connections are served at once
//! (the rest wait in the kernel's backlog), and a client that has not sent
//! its request headers within [`ConnectionLimits::header_read_timeout`]
//! (a half-open or idle keep-alive connection) is dropped, as is one that
//! has not sent a request's body within
//! [`ConnectionLimits::body_read_timeout`] ([`crate::http::body_timeout`]).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

/// Hyper's hard cap on a request head; the friendlier JSON limits of
/// [`crate::http::api_errors`] apply well below it.
const MAX_HEAD_BYTES: usize = 1024 * 1024;

/// Hyper's hard cap on the number of headers (see [`MAX_HEAD_BYTES`]).
const MAX_HEADERS: usize = 1000;

/// Limits on the connections the server holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a client may take to send a request's headers.
    pub header_read_timeout: Duration,
    /// How long a client may take to send a request's body, once its
    /// headers came.
    pub body_read_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// The largest request body a route reads (413 above it, in the API's
    /// error shape); `reloop run` sizes it to the scenario's window.
    pub max_body_bytes: usize,
}

/// The body limit when none is given: 2 MiB, axum's own.
pub const DEFAULT_MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 1024,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// Serves `app` on `listener` within `limits`, until the task is dropped or
/// `stop` turns true: then no connection is accepted any more, each open
/// one finishes the exchange under way and closes (an idle keep-alive one
/// closes at once), and the future ends when the last has closed.
pub async fn serve(listener: TcpListener, app: Router, limits: ConnectionLimits, mut stop: watch::Receiver<bool>) {
    let app = app
        .layer(axum::extract::DefaultBodyLimit::max(limits.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(limits.body_read_timeout, crate::http::body_timeout::bounded));
    let max = limits.max_connections.max(1);
    let permits = Arc::new(Semaphore::new(max));
    loop {
        let accepted = tokio::select! {
            biased;
            () = stopped(&mut stop) => break,
            accepted = next_connection(&listener, &permits) => accepted,
        };
        let Some((permit, tcp)) = accepted else { continue };
        // Streams are many small writes: without TCP_NODELAY, Nagle's
        // algorithm and delayed ACKs hold each one back for ~40 ms.
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout).max_buf_size(MAX_HEAD_BYTES).max_headers(MAX_HEADERS);
            let connection = builder.serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(connection);
            // Errors are per connection (a reset, a timeout): nothing to do.
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopped(&mut stop) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    drop(listener);
    // Every permit back: every connection has closed.
    let _ = permits.acquire_many(u32::try_from(max).unwrap_or(u32::MAX)).await;
}

/// Resolves once `stop` turns true; never when the server went without
/// being stopped (serving then ends with its task, as before).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|stopped| *stopped).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The next connection, with its permit; `None` after a failed accept.
async fn next_connection(listener: &TcpListener, permits: &Arc<Semaphore>) -> Option<(OwnedSemaphorePermit, TcpStream)> {
    let permit = Arc::clone(permits).acquire_owned().await.ok()?;
    match listener.accept().await {
        Ok((tcp, _)) => Some((permit, tcp)),
        Err(_) => {
            // Out of descriptors or a reset before accept: back off.
            tokio::time::sleep(Duration::from_millis(10)).await;
            None
        }
    }
}
