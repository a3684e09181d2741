//! `reloop serve` under a parallel test suite (issue 44): many sessions at
//! once, each a multi-turn streamed Chat replay, against a floor that
//! serves the same bytes with no replay logic.
//!
//! Each session sends its turns one after another, its conversation growing
//! by the answer and a new user message each turn (as an SDK test does),
//! over one shared keep-alive client (as a pytest worker's SDK clients
//! share a pool). Every answer is read to the end of its stream and checked
//! against the text the session's turn must get, so a session that is lost
//! (a refused or failed request) or mixed with another (an answer of
//! another turn) counts as a failure, never as speed.
//!
//! The floor ([`serve_floor`]) answers each session's turn `k` with the
//! SSE frames reloop sent for turn `k` ([`capture_frames`]), frame by frame,
//! keeping only a turn counter per session: HTTP, SSE and the session
//! lookup, nothing else.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use futures_util::StreamExt as _;
use serde_json::json;

use crate::floor::{chunk_data, next_event};

/// The answer of turn `turn` (from 0): what the recording holds and every
/// session's turn must get.
pub fn answer_of(turn: usize) -> String {
    format!("Turn {} of the session.", turn + 1)
}

/// A v2 recording of `turns` text answers, [`answer_of`] each.
pub fn recording(turns: usize) -> String {
    let exchanges: String = (0..turns).map(|turn| format!("  - parts: [ {{ type: text, text: \"{}\" }} ]\n", answer_of(turn))).collect();
    format!("format: reloop.recording/v2\nmodel: gpt-4o-mini\nexchanges:\n{exchanges}")
}

/// What one load run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Requests answered in full with the right text.
    pub answered: usize,
    /// Wall time of the whole run.
    pub wall: Duration,
    /// Each answered request's time, from sending to the stream's end.
    pub latencies: Vec<Duration>,
    /// What went wrong, per failed request: a lost or mixed session.
    pub failures: Vec<String>,
}

impl Measured {
    /// Answered requests per second.
    pub fn requests_per_second(&self) -> f64 {
        self.answered as f64 / self.wall.as_secs_f64()
    }

    /// The 99th percentile latency (nearest rank).
    pub fn p99(&self) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let rank = (sorted.len() * 99).div_ceil(100);
        sorted.get(rank.saturating_sub(1)).copied().unwrap_or_default()
    }
}

/// A client for loopback: no TLS roots, as reloop's own for plain http.
pub fn client() -> reqwest::Client {
    // reqwest's rustls has no provider of its own and panics without one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().tls_certs_only([]).build().expect("a client builds")
}

/// `sessions` sessions at once against `root` (`http://127.0.0.1:PORT`),
/// each `turns` streamed Chat requests to `root/s/{prefix}-{i}/v1/...`.
pub async fn drive(client: &reqwest::Client, root: &str, prefix: &str, sessions: usize, turns: usize) -> Measured {
    let start = Instant::now();
    let runs = (0..sessions).map(|i| session(client.clone(), format!("{root}/s/{prefix}-{i}/v1/chat/completions"), turns));
    let results = futures_util::future::join_all(runs).await;
    let wall = start.elapsed();
    let mut measured = Measured { answered: 0, wall, latencies: Vec::new(), failures: Vec::new() };
    for (latencies, failures) in results {
        measured.answered += latencies.len();
        measured.latencies.extend(latencies);
        measured.failures.extend(failures);
    }
    measured
}

/// One session's turns; the latencies of its answered requests and what failed.
async fn session(client: reqwest::Client, url: String, turns: usize) -> (Vec<Duration>, Vec<String>) {
    let mut messages = vec![json!({ "role": "system", "content": "You answer in one line." }), json!({ "role": "user", "content": "Go." })];
    let (mut latencies, mut failures) = (Vec::with_capacity(turns), Vec::new());
    for turn in 0..turns {
        let body = json!({ "model": "gpt-4o-mini", "stream": true, "messages": messages });
        let sent = Instant::now();
        match streamed_text(&client, &url, &body).await {
            Ok(text) if text == answer_of(turn) => latencies.push(sent.elapsed()),
            Ok(text) => failures.push(format!("{url} turn {}: got {text:?}, not {:?} (sessions mixed)", turn + 1, answer_of(turn))),
            Err(error) => failures.push(format!("{url} turn {}: {error} (session lost)", turn + 1)),
        }
        messages.push(json!({ "role": "assistant", "content": answer_of(turn) }));
        messages.push(json!({ "role": "user", "content": "Next." }));
    }
    (latencies, failures)
}

/// The text a streamed Chat answer carries, read to the end.
async fn streamed_text(client: &reqwest::Client, url: &str, body: &serde_json::Value) -> Result<String, String> {
    let response = post(client, url, body).await?;
    if !response.status().is_success() {
        return Err(format!("status {}", response.status()));
    }
    let mut stream = response.bytes_stream();
    let (mut buffer, mut text) = (Vec::new(), String::new());
    while let Some(bytes) = stream.next().await {
        buffer.extend_from_slice(&bytes.map_err(|e| e.to_string())?);
        while let Some(event) = next_event(&mut buffer) {
            let Some(data) = chunk_data(&event) else { continue };
            let chunk: serde_json::Value = serde_json::from_slice(data).map_err(|e| format!("an event that is not JSON: {e}"))?;
            if let Some(content) = chunk["choices"][0]["delta"]["content"].as_str() {
                text.push_str(content);
            }
        }
    }
    Ok(text)
}

