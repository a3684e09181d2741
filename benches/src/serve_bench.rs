//! `reloop-bench`'s serve figures (issue 44): `reloop serve` and the floor
//! ([`crate::serve_load`]) each in a process of its own, driven in turn
//! from this one by 1, 8 and 64 concurrent sessions of `turns` streamed
//! turns, in every repeat, so both sides of each ratio ran under the same
//! load. A lost or mixed session fails the bench.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::serve_load::{Measured, capture_frames, client, drive, recording, serve_floor};

/// The session counts measured.
pub const CONCURRENCY: [usize; 3] = [1, 8, 64];

/// A server process, killed when dropped, and the root URL it printed.
struct Server {
    child: Child,
    root: String,
}

impl Server {
    /// Starts `program args`, whose first stdout line ends `… on http://ADDR`.
    fn start(program: &Path, args: &[&str]) -> Result<Self, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", program.display()))?;
        let mut first = String::new();
        let read = BufReader::new(child.stdout.take().expect("piped")).read_line(&mut first);
        let root = first.rsplit_once(" on ").map(|(_, root)| root.trim().to_owned()).filter(|root| root.starts_with("http://"));
        match (read, root) {
            (Ok(_), Some(root)) => Ok(Self { child, root }),
            _ => {
                let _ = child.kill();
                Err(format!("{} {} printed no address: {first:?}", program.display(), args.join(" ")))
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `reloop-bench --floor-serve URL --turns N`: captures what `URL` (a
/// `reloop serve` root) streams for `turns` turns, prints `floor on
/// http://ADDR` and serves those bytes until killed, on one thread as
/// `reloop serve` does.
pub fn floor_serve_process(reloop_root: &str, turns: usize) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let frames = capture_frames(&client(), reloop_root, "load/r/capture", turns).await?;
        let addr = serve_floor(frames).await.map_err(|e| e.to_string())?;
        println!("floor on http://{addr}");
        std::future::pending::<()>().await;
        Ok(())
    })
}

/// Both sides of one session count in one repeat.
struct Pair {
    reloop: Measured,
    floor: Measured,
}

/// Measures and prints the serve figures; `Err` on a lost or mixed session.
pub fn bench(reloop: &Path, myself: &Path, work: &Path, repeats: usize, turns: usize) -> Result<(), String> {
    let file = work.join("load.recording.yaml");
    std::fs::write(&file, recording(turns)).map_err(|e| format!("{}: {e}", file.display()))?;
    let served = Server::start(reloop, &["serve", "--recording", crate::figures::path_str(&file)?, "--port", "0", "--quiet"])?;
    let turns_arg = turns.to_string();
    let floor = Server::start(myself, &["--floor-serve", &served.root, "--turns", &turns_arg])?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let client = client();
    let mut pairs: Vec<Vec<Pair>> = CONCURRENCY.iter().map(|_| Vec::new()).collect();
    runtime.block_on(async {
        // One untimed round: connections and both servers warm.
        drive(&client, &served.root, "load/r/warm", 8, turns).await;
        drive(&client, &floor.root, "warm", 8, turns).await;
        for repeat in 0..repeats {
            for (index, &sessions) in CONCURRENCY.iter().enumerate() {
                let floor = drive(&client, &floor.root, &format!("r{repeat}-c{sessions}"), sessions, turns).await;
                let reloop = drive(&client, &served.root, &format!("load/r/r{repeat}-c{sessions}"), sessions, turns).await;
                eprintln!(
                    "repeat {}: {sessions:>2} sessions: reloop serve {:>8.0} req/s p99 {:>6.2} ms, floor {:>8.0} req/s p99 {:>6.2} ms",
                    repeat + 1,
                    reloop.requests_per_second(),
                    ms(reloop.p99()),
                    floor.requests_per_second(),
                    ms(floor.p99())
                );
                pairs[index].push(Pair { reloop, floor });
            }
        }
    });
    println!("\nreloop serve against the floor serving the same bytes: {turns}-turn streamed Chat sessions, all at once; {repeats} repeats");
    println!(
        "{:<10} {:>14} {:>14} {:>18} {:>14} {:>14}  every run (ratio)",
        "sessions", "reloop req/s", "floor req/s", "reloop ÷ floor", "reloop p99 ms", "floor p99 ms"
    );
    let mut failures = Vec::new();
    for (index, &sessions) in CONCURRENCY.iter().enumerate() {
        let runs = &pairs[index];
        let mut ratios: Vec<f64> = runs.iter().map(|p| p.reloop.requests_per_second() / p.floor.requests_per_second()).collect();
        let all = crate::figures::listed(&ratios, 2);
        let median = |mut values: Vec<f64>| crate::figures::median(&mut values);
        println!(
            "{sessions:<10} {:>14.0} {:>14.0} {:>18.2} {:>14.2} {:>14.2}  ({all}){}",
            median(runs.iter().map(|p| p.reloop.requests_per_second()).collect()),
            median(runs.iter().map(|p| p.floor.requests_per_second()).collect()),
            crate::figures::median(&mut ratios),
            median(runs.iter().map(|p| ms(p.reloop.p99())).collect()),
            median(runs.iter().map(|p| ms(p.floor.p99())).collect()),
            if sessions == 64 { "  goal ≥ 0.7" } else { "" }
        );
        failures.extend(runs.iter().flat_map(|p| p.reloop.failures.iter().chain(&p.floor.failures)).cloned());
    }
    let requests: usize = pairs.iter().flatten().map(|p| p.reloop.answered).sum();
    println!("sessions lost or mixed: {} ({requests} reloop requests answered with their own turn's text)", failures.len());
    match failures.first() {
        None => Ok(()),
        Some(first) => Err(format!("{} requests failed; the first: {first}", failures.len())),
    }
}

fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}
