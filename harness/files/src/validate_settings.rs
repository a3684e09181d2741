//! Range checks on every numeric setting of a scenario and a recording,
//! run when the file loads (the ranges are listed in
//! `docs/scenario-format.md` and `docs/recording-format.md`): windows and
//! budgets above zero, ratios in (0, 1], low water below high water, waits
//! within a day of virtual time, faults aimed at exchanges that exist.

use reloop_agent::LoopSettings;
use reloop_agent::context::native::{NATIVE_WIRES, has_native};
use reloop_agent::context::{StrategyName, StrategySpec};
use reloop_recording::Recording;
use reloop_recording::fault::MAX_VIRTUAL_SECS;

use crate::input_error::RangeError;
use crate::scenario::spec::{Bounds, Ending, ScenarioSpec, WireChoice};

/// The longest virtual wait in milliseconds: one day.
pub const MAX_VIRTUAL_MS: u64 = MAX_VIRTUAL_SECS * 1000;

type Checked = Result<(), RangeError>;

fn fail(field: impl Into<String>, message: impl Into<String>) -> Checked {
    Err(RangeError { field: field.into(), message: message.into() })
}

fn at_least(field: &str, value: u64, least: u64) -> Checked {
    if value < least { fail(field, format!("must be at least {least}, not {value}")) } else { Ok(()) }
}

fn ratio(field: &str, value: f64) -> Checked {
    if value.is_finite() && value > 0.0 && value <= 1.0 { Ok(()) } else { fail(field, format!("must be a ratio above 0 and at most 1, not {value}")) }
}

fn seconds(field: &str, value: u64, least: u64) -> Checked {
    at_least(field, value, least)?;
    if value > MAX_VIRTUAL_SECS { fail(field, format!("must be at most {MAX_VIRTUAL_SECS} s (one day), not {value}")) } else { Ok(()) }
}

fn millis(field: &str, value: u64) -> Checked {
    if value > MAX_VIRTUAL_MS { fail(field, format!("must be at most {MAX_VIRTUAL_MS} ms (one day), not {value}")) } else { Ok(()) }
}

fn bounds(field: &str, bounds: Option<Bounds>) -> Checked {
    match bounds {
        Some(Bounds { min: Some(min), max: Some(max) }) if min > max => fail(format!("{field}.min"), format!("is above `max` ({min} > {max})")),
        _ => Ok(()),
    }
}

/// A plug-in's command names a program and gives it at least a second.
fn check_plugin(strategy: &StrategySpec) -> Checked {
    let StrategySpec::Command(plugin) = strategy else { return Ok(()) };
    if plugin.command.first().is_none_or(String::is_empty) {
        return fail("loop.strategy.command", "must name a program (and its arguments)");
    }
    at_least("loop.strategy.timeout_secs", plugin.timeout_secs, 1)
}

/// A plug-in named by its file: the file exists in `dir`, the scenario's
/// folder (where the plug-in runs). A name that is no strategy's reads as a
/// file, so a misspelt name is refused here, with the names.
pub fn check_plugin_file(strategy: &StrategySpec, dir: &std::path::Path) -> Checked {
    let StrategySpec::File(file) = strategy else { return Ok(()) };
    if dir.join(file).is_file() {
        return Ok(());
    }
    let names: Vec<&str> = StrategyName::ALL.iter().map(|name| name.as_str()).collect();
    fail("loop.strategy", format!("`{}` is neither a strategy ({}) nor a plug-in's file in {}", file.display(), names.join(", "), dir.display()))
}

