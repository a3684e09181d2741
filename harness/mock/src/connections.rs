//! The accept loop of the mock server, bounded: at most
//! [`ConnectionLimits::max_connections`] connections are served at once
//! (the rest wait in the kernel's backlog), and a client that has not sent
//! its request headers within [`ConnectionLimits::header_read_timeout`]
//! (a half-open or idle keep-alive connection) is dropped.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Hyper's hard cap on a request head; the friendlier JSON limits of
/// [`crate::api_errors`] apply well below it.
const MAX_HEAD_BYTES: usize = 1024 * 1024;

/// Hyper's hard cap on the number of headers (see [`MAX_HEAD_BYTES`]).
const MAX_HEADERS: usize = 1000;

/// Limits on the connections the server holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a client may take to send a request's headers.
    pub header_read_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self { header_read_timeout: Duration::from_secs(10), max_connections: 1024 }
    }
}

/// Serves `app` on `listener` within `limits`, until the task is dropped.
pub async fn serve(listener: TcpListener, app: Router, limits: ConnectionLimits) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    loop {
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else { return };
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            Err(_) => {
                // Out of descriptors or a reset before accept: back off.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        // Streams are many small writes: without TCP_NODELAY, Nagle's
        // algorithm and delayed ACKs hold each one back for ~40 ms.
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .max_buf_size(MAX_HEAD_BYTES)
                .max_headers(MAX_HEADERS);
            // Errors are per connection (a reset, a timeout): nothing to do.
            let _ = builder.serve_connection(TokioIo::new(tcp), service).await;
        });
    }
}
