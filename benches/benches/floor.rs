//! reloop against the floor, in one process: the workload of
//! `reloop_benches::workload` (default 20 scenarios × 50 steps, 2,000-character
//! tool results, strategy `none`) through reloop's real path
//! (`reloop_eval::run_all`: each run's loop, mock server, loopback HTTP and
//! SSE, counting, cache simulation, report) and through the floor
//! (`reloop_benches::floor`: axum + reqwest, no agent logic), on 1 and 2
//! jobs. Prints a table of medians and their ratios.
//!
//! Not criterion: a ratio taken on a shared machine is only fair when both
//! sides run under the same load, so the four timings (floor and reloop, 1
//! and 2 jobs) are taken in turn within each repeat, and the medians over
//! the repeats are compared.
//!
//! ```sh
//! cargo bench -p reloop-benches --bench floor                                 # K = 50 and 200, 5 repeats
//! cargo bench -p reloop-benches --bench floor -- --steps 50 --repeats 9 --scenarios 20
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reloop_benches::floor;
use reloop_benches::workload::Workload;
use reloop_eval::sweep::{RunVariant, StrategyName, Variant};
use reloop_eval::{Plan, RunOptions, run_all};

/// The bench's settings, from its command line.
struct Settings {
    steps: Vec<u32>,
    repeats: usize,
    scenarios: usize,
    result_chars: usize,
    /// Time only one side (`floor` or `reloop`), to profile it.
    only: Option<String>,
}

fn settings() -> Settings {
    let mut settings = Settings { steps: vec![50, 200], repeats: 5, scenarios: 20, result_chars: 2_000, only: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--steps" => settings.steps = value().split(',').map(|k| k.parse().expect("--steps: numbers")).collect(),
            "--repeats" => settings.repeats = value().parse().expect("--repeats: a number"),
            "--scenarios" => settings.scenarios = value().parse().expect("--scenarios: a number"),
            "--result-chars" => settings.result_chars = value().parse().expect("--result-chars: a number"),
            "--only" => settings.only = Some(value()),
            // What cargo passes to every bench target.
            "--bench" => {}
            other => panic!("unknown argument {other} (--steps K,K --repeats N --scenarios N --result-chars N --only floor|reloop)"),
        }
    }
    settings
}

/// Runs the planned batch on `jobs` threads; every run must pass.
fn reloop(plan: &Plan, jobs: usize) {
    let options = RunOptions { jobs, cancel: Arc::default(), live: None };
    let passed = AtomicUsize::new(0);
    run_all(plan, &options, &|_, report| {
        assert!(report.passed, "{}: {:?} {:?}", report.scenario, report.outcome, report.failed_expectations);
        passed.fetch_add(1, Ordering::Relaxed);
    })
    .expect("a thread pool starts");
    assert_eq!(passed.into_inner(), plan.runs());
}

/// CPU time (user and system) this process has used so far, from
/// `/proc/self/stat` (clock ticks of 10 ms): a 2-job run that costs more
/// CPU than the 1-job run contends for something; one that costs the same
/// but is not twice as fast lacks a free core.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat reads");
    // Fields after the command name, which ends with the last `)`.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a command name") + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10)
}

/// Wall and CPU time of `work`.
fn timed(work: impl FnOnce()) -> (Duration, Duration) {
    let (wall, cpu) = (Instant::now(), cpu_time());
    work();
    (wall.elapsed(), cpu_time().saturating_sub(cpu))
}