/// Checks the scenario's settings, then its faults against `recording`.
pub fn check_scenario(spec: &ScenarioSpec, recording: &Recording) -> Checked {
    at_least("context_window", spec.context_window, 1)?;
    if let Some(provider) = spec.provider_tokens
        && !(provider.per_o200k.is_finite() && provider.per_o200k > 0.0 && provider.per_o200k <= 100.0)
    {
        return fail("provider_tokens.per_o200k", "must be above 0 and at most 100");
    }
    check_loop(&spec.loop_settings)?;
    check_native(spec)?;
    check_plugin(&spec.loop_settings.strategy)?;
    for (name, tool) in &spec.tools {
        millis(&format!("tools.{name}.latency_ms"), tool.latency_ms)?;
        for (i, result) in tool.results.iter().enumerate() {
            millis(&format!("tools.{name}.results[{i}].latency_ms"), result.latency_ms.unwrap_or(0))?;
        }
    }
    if let Some(interrupt) = spec.interrupt {
        millis("interrupt.after_ms", interrupt.after_ms)?;
    }
    let expect = &spec.expect;
    if let Some(ending) = spec.ending {
        check_ending(spec, ending)?;
    }
    bounds("expect.steps", expect.steps)?;
    bounds("expect.cache_breaks", expect.cache_breaks)?;
    bounds("expect.llm_retries", expect.llm_retries)?;
    if let Some(rate) = expect.min_pass_rate.filter(|rate| !(0.0..=1.0).contains(rate)) {
        return fail("expect.min_pass_rate", format!("is {rate}, but a pass rate is between 0 and 1"));
    }
    for (i, fault) in spec.faults.iter().enumerate() {
        if let Err(error) = fault.fault() {
            let field = if error.field.is_empty() { format!("faults[{i}]") } else { format!("faults[{i}].{}", error.field) };
            return fail(field, error.message);
        }
        if fault.exchange >= recording.exchanges.len() {
            let count = recording.exchanges.len();
            return fail(
                format!("faults[{i}].exchange"),
                format!("is {}, but the recording has {count} exchanges (0 to {})", fault.exchange, count.saturating_sub(1)),
            );
        }
    }
    Ok(())
}

/// An ending the runner can replay: a known outcome, at least one step,
/// within the step budget without its "answer now" turn, and agreeing with
/// `expect.outcome`.
fn check_ending(spec: &ScenarioSpec, ending: Ending) -> Checked {
    if !Ending::OUTCOMES.contains(&ending.outcome) {
        let known: Vec<&str> = Ending::OUTCOMES.iter().map(|o| o.as_str()).collect();
        return fail("ending.outcome", format!("is {}, but a recorded session ends as one of: {}", ending.outcome, known.join(", ")));
    }
    at_least("ending.steps", ending.steps.into(), 1)?;
    if ending.steps >= spec.loop_settings.step_budget {
        return fail(
            "ending.steps",
            format!("is {}, but loop.step_budget ({}) must exceed it: the budget's last turn asks for an answer", ending.steps, spec.loop_settings.step_budget),
        );
    }
    if let Some(expected) = spec.expect.outcome.filter(|o| *o != ending.outcome) {
        return fail("expect.outcome", format!("is {expected}, but ending.outcome is {}", ending.outcome));
    }
    Ok(())
}

/// Checks the `loop:` settings.
pub fn check_loop(settings: &LoopSettings) -> Checked {
    at_least("loop.step_budget", settings.step_budget.into(), 1)?;
    at_least("loop.max_output_tokens", settings.max_output_tokens.into(), 1)?;
    seconds("loop.summary_timeout_secs", settings.summary_timeout_secs, 1)?;
    seconds("loop.stream_idle_timeout_secs", settings.stream_idle_timeout_secs, 1)?;
    at_least("loop.sub_agent.step_budget", settings.sub_agent.step_budget.into(), 1)?;
    seconds("loop.sub_agent.timeout_secs", settings.sub_agent.timeout_secs, 1)?;
    at_least("loop.sub_agent.result_max_chars", settings.sub_agent.result_max_chars as u64, 1)?;
    let doom = &settings.doom_loop;
    at_least("loop.doom_loop.threshold", doom.threshold as u64, 2)?;
    at_least("loop.doom_loop.cycle.max_period", doom.cycle.max_period as u64, 2)?;
    at_least("loop.doom_loop.cycle.repeats", doom.cycle.repeats as u64, 2)?;
    at_least("loop.doom_loop.no_progress.window", doom.no_progress.window as u64, 2)?;
    if let Some(budget) = settings.output_guards.truncate {
        at_least("loop.output_guards.truncate.max", budget.max, 16)?;
    }
    let retry = settings.retry;
    millis("loop.retry.max_backoff_ms", retry.max_backoff_ms)?;
    if retry.initial_backoff_ms > retry.max_backoff_ms {
        return fail("loop.retry.initial_backoff_ms", format!("is above `max_backoff_ms` ({})", retry.max_backoff_ms));
    }
    let tuning = &settings.strategies;
    let roku = tuning.roku;
    ratio("loop.strategies.roku.mid_water_ratio", roku.mid_water_ratio)?;
    ratio("loop.strategies.roku.high_water_ratio", roku.high_water_ratio)?;
    if roku.mid_water_ratio >= roku.high_water_ratio {
        return fail("loop.strategies.roku.mid_water_ratio", format!("must be below `high_water_ratio` ({})", roku.high_water_ratio));
    }
    at_least("loop.strategies.roku.keep_recent_rounds", roku.keep_recent_rounds as u64, 1)?;
    at_least("loop.strategies.opencode.prune_protect_tokens", tuning.opencode.prune_protect_tokens, 1)?;
    ratio("loop.strategies.codex.auto_compact_ratio", tuning.codex.auto_compact_ratio)?;
    at_least("loop.strategies.codex.user_message_max_tokens", tuning.codex.user_message_max_tokens, 1)?;
    at_least("loop.strategies.masking.keep", tuning.masking.keep as u64, 1)?;
    at_least("loop.strategies.masking.batch", tuning.masking.batch as u64, 1)?;
    let native = &tuning.native;
    ratio("loop.strategies.native.trigger_ratio", native.trigger_ratio)?;
    ratio("loop.strategies.native.compact_threshold_ratio", native.compact_threshold_ratio)?;
    if !(0.0..=1.0).contains(&native.clear_at_least_ratio) {
        return fail("loop.strategies.native.clear_at_least_ratio", format!("must be a ratio from 0 to 1, not {}", native.clear_at_least_ratio));
    }
    Ok(())
}