/// POSTs `body` as JSON.
async fn post(client: &reqwest::Client, url: &str, body: &serde_json::Value) -> Result<reqwest::Response, String> {
    let bytes = serde_json::to_vec(body).expect("plain JSON");
    client.post(url).header(header::CONTENT_TYPE, "application/json").body(bytes).send().await.map_err(|e| e.to_string())
}

/// The SSE frames `root` streams for each of `turns` turns of one fresh
/// session (`root/s/{session}/v1/chat/completions`): what the floor serves.
pub async fn capture_frames(client: &reqwest::Client, root: &str, session: &str, turns: usize) -> Result<Vec<Vec<Bytes>>, String> {
    let url = format!("{root}/s/{session}/v1/chat/completions");
    let mut messages = vec![json!({ "role": "system", "content": "You answer in one line." }), json!({ "role": "user", "content": "Go." })];
    let mut turns_frames = Vec::with_capacity(turns);
    for turn in 0..turns {
        let body = json!({ "model": "gpt-4o-mini", "stream": true, "messages": messages });
        let response = post(client, &url, &body).await?;
        let bytes = response.bytes().await.map_err(|e| e.to_string())?;
        let frames = bytes.split_inclusive(|&b| b == b'\n').fold(Vec::<Vec<u8>>::new(), |mut frames, line| {
            match frames.last_mut() {
                Some(frame) if !frame.ends_with(b"\n\n") => frame.extend_from_slice(line),
                _ => frames.push(line.to_vec()),
            }
            frames
        });
        turns_frames.push(frames.into_iter().map(Bytes::from).collect());
        messages.push(json!({ "role": "assistant", "content": answer_of(turn) }));
        messages.push(json!({ "role": "user", "content": "Next." }));
    }
    Ok(turns_frames)
}

/// The floor's state: the frames of each turn, and each session's next turn.
struct Floor {
    frames: Vec<Vec<Bytes>>,
    next_turn: Mutex<HashMap<String, usize>>,
}

/// Serves `frames` on a free loopback port: session `NAME` (the path's
/// part between `/s/` and `/v1/`) gets turn `k`'s frames on its `k`-th
/// request, having had its body read and parsed as JSON (as any server
/// must). Returns the address; runs until the runtime ends.
pub async fn serve_floor(frames: Vec<Vec<Bytes>>) -> std::io::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let floor = Arc::new(Floor { frames, next_turn: Mutex::default() });
    let app = Router::new().fallback(floor_answer).with_state(floor);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(addr)
}

async fn floor_answer(State(floor): State<Arc<Floor>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let Some(session) = path.strip_prefix("/s/").and_then(|rest| rest.split_once("/v1/")).map(|(name, _)| name.to_owned()) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), 64 << 20).await else { return StatusCode::BAD_REQUEST.into_response() };
    if serde_json::from_slice::<serde_json::Value>(&body).is_err() {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let turn = {
        let mut next = floor.next_turn.lock().expect("floor state poisoned");
        let turn = next.entry(session).or_default();
        *turn += 1;
        *turn - 1
    };
    let Some(frames) = floor.frames.get(turn) else { return StatusCode::BAD_REQUEST.into_response() };
    let stream = futures_util::stream::iter(frames.clone().into_iter().map(Ok::<_, Infallible>));
    Response::builder().header(header::CONTENT_TYPE, "text/event-stream").body(Body::from_stream(stream)).expect("static headers are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The floor replays what it captured, to every session apart, and a
    /// session past its turns is counted as lost, not as an answer.
    #[test]
    fn the_floor_serves_each_session_its_own_turns_and_failures_are_counted() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let frames: Vec<Vec<Bytes>> = (0..3)
                .map(|turn| {
                    let chunk = json!({ "choices": [{ "index": 0, "delta": { "content": answer_of(turn) } }] });
                    vec![Bytes::from(format!("data: {chunk}\n\n")), Bytes::from_static(b"data: [DONE]\n\n")]
                })
                .collect();
            let root = format!("http://{}", serve_floor(frames).await.unwrap());
            let client = client();
            let measured = drive(&client, &root, "t", 8, 3).await;
            assert_eq!((measured.answered, measured.failures.len()), (24, 0), "{:?}", measured.failures);
            assert!(measured.p99() >= *measured.latencies.iter().min().unwrap());
            let past = drive(&client, &root, "t", 1, 4).await;
            assert_eq!(past.answered, 0, "session t-0 had its three turns already: every turn now is another's");
            assert_eq!(past.failures.len(), 4, "{:?}", past.failures);
        });
    }

    #[test]
    fn p99_is_the_nearest_rank() {
        let latencies = (1..=200).map(Duration::from_millis).collect();
        let measured = Measured { answered: 200, wall: Duration::from_secs(1), latencies, failures: Vec::new() };
        assert_eq!(measured.p99(), Duration::from_millis(198));
        assert!((measured.requests_per_second() - 200.0).abs() < 1e-9);
    }
}
