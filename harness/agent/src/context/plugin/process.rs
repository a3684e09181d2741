//! A plug-in's process: started with piped stdin, stdout and stderr, asked
//! one line at a time with a real-time bound on each answer (the loop's
//! clock is virtual, a plug-in's CPU is not), killed and reaped when
//! dropped, so a run leaves no process behind.
//!
//! Three threads serve the pipes, so that no pipe can block the loop past
//! the bound: one writes (a plug-in that stops reading would otherwise
//! stall a large write), one reads stdout lines into a channel the loop
//! waits on with a timeout, one keeps the tail of stderr for error messages.
//! Each ends when its pipe closes, which killing the child does.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bytes of stderr kept for the error message.
const STDERR_TAIL_BYTES: usize = 2_000;

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Silence {
    /// No line within the bound.
    TimedOut,
    /// Stdout closed: the process exited (or closed it), with this status.
    Exited(String),
}

/// A running plug-in.
pub struct PluginProcess {
    child: Child,
    /// Lines to write; dropped first, which ends the writer.
    to_stdin: Option<Sender<Vec<u8>>>,
    from_stdout: Receiver<std::io::Result<String>>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    /// Closed when the stderr thread has read everything.
    stderr_read: Receiver<()>,
}

impl PluginProcess {
    /// Starts `command` in `dir`.
    pub fn start(command: &[String], dir: &Path) -> std::io::Result<Self> {
        let (program, args) = command.split_first().ok_or_else(|| std::io::Error::other("the command is empty"))?;
        let mut child = Command::new(program).args(args).current_dir(dir).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (stdin, stdout, stderr) = (stdin.expect("piped"), stdout.expect("piped"), stderr.expect("piped"));

        let (to_stdin, lines_to_write) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            let mut stdin = stdin;
            // A write error is a closed pipe: the reader sees the exit.
            for line in lines_to_write {
                if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                    return;
                }
            }
        });
        let (lines_read, from_stdout) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if lines_read.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        let tail = Arc::clone(&stderr_tail);
        let (stderr_done, stderr_read) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            keep_tail(stderr, &tail);
            drop(stderr_done);
        });
        Ok(Self { child, to_stdin: Some(to_stdin), from_stdout, stderr_tail, stderr_read })
    }

    /// Writes `line` (a newline is added).
    pub fn send(&self, line: &str) {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        // A writer gone means the process closed stdin; its silence says why.
        let _ = self.to_stdin.as_ref().map(|writer| writer.send(bytes));
    }

    /// The next line it writes, waiting at most `limit`.
    pub fn receive(&mut self, limit: Duration) -> Result<String, Silence> {
        match self.from_stdout.recv_timeout(limit) {
            Ok(Ok(line)) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(Silence::TimedOut),
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => Err(Silence::Exited(self.exit_status())),
        }
    }

    /// How it exited, waiting briefly for a process that closed stdout.
    fn exit_status(&mut self) -> String {
        for _ in 0..50 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.to_string();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        "closed its stdout".to_owned()
    }

    /// Kills and reaps it (already exited is fine), then gives the last
    /// bytes it wrote on stderr, trimmed.
    pub fn stop(&mut self) -> String {
        self.to_stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Stderr closes with the process, unless a child of its own holds it.
        let _ = self.stderr_read.recv_timeout(Duration::from_millis(500));
        let tail = self.stderr_tail.lock().map(|tail| String::from_utf8_lossy(&tail).trim().to_owned());
        tail.unwrap_or_default()
    }
}

impl Drop for PluginProcess {
    fn drop(&mut self) {
        self.to_stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads `stderr` to its end, keeping its last [`STDERR_TAIL_BYTES`].
fn keep_tail(mut stderr: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut buffer = [0u8; 4096];
    while let Ok(read) = stderr.read(&mut buffer) {
        if read == 0 {
            return;
        }
        let Ok(mut tail) = tail.lock() else { return };
        tail.extend_from_slice(&buffer[..read]);
        let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
        tail.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> PluginProcess {
        PluginProcess::start(&["sh".into(), "-c".into(), script.into()], Path::new(".")).unwrap()
    }

    #[test]
    fn it_answers_line_by_line_and_its_exit_and_stderr_are_seen() {
        let mut process = sh("read line; echo \"got $line\"; echo oops >&2; exit 3");
        process.send("hello");
        assert_eq!(process.receive(Duration::from_secs(5)), Ok("got hello".into()));
        assert_eq!(process.receive(Duration::from_secs(5)), Err(Silence::Exited("exit status: 3".into())));
        assert_eq!(process.stop(), "oops");
    }

    #[test]
    fn a_silent_process_times_out_and_is_killed_and_reaped_when_dropped() {
        let mut process = sh("exec sleep 30");
        assert_eq!(process.receive(Duration::from_millis(100)), Err(Silence::TimedOut));
        let pid = process.child.id();
        drop(process);
        // Reaped: no zombie is left under that pid.
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "process {pid} is gone");
    }
}
