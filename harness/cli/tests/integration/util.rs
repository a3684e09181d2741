//! Helpers: where the repository is, and how to run the binary.

use std::io::{BufRead, BufReader, Lines, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Output, Stdio};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// `reloop` with `args`, run from `cwd`.
pub fn reloop(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reloop")).current_dir(cwd).args(args).env("NO_COLOR", "1").output().expect("the reloop binary runs")
}

/// A running `reloop serve`, killed when dropped, however the test ends.
pub struct Serve {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`, from the first line it printed.
    pub addr: String,
    /// The rest of its standard output.
    pub stdout: Lines<BufReader<ChildStdout>>,
}

impl Serve {
    /// `reloop serve --recording <recording> --port 0`, once it has printed
    /// its address.
    pub fn start(recording: &Path) -> Self {
        Self::start_with(recording, &[], Stdio::inherit())
    }

    /// As [`Serve::start`], with extra flags and its log (stderr) sent to `log`.
    pub fn start_with(recording: &Path, flags: &[&str], log: Stdio) -> Self {
        let mut all = vec!["--recording", recording.to_str().expect("UTF-8 path")];
        all.extend_from_slice(flags);
        Self::start_with_flags(&all, log)
    }

    /// `reloop serve --port 0` with `flags` (which name what to serve), its
    /// log (stderr) sent to `log`.
    pub fn start_with_flags(flags: &[&str], log: Stdio) -> Self {
        Self::spawn(&[&["serve", "--port", "0"], flags].concat(), log)
    }

    /// `reloop ARGS` for a command that serves on loopback and prints
    /// `… on http://127.0.0.1:PORT` first (`serve`, `record`).
    pub fn spawn(args: &[&str], log: Stdio) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_reloop"))
            .args(args)
            .stdin(Stdio::null())
            .stderr(log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the reloop binary runs");
        let stdout = BufReader::new(child.stdout.take().expect("piped")).lines();
        // Owned from here, so a failed start still kills the child.
        let mut server = Self { child, addr: String::new(), stdout };
        // `reloop serve: <recording> on http://127.0.0.1:PORT`
        let first = server.stdout.next().and_then(Result::ok).unwrap_or_default();
        let addr = first.rsplit_once(" on ").map(|(_, addr)| addr.trim()).filter(|addr| addr.starts_with("http://"));
        server.addr = addr.unwrap_or_else(|| panic!("reloop serve prints its address first, got {first:?}")).to_owned();
        server
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGINT (Ctrl-C) and waits for the exit.
    pub fn interrupt(self) -> std::process::ExitStatus {
        self.signal("INT", std::time::Duration::from_secs(60))
    }

    /// Sends one `signal` (`INT`, `TERM`, `HUP`) and waits for the exit,
    /// which must come within `limit`.
    pub fn signal(self, signal: &str, limit: std::time::Duration) -> std::process::ExitStatus {
        let sent = Command::new("kill").args([&format!("-{signal}"), &self.child.id().to_string()]).status().expect("kill runs");
        assert!(sent.success(), "SIG{signal} sent");
        self.wait(limit)
    }

    /// Waits for the exit, which must come within `limit`.
    pub fn wait(mut self, limit: std::time::Duration) -> std::process::ExitStatus {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("the process can be waited for") {
                return status;
            }
            assert!(start.elapsed() < limit, "still running after {limit:?}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// The OpenAI base URL (up to `/v1`) of `session`.
    pub fn openai_base(&self, session: &str) -> String {
        format!("{}/s/{session}/v1", self.addr)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Writes a file under `dir`, creating parents.
pub fn write(dir: &Path, relative: &str, text: &str) -> PathBuf {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");
    path
}

/// A minimal valid recording answering with one text turn.
pub const ONE_TEXT_RECORDING: &str = "format: reloop.recording/v1\nexchanges:\n  - text: The answer is 42.\n";

/// A minimal valid scenario using `recording.yaml` beside it.
pub const MINIMAL_SCENARIO: &str = "\
model: gpt-4o
system: You are terse.
task: What is the answer?
recording: recording.yaml
expect:
  outcome: final_answer
  final_answer_contains: [\"42\"]
";

/// POSTs `body` over HTTP/1.0 (no chunked framing, so the body bytes are
/// the payload itself) with `headers` (`Name: value\r\n` each); returns the
/// head and the body.
pub fn post(addr: &str, path: &str, headers: &str, body: &str) -> (String, Vec<u8>) {
    let authority = addr.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(authority).unwrap();
    write!(stream, "POST {path} HTTP/1.0\r\nHost: {authority}\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}", body.len())
        .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    (String::from_utf8_lossy(&response[..split]).into_owned(), response[split..].to_vec())
}

/// One HTTP request's head and body, as text.
pub fn read_request(socket: &mut TcpStream) -> String {
    let mut request = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = socket.read(&mut buffer).unwrap();
        request.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&request).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length:").map(|n| n.trim().parse::<usize>().unwrap()));
            if read == 0 || body.len() >= length.unwrap_or(0) {
                return text;
            }
        }
        if read == 0 {
            return text;
        }
    }
}

/// `reloop ARGS` from `cwd` with `env` added.
pub fn reloop_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reloop"));
    command.current_dir(cwd).args(args).env("NO_COLOR", "1").env_remove("OPENAI_API_KEY");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("the reloop binary runs")
}

/// Each exchange's text, in order.
pub fn texts(recording: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(recording).unwrap();
    let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let exchanges = value["exchanges"].as_array().unwrap();
    exchanges
        .iter()
        .map(|exchange| match exchange["parts"].as_array() {
            Some(parts) => parts.iter().filter(|part| part["type"] == "text").map(|part| part["text"].as_str().unwrap()).collect(),
            None => exchange["text"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

/// A scenario in `dir` whose agent is `sh -c SCRIPT`, over the SDK agent's recording.
pub fn shell_scenario(dir: &Path, name: &str, script: &str, timeout_s: u64, expect: &str) -> PathBuf {
    let recording = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/black-box/sdk-agent.recording.yaml");
    let script = script.replace('\'', "''");
    write(
        dir,
        &format!("{name}.yaml"),
        &format!(
            "name: {name}\nmodel: gpt-4.1\ntask: t\nrecording: {}\nagent:\n  command: [sh, -c, '{script}']\n  timeout_s: {timeout_s}\n  files: {{ notes/a.txt: \"port {{port}}\" }}\nexpect: {expect}\n",
            recording.display()
        ),
    )
}
