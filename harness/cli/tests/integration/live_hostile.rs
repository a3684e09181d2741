//! `reloop run --upstream` against hostile loopback upstreams (issue 46):
//! one that redirects the call elsewhere, one that echoes the key it was
//! sent everywhere it can, and ones that stall (never answer, send the
//! head then nothing, trickle SSE comments for ever). No redirect is
//! followed, no key reaches a file, and every stalled run ends by itself
//! (or at one Ctrl-C) with its report.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::rerecord::every_file;
use crate::tables::read_rows;
use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, Serve, read_request, write};

/// How long a scripted upstream accepts connections, and the longest any
/// of its answers stalls: every test here ends well before.
const UPSTREAM_LIFETIME: Duration = Duration::from_secs(60);

/// A scripted upstream on loopback: each connection's request is read,
/// kept, and answered by its script on a thread of its own.
struct Scripted {
    addr: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Scripted {
    fn start(script: impl Fn(&str, &mut TcpStream) + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (kept, script) = (Arc::clone(&requests), Arc::new(script));
        std::thread::spawn(move || {
            let deadline = Instant::now() + UPSTREAM_LIFETIME;
            while Instant::now() < deadline {
                let Ok((mut socket, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let (kept, script) = (Arc::clone(&kept), Arc::clone(&script));
                std::thread::spawn(move || {
                    socket.set_nonblocking(false).unwrap();
                    let request = read_request(&mut socket);
                    kept.lock().unwrap().push(request.clone());
                    script(&request, &mut socket);
                });
            }
        });
        Self { addr, requests }
    }

    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

/// Writes `bytes` to the client, ignoring a client that left.
fn send(socket: &mut TcpStream, bytes: &str) {
    use std::io::Write as _;
    let _ = socket.write_all(bytes.as_bytes());
    let _ = socket.flush();
}

/// A whole HTTP answer with `headers` (`name: value\r\n` each) and `body`.
fn answer(status: &str, headers: &str, body: &str) -> String {
    format!("HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
}

/// A streamed Chat text turn saying `text`.
fn chat_stream(text: &str) -> String {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    chunk(&format!("{{\"role\":\"assistant\",\"content\":\"{text}\"}}"), "null") + &chunk("{}", "\"stop\"") + "data: [DONE]\n\n"
}

/// `reloop ARGS` from `cwd` with `env` added (the keys' variables cleared
/// first), its output written to `stdout.log` and `stderr.log` in `cwd`
/// (files the run wrote, as far as the checks go); killed, failing the
/// test, once `limit` passes. Its output and how long it took.
fn run_within(cwd: &Path, args: &[&str], env: &[(&str, &str)], limit: Duration) -> (Output, Duration) {
    let child = spawn(cwd, args, env);
    wait_within(child, cwd, limit)
}

fn spawn(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reloop"));
    command.current_dir(cwd).args(args).env("NO_COLOR", "1").stdin(Stdio::null());
    for variable in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
        command.env_remove(variable);
    }
    command.envs(env.iter().copied());
    command.stdout(std::fs::File::create(cwd.join("stdout.log")).unwrap()).stderr(std::fs::File::create(cwd.join("stderr.log")).unwrap());
    command.spawn().expect("the reloop binary runs")
}

fn wait_within(mut child: std::process::Child, cwd: &Path, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("reloop still running after {limit:?}: {}", std::fs::read_to_string(cwd.join("stderr.log")).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = Output { status, stdout: std::fs::read(cwd.join("stdout.log")).unwrap(), stderr: std::fs::read(cwd.join("stderr.log")).unwrap() };
    (output, started.elapsed())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Regression: an upstream answering 307 to another origin had that
/// status passed to the loop, whose client followed it and sent the whole
/// conversation to the other host; the report said `live_steps 0`.
#[test]
fn a_redirecting_upstream_is_an_error_naming_both_ends_and_the_other_host_gets_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "scenario.yaml", MINIMAL_SCENARIO);
    let elsewhere = Scripted::start(|_, socket| send(socket, &answer("200 OK", "content-type: text/event-stream\r\n", &chat_stream("From elsewhere: 42."))));
    let target = format!("{}/v1/chat/completions", elsewhere.addr);
    let location = target.clone();
    let redirecting = Scripted::start(move |_, socket| send(socket, &answer("307 Temporary Redirect", &format!("location: {location}\r\n"), "")));
    let args = ["run", "scenario.yaml", "--out", "out", "--upstream", &redirecting.addr, "--record-mode", "all"];
    let (run, _) = run_within(dir.path(), &args, &[], Duration::from_secs(60));
    assert_eq!(elsewhere.count(), 0, "the redirect was followed: {}", text(&run.stderr));
    assert!(redirecting.count() >= 1);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let runs = read_rows(&dir.path().join("out/runs.parquet"));
    let error = &runs[0]["error"];
    assert!(error.contains(&format!("{}/v1/chat/completions", redirecting.addr)) && error.contains(&target) && error.contains("307"), "{error}");
}

/// The key the hostile upstream is sent and echoes.
const KEY: &str = "sk-planted-live-key-9191";

/// [`KEY`] as a provider's JSON may write it, every `-` escaped.
fn escaped_key() -> String {
    KEY.replace('-', "\\u002d")
}

/// Appends the key to every id in `value` (`id`, Gemini's `responseId`),
/// as an upstream minting ids from what it was sent would.
fn key_in_ids(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            for (name, field) in fields.iter_mut() {
                match field {
                    Value::String(id) if name == "id" || name == "responseId" => id.push_str(&format!("_{KEY}")),
                    other => key_in_ids(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(key_in_ids),
        _ => {}
    }
}

/// One event's (or a whole body's) JSON with the key in its ids, a
/// `system_fingerprint` and an extra field (JSON-escaped there).
fn hostile_json(data: &str) -> String {
    let Ok(mut value @ Value::Object(_)) = serde_json::from_str::<Value>(data) else { return data.to_owned() };
    key_in_ids(&mut value);
    let fields = value.as_object_mut().unwrap();
    fields.insert("system_fingerprint".into(), format!("fp_{KEY}_9").into());
    fields.insert("x_echo".into(), "ESCAPED".into());
    value.to_string().replace("\"ESCAPED\"", &format!("\"{}\"", escaped_key()))
}

/// The answer `serve` gives to `request`, with the key echoed in a header,
/// each SSE event's `id` field, the ids, `system_fingerprint` and an extra
/// field of each event; the text carries it already (`serve`'s recording).
fn echoing_answer(serve: &str, request: &str) -> String {
    let (head, body) = request.split_once("\r\n\r\n").unwrap();
    let path = head.split(' ').nth(1).unwrap();
    let (served_head, served) = crate::util::post(serve, path, "anthropic-version: 2023-06-01\r\n", body);
    let content_type =
        served_head.lines().find_map(|line| line.to_ascii_lowercase().strip_prefix("content-type:").map(|v| v.trim().to_owned())).unwrap_or_default();
    let served = text(&served);
    let body = if content_type.starts_with("text/event-stream") {
        served
            .lines()
            .map(|line| line.strip_prefix("data: ").map_or_else(|| line.to_owned(), |data| format!("id: {KEY}\ndata: {}", hostile_json(data))))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        hostile_json(&served)
    };
    answer("200 OK", &format!("content-type: {content_type}\r\nx-echo: {KEY}\r\nx-request-id: req_{KEY}\r\n"), &body)
}

/// Regression: an upstream echoing the key it was sent put it verbatim
/// into the re-recording (14 times on Chat) and all three Parquet files.
#[test]
fn a_hostile_upstream_echoing_the_key_everywhere_leaves_it_in_no_file_on_any_wire() {
    let served = tempfile::tempdir().unwrap();
    let recording = write(served.path(), "echo.yaml", &format!("format: reloop.recording/v1\nexchanges:\n  - text: \"The answer is 42 ({KEY}).\"\n"));
    let serve = Serve::start_with(&recording, &[], Stdio::null());
    let keys = [("OPENAI_API_KEY", KEY), ("ANTHROPIC_API_KEY", KEY), ("GEMINI_API_KEY", KEY)];
    for wire in ["openai-chat", "openai-responses", "anthropic", "gemini"] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
        write(dir.path(), "scenario.yaml", &MINIMAL_SCENARIO.replace("model: gpt-4o\n", &format!("model: gpt-4o\nwire: {wire}\n")));
        let serve_addr = serve.addr.clone();
        let upstream = Scripted::start(move |request, socket| send(socket, &echoing_answer(&serve_addr, request)));
        let args = ["run", "scenario.yaml", "--out", "out", "--upstream", &upstream.addr, "--record-mode", "all"];
        let (run, _) = run_within(dir.path(), &args, &keys, Duration::from_secs(60));
        assert_eq!(run.status.code(), Some(0), "{wire}: {}", text(&run.stderr));
        assert!(upstream.requests.lock().unwrap().iter().all(|request| request.contains(KEY)), "{wire}: the key is sent");

        let rerecorded = std::fs::read_to_string(dir.path().join("recording.rerecorded.yaml")).unwrap();
        assert!(rerecorded.contains("The answer is 42 ([REDACTED])."), "{wire}: {rerecorded}");
        let files = every_file(dir.path());
        assert!(files.iter().any(|(path, _)| path.ends_with("out/events.parquet")) && files.iter().any(|(path, _)| path.ends_with("stderr.log")), "{wire}");
        for (path, bytes) in &files {
            let written = text(bytes);
            assert!(!written.contains("planted") && !written.contains(&escaped_key()), "{wire}: the key reached {}", path.display());
        }
        for table in ["runs", "steps", "events"] {
            let cells: String = read_rows(&dir.path().join(format!("out/{table}.parquet"))).iter().flat_map(|row| row.values().cloned()).collect();
            assert!(!cells.contains("planted") && !cells.contains("u002d"), "{wire}: the key reached {table}.parquet");
        }
    }
}

/// A scenario whose live calls may be silent for 2 s, retried once.
const STALL_SCENARIO: &str = "loop:\n  stream_idle_timeout_secs: 2\n  retry: { max_retries: 1, initial_backoff_ms: 10 }\n";

/// The scenario's own bound on a stalled run: every attempt cut at the
/// idle limit, plus 5 s.
const STALL_BOUND: Duration = Duration::from_secs(2 * 2 + 5);

/// Stalls the way `how` says, then closes (before [`UPSTREAM_LIFETIME`]).
fn stall(how: &str, socket: &mut TcpStream) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    match how {
        "never answers" => std::thread::sleep(Duration::from_secs(30)),
        "head then nothing" => {
            send(socket, head);
            std::thread::sleep(Duration::from_secs(30));
        }
        "comments for ever" => {
            send(socket, head);
            let comment = ": ping\n\n";
            for _ in 0..300 {
                send(socket, &format!("{:x}\r\n{comment}\r\n", comment.len()));
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        other => unreachable!("{other}"),
    }
}

/// Regression: an upstream that never answers, sends its head and stops,
/// or trickles SSE comments kept `run` waiting past
/// `loop.stream_idle_timeout_secs` (still hung at 75 s).
#[test]
fn a_stalled_upstream_ends_the_run_within_its_timeouts_with_a_report() {
    for how in ["never answers", "head then nothing", "comments for ever"] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
        write(dir.path(), "scenario.yaml", &format!("{MINIMAL_SCENARIO}{STALL_SCENARIO}"));
        let upstream = Scripted::start(move |_, socket| stall(how, socket));
        let args = ["run", "scenario.yaml", "--out", "out", "--upstream", &upstream.addr, "--record-mode", "all"];
        let (run, took) = run_within(dir.path(), &args, &[], Duration::from_secs(40));
        eprintln!("{how}: the run ended after {took:?}");
        assert!(took < STALL_BOUND, "{how}: {took:?}");
        assert_eq!(run.status.code(), Some(1), "{how}: {}", text(&run.stderr));
        assert_eq!(upstream.count(), 2, "{how}: one call and one retry");
        let runs = read_rows(&dir.path().join("out/runs.parquet"));
        assert!(runs[0]["error"].contains("nothing came for 2 s"), "{how}: {}", runs[0]["error"]);
    }
}

/// Regression: the first Ctrl-C said "finishing runs in flight" and waited
/// on the hung live call; only a second one exited, with no report.
#[test]
fn one_ctrl_c_ends_a_run_with_a_hung_live_call_within_3_s_with_its_report() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "scenario.yaml", MINIMAL_SCENARIO);
    let upstream = Scripted::start(|_, socket| stall("never answers", socket));
    let args = ["run", "scenario.yaml", "--out", "out", "--upstream", &upstream.addr, "--record-mode", "all"];
    let child = spawn(dir.path(), &args, &[]);
    let waiting = Instant::now();
    while upstream.count() == 0 {
        assert!(waiting.elapsed() < Duration::from_secs(20), "the live call never came");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let pid = child.id().to_string();
    let interrupted = Instant::now();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let (run, _) = wait_within(child, dir.path(), Duration::from_secs(20));
    let took = interrupted.elapsed();
    eprintln!("one Ctrl-C ended the run after {took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}: {}", text(&run.stderr));
    assert_eq!(run.status.code(), Some(130), "{}", text(&run.stderr));
    let runs = read_rows(&dir.path().join("out/runs.parquet"));
    assert_eq!(runs.len(), 1, "the run in flight is reported");
    assert!(runs[0]["error"].contains("interrupted"), "{}", runs[0]["error"]);
}

/// Regression: `--rerecord-to` naming the recording being replayed was
/// refused only after three live calls had been made (and paid for).
#[test]
fn rerecord_to_naming_the_replayed_recording_is_refused_before_any_live_call() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "scenario.yaml", MINIMAL_SCENARIO);
    let upstream = Scripted::start(|_, socket| send(socket, &answer("200 OK", "content-type: text/event-stream\r\n", &chat_stream("Live: 42."))));
    let args = ["run", "scenario.yaml", "--out", "out", "--upstream", &upstream.addr, "--record-mode", "all", "--rerecord-to", "./recording.yaml"];
    let (run, _) = run_within(dir.path(), &args, &[], Duration::from_secs(60));
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("--rerecord-to ./recording.yaml: is the recording the scenario replays"), "{}", text(&run.stderr));
    assert_eq!(upstream.count(), 0, "a live call was made before the refusal");
    assert_eq!(std::fs::read_to_string(dir.path().join("recording.yaml")).unwrap(), ONE_TEXT_RECORDING);
}

/// Issue 45: a trial whose upstream could not be reached failed for the
/// harness's reasons, not the agent's; it ended `llm_error` and counted
/// against the agent's pass rate. Now it is a harness error, left out of
/// the rates and counted apart, and the batch exits 3 (reloop's failure).
#[test]
fn trials_whose_upstream_cannot_be_reached_are_the_harnesss_failures_left_out_of_the_rates() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    write(dir.path(), "scenario.yaml", MINIMAL_SCENARIO);
    // A port nothing listens on: bound, then let go.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let upstream = format!("http://{closed}");
    let args = ["run", "scenario.yaml", "--out", "out", "--upstream", &upstream, "--record-mode", "all", "--repeat", "2"];
    let (run, _) = run_within(dir.path(), &args, &[], Duration::from_secs(60));
    assert_eq!(run.status.code(), Some(3), "{}{}", text(&run.stdout), text(&run.stderr));
    let runs = read_rows(&dir.path().join("out/runs.parquet"));
    assert_eq!(runs.len(), 2);
    for row in &runs {
        assert_eq!(row["outcome"], "harness_error", "{row:?}");
        assert!(row["error"].contains("could not be reached") && row["error"].contains(&closed.to_string()), "{}", row["error"]);
    }
    assert!(text(&run.stdout).contains("0/0 (2 left out: harness)"), "{}", text(&run.stdout));
}
