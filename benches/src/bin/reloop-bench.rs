//! reloop against the floor as a user times them: whole processes, cold
//! start included (issue 25). Builds nothing: give it a `reloop` binary.
//!
//! ```sh
//! cargo build --release -p reloop -p reloop-benches --bins
//! target/release/reloop-bench --reloop target/release/reloop [--repeats 5] [--python /path/to/python]
//! ```
//!
//! It writes the floor bench's workload (`reloop_benches::workload`: 20
//! scenarios × 50 `read_file` steps with 2,000-character results, strategy
//! `none`) and a one-scenario, one-turn workload, then, in every repeat and
//! in turn: the floor process (`reloop-bench --floor-process`, axum +
//! reqwest, `reloop_benches::floor`) and `reloop run` on 1 job, the same on
//! 2 jobs, `reloop run` of the one-turn scenario, and, when `--python`
//! names a Python with `inspect_ai`, Inspect AI's mockllm on the same
//! workload (`benches/inspect/mockllm_replay.py`). Each process runs under
//! `/usr/bin/time` for its peak resident memory; its wall time is taken
//! around it. It prints every run's figures, then medians and ratios; then
//! `reloop serve` against its floor under 1, 8 and 64 concurrent sessions
//! (`reloop_benches::serve_bench`).
//!
//! `--sweep-memory` measures only peak memory against runs
//! (`reloop_benches::sweep_memory`): `reloop sweep` of the short suite copied
//! `--copies` (6) and 5× as many times, and of the long suite copied
//! `--long-copies` (4) and 5× as many times, `--repeats` times in turn, each
//! sweep's peak RSS, the medians and their 5N ÷ N ratio against the goal of
//! 1.10.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use reloop_benches::figures::{Sample, listed, measure, median, mib, path_str};
use reloop_benches::sweep_memory::{self, Suite};
use reloop_benches::workload::Workload;
use reloop_benches::{floor, serve_bench};

const USAGE: &str = "usage: reloop-bench --reloop PATH [--repeats N] [--scenarios N] [--steps K] [--result-chars N] [--python PATH] [--turns N]\n       \
                     reloop-bench --reloop PATH --sweep-memory [--repeats N] [--copies N] [--long-copies N]\n       \
                     reloop-bench --floor-process --jobs N [--scenarios N] [--steps K] [--result-chars N]\n       \
                     reloop-bench --floor-serve URL [--turns N]";

/// The command line.
struct Settings {
    reloop: Option<PathBuf>,
    repeats: usize,
    workload: Workload,
    python: Option<PathBuf>,
    /// Run the floor once in this process on this many jobs, and exit.
    floor_jobs: Option<usize>,
    /// Turns of each serve session.
    turns: usize,
    /// Serve the floor of `reloop serve` at this root until killed.
    floor_serve: Option<String>,
    /// Measure peak memory against runs instead (`reloop_benches::sweep_memory`).
    sweep_memory: bool,
    /// Copies of the short and the long suite in the smaller sweep.
    copies: (usize, usize),
}

fn parse() -> Result<Settings, String> {
    let workload = Workload { scenarios: 20, steps: 50, result_chars: 2_000, context_window: Workload::UNBOUNDED };
    let mut settings =
        Settings { reloop: None, repeats: 5, workload, python: None, floor_jobs: None, turns: 20, floor_serve: None, sweep_memory: false, copies: (6, 4) };
    let mut floor_process = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        let number = |value: String| value.parse::<usize>().map_err(|_| format!("{arg}: `{value}` is not a whole number"));
        match arg.as_str() {
            "--reloop" => settings.reloop = Some(PathBuf::from(value()?)),
            "--python" => settings.python = Some(PathBuf::from(value()?)),
            "--repeats" => settings.repeats = number(value()?)?.max(1),
            "--scenarios" => settings.workload.scenarios = number(value()?)?,
            "--steps" => settings.workload.steps = u32::try_from(number(value()?)?).map_err(|_| "--steps: too large")?.max(1),
            "--result-chars" => settings.workload.result_chars = number(value()?)?,
            "--jobs" => settings.floor_jobs = Some(number(value()?)?),
            "--floor-process" => floor_process = true,
            "--turns" => settings.turns = number(value()?)?.max(1),
            "--floor-serve" => settings.floor_serve = Some(value()?),
            "--sweep-memory" => settings.sweep_memory = true,
            "--copies" => settings.copies.0 = number(value()?)?.max(1),
            "--long-copies" => settings.copies.1 = number(value()?)?.max(1),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if floor_process != settings.floor_jobs.is_some() {
        return Err("--floor-process and --jobs go together".to_owned());
    }
    if !floor_process && settings.floor_serve.is_none() && settings.reloop.is_none() {
        return Err("--reloop PATH is required (cargo build --release -p reloop)".to_owned());
    }
    Ok(settings)
}

/// What is measured in every repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subject {
    Floor1,
    Reloop1,
    Floor2,
    Reloop2,
    OneTurn,
    Inspect,
}

