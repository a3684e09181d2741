//! A read timeout per request body, as [`crate::http::connections`] has one for
//! the head: a client that sends its headers and then trickles the body
//! (one byte a second) would otherwise hold its connection slot for ever,
//! and enough of them hold every slot. The route is handed a body that
//! fails once the limit has passed since the head was read; the route
//! answers that as a body it could not read, and the connection closes
//! (`connection: close`), freeing its slot.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;

/// The layer: `request`'s body bounded by `limit`.
pub async fn bounded(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    let deadline = tokio::time::Instant::now() + limit;
    let timed_out = Arc::new(AtomicBool::new(false));
    let (parts, body) = request.into_parts();
    let flag = Arc::clone(&timed_out);
    let chunks = futures_util::stream::unfold(Some(body.into_data_stream()), move |chunks| {
        let flag = Arc::clone(&flag);
        async move {
            let mut chunks = chunks?;
            match tokio::time::timeout_at(deadline, chunks.next()).await {
                Ok(Some(chunk)) => Some((chunk.map_err(std::io::Error::other), Some(chunks))),
                Ok(None) => None,
                Err(_) => {
                    flag.store(true, Ordering::SeqCst);
                    let message = format!("the request body did not arrive within {} s", limit.as_secs_f64());
                    Some((Err(std::io::Error::new(std::io::ErrorKind::TimedOut, message)), None))
                }
            }
        }
    });
    let mut response = next.run(Request::from_parts(parts, Body::from_stream(chunks))).await;
    if timed_out.load(Ordering::SeqCst) {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
