//! `reloop import --otlp-listen [ADDR] --out DIR`: an OTLP/HTTP receiver
//! (`POST /v1/traces`, `application/json` or `application/x-protobuf`,
//! gzip or not) whose traces become scenarios through the same importer as
//! OTLP files (`reloop_import::formats::otlp`), one per trace id, when it
//! stops: at Ctrl-C (exit 130, as `serve` and `record`), or once
//! `--otlp-exit-after N` traces have finished, their root span received
//! (exit 0). Loopback only unless `--otlp-allow-remote`: anyone who
//! reaches the port can write scenarios, and it has no authentication.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use reloop_import::formats::otlp::body::{self, BodyError};
use serde_json::Value;

use reloop_import::{ImportError, NamedSession};

use crate::app::ImportArgs;
use crate::exit_code;
use crate::interrupt::Interrupt;
use crate::stdout::print_stdout;

/// What the receiver ends with: the traces it received, to be written as
/// a file's sessions are (`import_cmd`), or the exit code of a receiver
/// that could not start or received nothing.
pub enum Received {
    /// The traces, and whether `--otlp-exit-after` (not Ctrl-C) stopped it.
    Traces(Vec<Result<NamedSession, ImportError>>, bool),
    /// Nothing to write; exit with this.
    Exit(i32),
}

/// Runs the receiver until it stops; what it received.
pub fn receive(args: &ImportArgs, addr: &str, interrupt: &Interrupt) -> anyhow::Result<Received> {
    let addr: SocketAddr = match addr.parse() {
        Ok(addr) => addr,
        Err(error) => {
            eprintln!("error: --otlp-listen {addr}: not an IP address and port, such as 127.0.0.1:4318 ({error})");
            return Ok(Received::Exit(exit_code::BAD_INPUT));
        }
    };
    if !addr.ip().is_loopback() && !args.otlp_allow_remote {
        eprintln!(
            "error: --otlp-listen {addr}: not a loopback address; the receiver has no authentication, so it listens on loopback only \
             (127.0.0.1, ::1) unless --otlp-allow-remote is passed"
        );
        return Ok(Received::Exit(exit_code::BAD_INPUT));
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    let received = Arc::new(Requests { exit_after: args.otlp_exit_after, ..Requests::default() });
    let listener = match runtime.block_on(tokio::net::TcpListener::bind(addr)) {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("error: --otlp-listen {addr}: cannot listen: {error}");
            return Ok(Received::Exit(exit_code::BAD_INPUT));
        }
    };
    let stopped_by_count = runtime.block_on(serve(listener, Arc::clone(&received), interrupt))?;
    let requests = std::mem::take(&mut *received.requests.lock().expect("not poisoned"));
    if requests.is_empty() {
        eprintln!("error: --otlp-listen: no trace received; nothing written");
        return Ok(Received::Exit(exit_code::BAD_INPUT));
    }
    Ok(Received::Traces(reloop_import::received_traces(reloop_import::formats::otlp::traces(requests)), stopped_by_count))
}

/// What the receiver took in: each request's document (or why it is
/// none), numbered in arrival order; the traces whose root span came.
#[derive(Default)]
struct Requests {
    requests: Mutex<Vec<(usize, Result<Value, String>)>>,
    finished: Mutex<HashSet<String>>,
    exit_after: Option<u64>,
    enough: tokio::sync::Notify,
}

/// Serves until Ctrl-C or `--otlp-exit-after`; `true` for the latter.
async fn serve(listener: tokio::net::TcpListener, received: Arc<Requests>, interrupt: &Interrupt) -> anyhow::Result<bool> {
    let addr = listener.local_addr()?;
    print_stdout(&format!(
        "reloop import: OTLP/HTTP receiver on http://{addr}\nPOST /v1/traces (application/json or application/x-protobuf); each trace becomes a scenario in the --out folder at Ctrl-C{}\n",
        received.exit_after.map(|n| format!(" or after {n} traces")).unwrap_or_default()
    ))?;
    let limit = reloop_files::input_file::max_input_bytes();
    let app = Router::new()
        .route("/v1/traces", axum::routing::post(traces))
        .with_state(Arc::clone(&received))
        .layer(DefaultBodyLimit::max(usize::try_from(limit).unwrap_or(usize::MAX)));
    let by_count = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = {
        let by_count = Arc::clone(&by_count);
        let received = Arc::clone(&received);
        let interrupt = interrupt.clone();
        async move {
            tokio::select! {
                () = interrupt.requested() => {}
                () = received.enough.notified() => by_count.store(true, std::sync::atomic::Ordering::SeqCst),
            }
        }
    };
    axum::serve(listener, app).with_graceful_shutdown(stop).await?;
    Ok(by_count.load(std::sync::atomic::Ordering::SeqCst))
}

/// `POST /v1/traces`: the body decoded and kept, answered with an empty
/// `ExportTraceServiceResponse` in the request's encoding, or refused with
/// 400 (it does not decode) or 415 (a type OTLP/HTTP does not define).
async fn traces(State(received): State<Arc<Requests>>, headers: HeaderMap, body: Bytes) -> Response {
    let header = |name: header::HeaderName| headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let content_type = header(header::CONTENT_TYPE);
    let protobuf = content_type.as_deref().is_some_and(|t| t.contains("protobuf"));
    let limit = usize::try_from(reloop_files::input_file::max_input_bytes()).unwrap_or(usize::MAX);
    match body::decode(content_type.as_deref(), header(header::CONTENT_ENCODING).as_deref(), &body, limit) {
        Ok(request) => {
            let finished = body::finished_traces(&request);
            let mut requests = received.requests.lock().expect("not poisoned");
            let number = requests.len() + 1;
            requests.push((number, Ok(request)));
            drop(requests);
            let mut done = received.finished.lock().expect("not poisoned");
            done.extend(finished);
            eprintln!("received request {number}: {} traces finished so far", done.len());
            if received.exit_after.is_some_and(|n| done.len() as u64 >= n) {
                received.enough.notify_one();
            }
            if protobuf {
                ([(header::CONTENT_TYPE, "application/x-protobuf")], Vec::<u8>::new()).into_response()
            } else {
                ([(header::CONTENT_TYPE, "application/json")], "{}").into_response()
            }
        }
        Err(BodyError::UnsupportedType(message)) => refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message, protobuf),
        Err(BodyError::Bad(message)) => {
            eprintln!("refused a request: {message}");
            refuse(StatusCode::BAD_REQUEST, &message, protobuf)
        }
    }
}

/// An error as OTLP/HTTP answers one: a `google.rpc.Status` (code 3,
/// INVALID_ARGUMENT, and the message) in the request's encoding.
fn refuse(status: StatusCode, message: &str, protobuf: bool) -> Response {
    if protobuf {
        let mut bytes = vec![0x08, 0x03, 0x12];
        let mut len = message.len();
        while len >= 0x80 {
            bytes.push((len as u8 & 0x7f) | 0x80);
            len >>= 7;
        }
        bytes.push(len as u8);
        bytes.extend_from_slice(message.as_bytes());
        (status, [(header::CONTENT_TYPE, "application/x-protobuf")], bytes).into_response()
    } else {
        (status, axum::Json(serde_json::json!({"code": 3, "message": message}))).into_response()
    }
}