impl Subject {
    fn label(self) -> &'static str {
        match self {
            Self::Floor1 => "floor, 1 job",
            Self::Reloop1 => "reloop run, 1 job",
            Self::Floor2 => "floor, 2 jobs",
            Self::Reloop2 => "reloop run, 2 jobs",
            Self::OneTurn => "reloop run, 1 scenario × 1 turn",
            Self::Inspect => "Inspect AI mockllm",
        }
    }
}

/// The bench's inputs on disk, and how to run each subject.
struct Bench {
    reloop: PathBuf,
    myself: PathBuf,
    work: PathBuf,
    workload: Workload,
    python: Option<PathBuf>,
    script: PathBuf,
}

impl Bench {
    fn run(&self, subject: Subject) -> Result<Sample, String> {
        let scenarios = self.work.join("scenarios");
        let out = self.work.join("out");
        let floor = |jobs: &str| {
            let workload = [self.workload.scenarios.to_string(), self.workload.steps.to_string(), self.workload.result_chars.to_string()];
            let args = ["--floor-process", "--jobs", jobs, "--scenarios", &workload[0], "--steps", &workload[1], "--result-chars", &workload[2]];
            measure(&self.myself, &args, &[], &self.work, &[0])
        };
        let reloop = |dir: &Path, jobs: &str| {
            let args = ["run", path_str(dir)?, "--jobs", jobs, "--out", path_str(&out)?];
            measure(&self.reloop, &args, &[], &self.work, &[0])
        };
        match subject {
            Subject::Floor1 => floor("1"),
            Subject::Floor2 => floor("2"),
            Subject::Reloop1 => reloop(&scenarios, "1"),
            Subject::Reloop2 => reloop(&scenarios, "2"),
            Subject::OneTurn => reloop(&self.work.join("one-turn"), "1"),
            Subject::Inspect => {
                let python = self.python.as_deref().expect("Inspect runs only with a Python");
                let (steps, count) = (self.workload.steps.to_string(), self.workload.scenarios.to_string());
                let output_file = self.work.join("tool-output.txt");
                let log_dir = self.work.join("inspect-logs");
                let args = [
                    path_str(&self.script)?,
                    "--output-file",
                    path_str(&output_file)?,
                    "--scenarios",
                    &count,
                    "--steps",
                    &steps,
                    "--log-dir",
                    path_str(&log_dir)?,
                ];
                measure(python, &args, &[], &self.work, &[0])
            }
        }
    }
}