/// `strategy: native` asks the provider for its own context management,
/// which Chat Completions and Gemini do not have: the loop would compact
/// nothing and the run would pass for `none`, so it is refused (a sweep skips
/// those wires instead; `docs/native-context.md`).
fn check_native(spec: &ScenarioSpec) -> Checked {
    if !spec.loop_settings.strategy.is(StrategyName::Native) || spec.agent.is_some() {
        return Ok(());
    }
    let wires = match &spec.wire {
        WireChoice::One(wire) => std::slice::from_ref(wire),
        WireChoice::Many(wires) => wires.as_slice(),
    };
    match wires.iter().find(|wire| !has_native(**wire)) {
        Some(wire) => {
            fail("loop.strategy", format!("is native, but wire `{}` has no provider-side context management (native runs on {NATIVE_WIRES})", wire.as_str()))
        }
        None => Ok(()),
    }
}

/// Checks a recording: at least one exchange, waits within a day, raw
/// bodies that decode.
pub fn check_recording(recording: &Recording) -> Checked {
    if recording.exchanges.is_empty() {
        return fail("exchanges", "needs at least one exchange");
    }
    for (i, exchange) in recording.exchanges.iter().enumerate() {
        millis(&format!("exchanges[{i}].timing.first_byte_ms"), exchange.timing.first_byte_ms)?;
        millis(&format!("exchanges[{i}].timing.chunk_ms"), exchange.timing.chunk_ms)?;
        if let Some(Err(message)) = exchange.raw.as_ref().and_then(|raw| raw.body.as_ref()).map(|body| body.to_bytes()) {
            return fail(format!("exchanges[{i}].raw.body.base64"), message);
        }
    }
    for (i, answer) in recording.auxiliary.iter().enumerate() {
        if answer.when.as_deref() == Some("") {
            return fail(format!("auxiliary[{i}].when"), "is empty (it would match every tool-less request); leave it out for an answer in order");
        }
    }
    check_mcp(&recording.mcp)?;
    match recording.workspace.as_ref().map(reloop_recording::workspace::WorkspaceRecord::check) {
        Some(Err((field, message))) => fail(field, message),
        _ => Ok(()),
    }
}

