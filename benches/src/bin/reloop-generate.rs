//! Writes a generated workload (`reloop_benches::workload`) into a
//! directory, for sweeps at scale (`benches/scale/run.sh --suites
//! generated`):
//!
//! ```sh
//! cargo run --release -p reloop-benches --bin reloop-generate -- DIR --scenarios 1000 --steps 20 --context-window 8000
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use reloop_benches::workload::Workload;

const USAGE: &str = "usage: reloop-generate DIR [--scenarios N] [--steps K] [--result-chars N] [--context-window TOKENS]";

fn parse() -> Result<(PathBuf, Workload), String> {
    let mut workload = Workload { scenarios: 1_000, steps: 20, result_chars: 2_000, context_window: Workload::UNBOUNDED };
    let mut dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = || -> Result<u64, String> {
            let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
            value.parse().map_err(|_| format!("{arg}: `{value}` is not a whole number"))
        };
        match arg.as_str() {
            "--scenarios" => workload.scenarios = number()? as usize,
            "--steps" => workload.steps = u32::try_from(number()?).map_err(|_| "--steps: too large".to_owned())?,
            "--result-chars" => workload.result_chars = number()? as usize,
            "--context-window" => workload.context_window = number()?,
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            path if dir.is_none() => dir = Some(PathBuf::from(path)),
            extra => return Err(format!("one directory only (also got {extra})")),
        }
    }
    if workload.steps < 1 {
        return Err("--steps: at least 1".to_owned());
    }
    Ok((dir.ok_or("no directory given")?, workload))
}

fn main() -> ExitCode {
    let (dir, workload) = match parse() {
        Ok(parsed) => parsed,
        Err(error) => {
            eprintln!("reloop-generate: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let written = std::fs::create_dir_all(&dir).and_then(|()| workload.write(&dir));
    match written {
        Ok(files) => {
            println!("{} scenarios × {} steps in {}", files.len(), workload.steps, dir.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("reloop-generate: {}: {error}", dir.display());
            ExitCode::FAILURE
        }
    }
}
