//! The recording proxy: a loopback server that forwards every request to
//! the upstream (path and query appended to its URL) and streams the answer
//! back chunk by chunk as it arrives, unchanged, keeping a copy; once the
//! answer is complete, the request and response go to the sink as one
//! [`Observed`]. Nothing is redacted here: what the client and upstream
//! exchange is theirs; `reloop_recording::capture` redacts what is kept.

use std::net::{Ipv4Addr, SocketAddr};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use reloop_recording::capture::{Observed, url_shown};

use super::UpstreamBase;
use crate::http::dot_segments::path_refusal;

/// The largest request body forwarded (long agent contexts are large).
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// Headers of one connection, not of the message; and `accept-encoding`,
/// dropped so upstreams answer unencoded and the copy can be read.
const NOT_FORWARDED: [&str; 10] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host", "content-length", "accept-encoding"];

#[derive(Clone)]
struct Upstream {
    base: UpstreamBase,
    client: reqwest::Client,
    sink: mpsc::UnboundedSender<Observed>,
}

/// A running proxy; stops when dropped.
#[derive(Debug)]
pub struct RecordProxy {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl RecordProxy {
    /// Listens on loopback `port` (0: any) and forwards to `upstream`
    /// (`http://` or `https://` host and port, optionally with a path
    /// prefix); each complete
    /// exchange goes to `sink`.
    pub async fn start(port: u16, upstream: &UpstreamBase, sink: mpsc::UnboundedSender<Observed>) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let client = upstream_client()?;
        let state = Upstream { base: upstream.clone(), client, sink };
        let app = Router::new().fallback(forward).with_state(state);
        let task = tokio::spawn(async move {
            // Serving ends with the proxy; errors are per connection.
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for RecordProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The client that speaks to upstreams (here and in `crate::http::live`).
pub(crate) fn upstream_client() -> std::io::Result<reqwest::Client> {
    // reqwest's rustls has no provider of its own: ring is installed
    // (kept if one is there already) so https upstreams work.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // Redirects are never followed: a 3xx is the upstream's answer, passed
    // to the client and recorded as such. Following one would send the
    // client's keys and body to whatever host the `location` names.
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().map_err(std::io::Error::other)
}

/// Whether a request header goes on to the upstream: not one of a
/// connection's ([`NOT_FORWARDED`]).
pub(crate) fn forwarded(name: &str) -> bool {
    !NOT_FORWARDED.contains(&name)
}

pub(crate) fn pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers.iter().map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned())).collect()
}

fn plain(status: StatusCode, message: String) -> Response {
    let mut response = Response::new(Body::from(serde_json::json!({ "error": { "type": "reloop_record", "message": message } }).to_string()));
    *response.status_mut() = status;
    response
}

async fn forward(State(upstream): State<Upstream>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_REQUEST_BYTES).await else {
        return plain(StatusCode::PAYLOAD_TOO_LARGE, format!("reloop record: request body over {MAX_REQUEST_BYTES} bytes"));
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    if let Some(message) = path_refusal(&path) {
        return crate::http::api_errors::error_response(crate::http::api_errors::error_format(&parts.uri, &parts.headers), StatusCode::BAD_REQUEST, &message);
    }
    let url = upstream.base.join(&path);
    let mut outgoing = upstream.client.request(parts.method.clone(), &url).body(body.clone());
    for (name, value) in &parts.headers {
        if forwarded(name.as_str()) {
            outgoing = outgoing.header(name, value);
        }
    }
    let answer = match outgoing.send().await {
        Ok(answer) => answer,
        // reqwest's error names the URL too: it is shown without it.
        Err(error) => return plain(StatusCode::BAD_GATEWAY, format!("reloop record: upstream {}: {}", url_shown(&url), error.without_url())),
    };
    let status = answer.status();
    let headers = answer.headers().clone();
    let observed = Observed {
        path,
        request_headers: pairs(&parts.headers),
        request_body: body,
        status: status.as_u16(),
        response_headers: pairs(&headers),
        response_body: Vec::new(),
    };
    let (chunks, receiver) = mpsc::channel::<Result<Bytes, std::io::Error>>(64);
    tokio::spawn(tee(answer, observed, chunks, upstream.sink));
    let body = futures_util::stream::unfold(receiver, |mut receiver| async move { receiver.recv().await.map(|chunk| (chunk, receiver)) });
    let mut response = Response::new(Body::from_stream(body));
    *response.status_mut() = status;
    for (name, value) in &headers {
        if !NOT_FORWARDED.contains(&name.as_str()) {
            response.headers_mut().append(name, value.clone());
        }
    }
    response
}

/// Passes each chunk on as it arrives and keeps it; a complete answer goes
/// to the sink (one the upstream broke off is not kept). A client that
/// left does not stop the copy.
async fn tee(answer: reqwest::Response, mut observed: Observed, chunks: mpsc::Sender<Result<Bytes, std::io::Error>>, sink: mpsc::UnboundedSender<Observed>) {
    let mut stream = answer.bytes_stream();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(bytes) => {
                observed.response_body.extend_from_slice(&bytes);
                let _ = chunks.send(Ok(bytes)).await;
            }
            Err(error) => {
                let _ = chunks.send(Err(std::io::Error::other(error))).await;
                return;
            }
        }
    }
    let _ = sink.send(observed);
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().unwrap()
    }

    #[test]
    fn an_https_upstream_is_spoken_to_in_tls() {
        runtime().block_on(async {
            let upstream = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
            let port = upstream.local_addr().unwrap().port();
            let (sink, _observed) = mpsc::unbounded_channel();
            let proxy = RecordProxy::start(0, &UpstreamBase::parse(&format!("https://127.0.0.1:{port}")).unwrap(), sink).await.unwrap();
            let url = format!("http://{}/v1/chat/completions", proxy.addr());
            let client = tokio::spawn(async move { reqwest::Client::new().post(url).body("{}").send().await });
            let accepted = tokio::time::timeout(std::time::Duration::from_secs(10), upstream.accept()).await;
            let (mut socket, _) = accepted.expect("the proxy never connected to the https upstream").unwrap();
            let mut hello = [0u8; 3];
            socket.read_exact(&mut hello).await.unwrap();
            assert_eq!(hello[..2], [0x16, 0x03], "a TLS handshake record opens the connection, not {hello:?}");
            drop(socket);
            let _ = client.await;
            drop(proxy);
        });
    }

    /// Regression (issue 28): a 307 from the upstream was followed, sending
    /// the client's `x-api-key` and body to the host it named, and that
    /// host's answer was recorded as the upstream's.
    #[test]
    fn a_redirect_is_passed_to_the_client_and_recorded_never_followed() {
        use tokio::io::AsyncWriteExt;
        runtime().block_on(async {
            let elsewhere = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
            let target = format!("http://{}/steal", elsewhere.local_addr().unwrap());
            let upstream = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
            let upstream_url = format!("http://{}", upstream.local_addr().unwrap());
            tokio::spawn(async move {
                let (mut socket, _) = upstream.accept().await.unwrap();
                let mut request = vec![0u8; 4096];
                let _ = socket.read(&mut request).await.unwrap();
                let answer = format!("HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                socket.write_all(answer.as_bytes()).await.unwrap();
            });
            let (sink, mut observed) = mpsc::unbounded_channel();
            let proxy = RecordProxy::start(0, &UpstreamBase::parse(&upstream_url).unwrap(), sink).await.unwrap();
            let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
            let answer = client
                .post(format!("http://{}/v1/messages", proxy.addr()))
                .header("x-api-key", "sk-ant-secret")
                .body(r#"{"secret":"body"}"#)
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), StatusCode::TEMPORARY_REDIRECT);
            assert!(answer.headers()["location"].to_str().unwrap().ends_with("/steal"));
            let recorded = tokio::time::timeout(std::time::Duration::from_secs(5), observed.recv()).await.unwrap().unwrap();
            assert_eq!(recorded.status, 307, "the redirect is what is recorded");
            let reached = tokio::time::timeout(std::time::Duration::from_millis(300), elsewhere.accept()).await;
            assert!(reached.is_err(), "the redirect target was contacted");
        });
    }

    #[test]
    fn an_unreachable_upstream_is_named_without_its_credentials_or_query() {
        runtime().block_on(async {
            let closed = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
            let port = closed.local_addr().unwrap().port();
            drop(closed);
            let (sink, _observed) = mpsc::unbounded_channel();
            let proxy = RecordProxy::start(0, &UpstreamBase::parse(&format!("http://user:hunter2@127.0.0.1:{port}")).unwrap(), sink).await.unwrap();
            let answer = reqwest::Client::new().post(format!("http://{}/v1/models?key=AIzaSecret", proxy.addr())).send().await.unwrap();
            assert_eq!(answer.status(), StatusCode::BAD_GATEWAY);
            let body = answer.text().await.unwrap();
            assert!(body.contains(&format!("http://127.0.0.1:{port}/v1/models")), "{body}");
            assert!(!body.contains("hunter2") && !body.contains("AIzaSecret"), "{body}");
        });
    }
}