/// Whether `python` imports `inspect_ai`; its version if so.
fn inspect_version(python: &Path) -> Option<String> {
    let output = Command::new(python).args(["-c", "import inspect_ai; print(inspect_ai.__version__)"]).stderr(Stdio::null()).output().ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn bench(settings: &Settings) -> Result<(), String> {
    let reloop = settings.reloop.clone().expect("checked by parse");
    let reloop = reloop.canonicalize().map_err(|e| format!("{}: {e}", reloop.display()))?;
    if !Path::new("/usr/bin/time").exists() {
        return Err("needs /usr/bin/time (Debian package `time`)".to_owned());
    }
    let work = std::env::temp_dir().join(format!("reloop-bench.{}", std::process::id()));
    if settings.sweep_memory {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let suites = [
            Suite { label: "short", folder: repo.join("scenarios"), copies: settings.copies.0 },
            Suite { label: "long", folder: repo.join("scenarios/long"), copies: settings.copies.1 },
        ];
        let measured = sweep_memory::bench(&reloop, &suites, &work, settings.repeats).map(drop);
        let _ = std::fs::remove_dir_all(&work);
        return measured;
    }
    let written = prepare(&work, settings.workload);
    let result = written.and_then(|()| {
        let python = settings.python.clone().filter(|python| match inspect_version(python) {
            Some(version) => {
                println!("Inspect AI {version} through {}", python.display());
                true
            }
            None => {
                println!("{} does not import inspect_ai: Inspect left out", python.display());
                false
            }
        });
        let myself = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("inspect/mockllm_replay.py");
        let bench = Bench { reloop, myself, work: work.clone(), workload: settings.workload, python, script };
        measure_all(&bench, settings.repeats)?;
        serve_bench::bench(&bench.reloop, &bench.myself, &work, settings.repeats, settings.turns)
    });
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// Writes the workload, the one-turn scenario and the tool output file.
fn prepare(work: &Path, workload: Workload) -> Result<(), String> {
    let one_turn = Workload { scenarios: 1, steps: 1, ..workload };
    let write = |dir: &Path, workload: Workload| std::fs::create_dir_all(dir).and_then(|()| workload.write(dir)).map_err(|e| format!("{}: {e}", dir.display()));
    write(&work.join("scenarios"), workload)?;
    write(&work.join("one-turn"), one_turn)?;
    std::fs::write(work.join("tool-output.txt"), workload.tool_output()).map_err(|e| format!("{}: {e}", work.display()))
}

fn measure_all(bench: &Bench, repeats: usize) -> Result<(), String> {
    let workload = bench.workload;
    println!(
        "{} scenarios × {} steps, {}-character results; {repeats} repeats, every subject in turn within each; reloop: {}",
        workload.scenarios,
        workload.steps,
        workload.result_chars,
        bench.reloop.display()
    );
    let mut subjects = vec![Subject::Floor1, Subject::Reloop1, Subject::Floor2, Subject::Reloop2, Subject::OneTurn];
    if bench.python.is_some() {
        subjects.push(Subject::Inspect);
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); subjects.len()];
    // One untimed pass first: the page cache then holds every binary and file
    // for all repeats alike (a cold start of the process, not of the disk).
    for &subject in &subjects {
        if subject != Subject::Inspect {
            bench.run(subject)?;
        }
    }
    for repeat in 0..repeats {
        for (index, &subject) in subjects.iter().enumerate() {
            let sample = bench.run(subject)?;
            eprintln!("repeat {}: {:<32} {:>9.1} ms {:>7.1} MiB", repeat + 1, subject.label(), ms(sample.wall), mib(sample.peak_rss_kib));
            samples[index].push(sample);
        }
    }
    let of = |subject: Subject| samples[subjects.iter().position(|&s| s == subject).expect("measured")].as_slice();
    println!("\n{:<32} {:>12} {:>12}  every run (ms)", "", "median ms", "peak MiB");
    for (index, &subject) in subjects.iter().enumerate() {
        let mut walls: Vec<f64> = samples[index].iter().map(|s| ms(s.wall)).collect();
        let mut rss: Vec<f64> = samples[index].iter().map(|s| mib(s.peak_rss_kib)).collect();
        let all = listed(&walls, 1);
        println!("{:<32} {:>12.1} {:>12.1}  {all}", subject.label(), median(&mut walls), median(&mut rss));
    }
    let ratios =
        |top: Subject, bottom: Subject| -> Vec<f64> { of(top).iter().zip(of(bottom)).map(|(a, b)| a.wall.as_secs_f64() / b.wall.as_secs_f64()).collect() };
    println!();
    let line = |label: &str, mut values: Vec<f64>, goal: &str| {
        let all = listed(&values, 2);
        let (low, high) = (values.iter().copied().fold(f64::INFINITY, f64::min), values.iter().copied().fold(0.0, f64::max));
        println!("{label:<44} median {:>6.2}  min {low:.2}  max {high:.2}  ({all})  {goal}", median(&mut values));
    };
    line("reloop ÷ floor, 1 job", ratios(Subject::Reloop1, Subject::Floor1), "goal ≤ 1.2");
    line("reloop ÷ floor, 2 jobs", ratios(Subject::Reloop2, Subject::Floor2), "");
    let (reloop_speedup, floor_speedup) = (ratios(Subject::Reloop1, Subject::Reloop2), ratios(Subject::Floor1, Subject::Floor2));
    let relative = reloop_speedup.iter().zip(&floor_speedup).map(|(reloop, floor)| reloop / floor).collect();
    line("reloop 2-job speedup (1 job ÷ 2 jobs)", reloop_speedup, "");
    line("floor 2-job speedup", floor_speedup, "");
    line("reloop's 2-job speedup ÷ the floor's", relative, "goal ≥ 0.95");
    if bench.python.is_some() {
        line("Inspect ÷ reloop on 2 jobs", ratios(Subject::Inspect, Subject::Reloop2), "goal ≥ 100");
    }
    let one_turn = of(Subject::OneTurn);
    let mut walls: Vec<f64> = one_turn.iter().map(|s| ms(s.wall)).collect();
    let mut rss: Vec<f64> = one_turn.iter().map(|s| mib(s.peak_rss_kib)).collect();
    let (wall, peak) = (median(&mut walls), median(&mut rss));
    let highest = rss.last().copied().unwrap_or_default();
    println!("{:<44} median {wall:>6.1} ms, {peak:.1} MiB peak (highest {highest:.1} MiB)  goal ≤ 20 ms, ≤ 32 MiB", "one-turn reloop run");
    Ok(())
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

fn main() -> ExitCode {
    let settings = match parse() {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("reloop-bench: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(jobs) = settings.floor_jobs {
        floor::run(&settings.workload, jobs);
        return ExitCode::SUCCESS;
    }
    if let Some(root) = &settings.floor_serve {
        return match serve_bench::floor_serve_process(root, settings.turns) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("reloop-bench --floor-serve: {error}");
                ExitCode::FAILURE
            }
        };
    }
    match bench(&settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("reloop-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
