//! The HTTP front: real TCP on loopback, bounded for outside clients by
//! [`ConnectionLimits`] (`crate::http::connections`), serving the routes
//! ([`crate::http::routes`]) of a [`Registry`]'s sessions.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use reloop_recording::session_path;

use crate::http::connections::{self, ConnectionLimits};
use crate::http::registry::Registry;
use crate::http::routes::router;

/// A running server.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    registry: Arc<Registry>,
    task: tokio::task::JoinHandle<()>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl MockServer {
    /// Binds 127.0.0.1:`port` (0 for an ephemeral port) and serves on the
    /// current tokio runtime with the default connection limits. Loopback
    /// only, by design.
    pub async fn start(port: u16, registry: Arc<Registry>) -> std::io::Result<Self> {
        Self::start_with(port, registry, ConnectionLimits::default()).await
    }

    /// As [`MockServer::start`], within `limits`.
    pub async fn start_with(port: u16, registry: Arc<Registry>, limits: ConnectionLimits) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let app = router(Arc::clone(&registry));
        let (stop, stopped) = tokio::sync::watch::channel(false);
        // Serving ends with the server or [`MockServer::stop`]; errors are per connection.
        let task = tokio::spawn(connections::serve(listener, app, limits, stopped));
        Ok(Self { addr, registry, task, stop })
    }

    /// Stops accepting connections at once, then lets the exchanges under
    /// way finish for at most `grace`; the connections still open then are
    /// dropped. `true` when every exchange finished in time.
    pub async fn stop(mut self, grace: std::time::Duration) -> bool {
        let _ = self.stop.send(true);
        tokio::time::timeout(grace, &mut self.task).await.is_ok()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The registry, to add sessions.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The base URL (up to `/v1`) of session `name`.
    pub fn session_base_url(&self, name: &str) -> String {
        Self::base_url_at(self.addr, name)
    }

    /// The OpenAI base URL of session `name` on a server (or a proxy in
    /// front of one, as `serve --capture` puts) at `addr`.
    pub fn base_url_at(addr: SocketAddr, name: &str) -> String {
        session_path::base_url(addr, name)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