/// The speedup the machine gives two threads right now: a fixed amount of
/// pure arithmetic on one thread, then the same amount on each of two. On
/// a shared machine this, not 2, is what a 2-job speedup can reach.
fn machine_two_thread_speedup() -> f64 {
    fn spin() -> u64 {
        (0..200_000_000u64).fold(0u64, |h, i| std::hint::black_box(h.rotate_left(5) ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
    let one = Instant::now();
    std::hint::black_box(spin());
    let one = one.elapsed();
    let two = Instant::now();
    std::thread::scope(|scope| {
        let other = scope.spawn(spin);
        std::hint::black_box(spin());
        std::hint::black_box(other.join().expect("the spin ends"));
    });
    2.0 * one.as_secs_f64() / two.elapsed().as_secs_f64()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Median wall and CPU times of one K, indexed by side (floor, reloop) and
/// jobs - 1.
struct Row {
    steps: u32,
    wall: [[Duration; 2]; 2],
    cpu: [[Duration; 2]; 2],
}

/// The planned batch of `workload`, written into `dir`.
fn plan(workload: &Workload, dir: &std::path::Path) -> Plan {
    workload.write(dir).expect("the workload is written");
    let variants = vec![RunVariant::Swept(Variant::of_strategy(StrategyName::None))];
    Plan::validate(&[dir.to_owned()], variants).unwrap_or_else(|errors| panic!("the generated scenarios are valid: {errors:?}"))
}

/// One timing of `side` on `jobs` threads.
fn run_side(side: &str, workload: &Workload, plan: &Plan, jobs: usize) -> (Duration, Duration) {
    match side {
        "floor" => timed(|| {
            floor::run(workload, jobs);
        }),
        "reloop" => timed(|| reloop(plan, jobs)),
        other => panic!("--only {other}: floor or reloop"),
    }
}

fn measure(workload: Workload, repeats: usize) -> Row {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plan = plan(&workload, dir.path());
    // Warm-up: page in the code and build the tokenizer's tables.
    run_side("floor", &workload, &plan, 1);
    run_side("reloop", &workload, &plan, 1);
    let mut times: [[Vec<(Duration, Duration)>; 2]; 2] = Default::default();
    for repeat in 0..repeats {
        for jobs in [1, 2] {
            for (side, name) in ["floor", "reloop"].into_iter().enumerate() {
                times[side][jobs - 1].push(run_side(name, &workload, &plan, jobs));
            }
        }
        eprintln!("K = {}: repeat {}/{repeats} done", workload.steps, repeat + 1);
    }
    let wall = times.each_ref().map(|by_jobs| by_jobs.each_ref().map(|t| median(t.iter().map(|(wall, _)| *wall).collect())));
    let cpu = times.each_ref().map(|by_jobs| by_jobs.each_ref().map(|t| median(t.iter().map(|(_, cpu)| *cpu).collect())));
    Row { steps: workload.steps, wall, cpu }
}

/// Runs one side alone on 1 job, `repeats` times, printing each time: for
/// a profiler (`perf record`, `valgrind --tool=callgrind`).
fn profile(side: &str, workload: Workload, repeats: usize) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plan = plan(&workload, dir.path());
    for _ in 0..repeats {
        let (wall, cpu) = run_side(side, &workload, &plan, 1);
        println!("{side} K = {}: {:.3} s, CPU {:.2} s", workload.steps, wall.as_secs_f64(), cpu.as_secs_f64());
    }
}

fn main() {
    let settings = settings();
    if let Some(side) = &settings.only {
        for &steps in &settings.steps {
            profile(
                side,
                Workload { scenarios: settings.scenarios, steps, result_chars: settings.result_chars, context_window: Workload::UNBOUNDED },
                settings.repeats,
            );
        }
        return;
    }
    let machine_before = machine_two_thread_speedup();
    let rows: Vec<Row> = settings
        .steps
        .iter()
        .map(|&steps| {
            measure(
                Workload { scenarios: settings.scenarios, steps, result_chars: settings.result_chars, context_window: Workload::UNBOUNDED },
                settings.repeats,
            )
        })
        .collect();
    println!(
        "\n{} scenarios × K steps, {}-character tool results, strategy none; medians of {} repeats\n",
        settings.scenarios, settings.result_chars, settings.repeats
    );
    let machine_after = machine_two_thread_speedup();
    println!("machine: two threads of pure arithmetic run {machine_before:.2}x faster than one before the bench, {machine_after:.2}x after\n");
    println!("| K | jobs | floor | reloop | reloop ÷ floor | floor 2-job speedup | reloop 2-job speedup | floor CPU | reloop CPU |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let secs = |d: Duration| d.as_secs_f64();
    for row in &rows {
        for jobs in [1, 2] {
            let (f, r) = (row.wall[0][jobs - 1], row.wall[1][jobs - 1]);
            let speedup = |side: usize| {
                if jobs == 1 { "1".to_owned() } else { format!("{:.2}", secs(row.wall[side][0]) / secs(row.wall[side][1])) }
            };
            println!(
                "| {} | {jobs} | {:.3} s | {:.3} s | {:.2} | {} | {} | {:.2} s | {:.2} s |",
                row.steps,
                secs(f),
                secs(r),
                secs(r) / secs(f),
                speedup(0),
                speedup(1),
                secs(row.cpu[0][jobs - 1]),
                secs(row.cpu[1][jobs - 1]),
            );
        }
    }
}