/// Each MCP server named once, each message a request with one answer or
/// a notification with none.
fn check_mcp(servers: &[reloop_recording::mcp::McpServer]) -> Checked {
    for (i, server) in servers.iter().enumerate() {
        if server.name.is_empty() {
            return fail(format!("mcp[{i}].name"), "is empty");
        }
        if servers[..i].iter().any(|earlier| earlier.name == server.name) {
            return fail(format!("mcp[{i}].name"), format!("`{}` names a server an earlier entry names", server.name));
        }
        for (j, message) in server.messages.iter().enumerate() {
            if let Some(problem) = message.problem() {
                return fail(format!("mcp[{i}].messages[{j}]"), format!("(`{}`) {problem}", message.method));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(result: Checked) -> String {
        result.unwrap_err().field
    }

    #[test]
    fn defaults_are_in_range() {
        check_loop(&LoopSettings::default()).unwrap();
    }

    #[test]
    fn each_loop_setting_has_a_range() {
        type Spoil = fn(&mut LoopSettings);
        let cases: [(&str, Spoil); 23] = [
            ("loop.step_budget", |s| s.step_budget = 0),
            ("loop.max_output_tokens", |s| s.max_output_tokens = 0),
            ("loop.summary_timeout_secs", |s| s.summary_timeout_secs = 0),
            ("loop.stream_idle_timeout_secs", |s| s.stream_idle_timeout_secs = 86_401),
            ("loop.doom_loop.threshold", |s| s.doom_loop.threshold = 1),
            ("loop.doom_loop.cycle.max_period", |s| s.doom_loop.cycle.max_period = 1),
            ("loop.doom_loop.cycle.repeats", |s| s.doom_loop.cycle.repeats = 0),
            ("loop.doom_loop.no_progress.window", |s| s.doom_loop.no_progress.window = 1),
            ("loop.retry.max_backoff_ms", |s| s.retry.max_backoff_ms = u64::MAX),
            ("loop.retry.initial_backoff_ms", |s| s.retry.initial_backoff_ms = 40_000),
            ("loop.strategies.roku.high_water_ratio", |s| s.strategies.roku.high_water_ratio = 1.5),
            ("loop.strategies.roku.mid_water_ratio", |s| s.strategies.roku.mid_water_ratio = 0.8),
            ("loop.strategies.roku.keep_recent_rounds", |s| s.strategies.roku.keep_recent_rounds = 0),
            ("loop.strategies.opencode.prune_protect_tokens", |s| s.strategies.opencode.prune_protect_tokens = 0),
            ("loop.strategies.codex.auto_compact_ratio", |s| s.strategies.codex.auto_compact_ratio = f64::NAN),
            ("loop.strategies.codex.user_message_max_tokens", |s| s.strategies.codex.user_message_max_tokens = 0),
            ("loop.strategies.masking.batch", |s| s.strategies.masking.batch = 0),
            ("loop.strategies.native.trigger_ratio", |s| s.strategies.native.trigger_ratio = 0.0),
            ("loop.strategies.native.compact_threshold_ratio", |s| s.strategies.native.compact_threshold_ratio = 2.0),
            ("loop.strategies.native.clear_at_least_ratio", |s| s.strategies.native.clear_at_least_ratio = -0.1),
            ("loop.sub_agent.step_budget", |s| s.sub_agent.step_budget = 0),
            ("loop.sub_agent.timeout_secs", |s| s.sub_agent.timeout_secs = 0),
            ("loop.sub_agent.result_max_chars", |s| s.sub_agent.result_max_chars = 0),
        ];
        for (expected, spoil) in cases {
            let mut settings = LoopSettings::default();
            spoil(&mut settings);
            assert_eq!(field(check_loop(&settings)), expected);
        }
    }

    /// Native on a wire without a provider-side mechanism would run as
    /// `none` under another name: refused at `loop.strategy`, naming the wire.
    #[test]
    fn native_is_refused_on_wires_without_a_provider_mechanism() {
        let spec = |wire: &str| -> ScenarioSpec {
            serde_saphyr::from_str(&format!("model: m\ntask: t\nrecording: r.yaml\nwire: {wire}\nloop: {{ strategy: native }}\n")).unwrap()
        };
        check_native(&spec("anthropic")).unwrap();
        check_native(&spec("[openai-responses, anthropic]")).unwrap();
        for wire in ["openai-chat", "gemini", "[anthropic, gemini]"] {
            let error = check_native(&spec(wire)).unwrap_err();
            assert_eq!(error.field, "loop.strategy");
            assert!(error.message.contains("has no provider-side context management"), "{}", error.message);
        }
    }

    #[test]
    fn an_ending_must_be_replayable_and_agree_with_expect() {
        use reloop_agent::Outcome;
        let mut spec: ScenarioSpec = serde_saphyr::from_str("model: m\ntask: t\nrecording: r.yaml\nloop: { step_budget: 4 }\n").unwrap();
        let ending = |outcome, steps| Some(Ending { outcome, steps });
        spec.ending = ending(Outcome::Stopped, 3);
        check_ending(&spec, spec.ending.unwrap()).unwrap();
        let cases = [
            ("ending.outcome", ending(Outcome::Divergence, 3), None),
            ("ending.steps", ending(Outcome::Stopped, 0), None),
            ("ending.steps", ending(Outcome::Stopped, 4), None),
            ("expect.outcome", ending(Outcome::Stopped, 3), Some(Outcome::FinalAnswer)),
        ];
        for (expected, ending, expect) in cases {
            spec.ending = ending;
            spec.expect.outcome = expect;
            assert_eq!(field(check_ending(&spec, spec.ending.unwrap())), expected);
        }
    }
}
