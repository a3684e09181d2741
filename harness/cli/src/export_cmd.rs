//! `reloop export REPORT --otlp FILE | --otlp-endpoint URL | --atif DIR`:
//! a report's runs in the formats other tools read (`docs/export.md`).

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use reloop_eval::report::write_atomically;
use reloop_files::scenario::spec::ScenarioSpec;
use reloop_report::export::{RunTrace, atif, otlp};

use crate::app::ExportArgs;
use crate::exit_code;

/// How long a collector may take to answer: it is told the whole report in
/// one request.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the command; returns the exit code.
pub fn run(args: &ExportArgs) -> anyhow::Result<i32> {
    let runs = match RunTrace::load(&args.report) {
        Ok(runs) => runs,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    if args.otlp.is_some() || args.otlp_endpoint.is_some() {
        let openings: Vec<Option<atif::Opening>> = runs.iter().map(opening).collect();
        let body = serde_json::to_vec(&otlp::request_with_openings(&runs, args.otel_conventions, &openings))?;
        let traces = runs.len();
        if let Some(path) = &args.otlp {
            write_atomically(path, |file| file.write_all(&body))?;
            println!("otlp: {traces} traces: {}", path.display());
        }
        if let Some(endpoint) = &args.otlp_endpoint {
            if let Err(message) = post(endpoint, body) {
                eprintln!("error: {message}");
                return Ok(exit_code::BAD_INPUT);
            }
            println!("otlp: {traces} traces sent to {endpoint}");
        }
    }
    if let Some(dir) = &args.atif {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut no_opening = 0;
        for run in &runs {
            let repeat = seen.entry(atif::file_name(run, 1)).and_modify(|n| *n += 1).or_insert(1);
            let path = dir.join(atif::file_name(run, *repeat));
            let opening = opening(run);
            if opening.is_none() {
                no_opening += 1;
            }
            let body = serde_json::to_vec_pretty(&atif::trajectory(run, opening.as_ref()))?;
            write_atomically(&path, |file| file.write_all(&body))?;
        }
        println!("atif: {} trajectories in {}", runs.len(), dir.display());
        if no_opening > 0 {
            eprintln!("atif: {no_opening} runs without their task step: their scenario file could not be read from here");
        }
    }
    Ok(exit_code::SUCCESS)
}

/// The system prompt and task of a run's scenario: the report names the
/// file (relative to where the run was started), not its prompts.
fn opening(run: &RunTrace) -> Option<atif::Opening> {
    let spec: ScenarioSpec = reloop_files::yaml::load(Path::new(&run.scenario_file)).ok()?;
    Some(atif::Opening { system: spec.system, task: spec.task })
}

/// POSTs an `ExportTraceServiceRequest` to `ENDPOINT/v1/traces` as OTLP/HTTP
/// with a JSON body; anything but a 2xx answer is an error naming it.
fn post(endpoint: &str, body: Vec<u8>) -> Result<(), String> {
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(format!("--otlp-endpoint `{endpoint}`: expected an http:// or https:// URL"));
    }
    let url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
    reloop_agent::client::ensure_crypto_provider();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        // A redirect is never followed: the report would go to a host the
        // user did not name, and the message would name the first one.
        let client = reqwest::Client::builder().timeout(ENDPOINT_TIMEOUT).redirect(reqwest::redirect::Policy::none()).build().map_err(|e| e.to_string())?;
        let response = client.post(&url).header("content-type", "application/json").body(body).send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response.headers().get("location").map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
            return Err(reloop_wire::redirect::refused(&url, status.as_u16(), location.as_deref()));
        }
        if status.is_success() {
            return Ok(());
        }
        let answer = response.text().await.unwrap_or_default();
        Err(format!("{url} answered {status}: {}", answer.chars().take(300).collect::<String>()))
    })
}
