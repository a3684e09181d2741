//! The black-box scenario of `reloop import --agent`: the agent that wrote
//! the session runs on its recording (`agent: {preset, tools: replay}`), its
//! shell answered from the recording's `tool_side:` and its workspace
//! holding the session's first snapshot, with the expectations a faithful
//! replay meets: the recorded sequence of tool calls and the recorded
//! ending.

use reloop_agent::Outcome;
use std::collections::BTreeMap;

use reloop_files::agent_presets::{AgentPreset, misfit};
use reloop_files::scenario::agent::{AgentSpec, ToolSideMode, check_file_path};
use reloop_files::scenario::spec::{Expectations, ScenarioSpec};
use reloop_recording::Recording;

use super::{AgentWorld, world};
use crate::convert::{ConvertOptions, convert};
use crate::session::{Arguments, ImportedSession, Item};
use crate::workspace::workspace_root;

/// What `--agent` writes beside the built-in scenario.
#[derive(Debug, Clone)]
pub struct AgentImport {
    /// The agent.
    pub preset: AgentPreset,
    /// `NAME-PRESET`, which its files are named after.
    pub name: String,
    /// The black-box scenario.
    pub scenario: ScenarioSpec,
    /// Its recording, with `tool_side:`.
    pub recording: Recording,
    /// What the session told of the agent's world, and what it did not.
    pub world: AgentWorld,
}

/// Real seconds a replayed agent gets: the preset's default, and a second
/// for each recorded model call (a long session replays slower than a short one).
fn timeout_s(exchanges: usize) -> u64 {
    120 + exchanges as u64
}

/// Placeholders an `agent.files` text would have expanded (docs/black-box.md).
const PLACEHOLDERS: [&str; 8] = ["{task}", "{workspace}", "{scenario_dir}", "{base_url}", "{anthropic_base_url}", "{port}", "{model}", "{mcp."];

/// Whether `path` is in the folder the preset writes the agent's home to
/// (`.codex/`, `.claude/`: the first folder of the preset's own files).
fn in_agent_home(preset: AgentPreset, path: &str) -> bool {
    let first = |path: &'static str| path.split('/').next().filter(|_| path.contains('/'));
    preset
        .launch()
        .files
        .iter()
        .filter_map(|(file, _)| first(file))
        .any(|home| path == home || path.strip_prefix(home).is_some_and(|rest| rest.starts_with('/')))
}

/// Leaves out of `session` the calls the agent `preset` could not make (a
/// tool its pinned version does not declare, a required argument missing:
/// the scenario loader refuses them, `reloop_files::agent_presets::misfit`)
/// with their results, one gap per tool saying how many and why. A model
/// answer left without calls is joined into the next by the converter, as
/// any answer without calls followed by another is.
fn fit(preset: AgentPreset, session: &mut ImportedSession) -> Vec<String> {
    let mut dropped: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut ids = Vec::new();
    for item in &mut session.items {
        if let Item::Assistant(turn) = item {
            turn.tool_calls.retain(|call| {
                let arguments = match &call.arguments {
                    Arguments::Json(value) => value.clone(),
                    Arguments::Raw(text) => serde_json::from_str(text).unwrap_or_default(),
                };
                let Some(why) = misfit(preset, &call.name, &arguments) else { return true };
                dropped.entry(why).or_insert((0, turn.line)).0 += 1;
                ids.push(call.id.clone());
                false
            });
        }
    }
    session.items.retain(|item| !matches!(item, Item::ToolResult(result) if ids.contains(&result.call_id)));
    dropped
        .into_iter()
        .map(|(why, (count, line))| {
            format!("{count} calls left out of the agent's recording (the first at line {line}): {why}, so the replay could not make them")
        })
        .collect()
}

/// The black-box scenarios of `session`, one per user turn: `codex exec`
/// (like every preset's command) takes one task and ends with its answer,
/// so a session the user went on after an answer replays turn by turn, the
/// first as `NAME-PRESET`, the next as `NAME-PRESET-turn-2`, and so on. The
/// workspace root is the whole session's.
pub fn agent_imports(preset: AgentPreset, session: ImportedSession, options: &ConvertOptions, tools: ToolSideMode) -> Result<Vec<AgentImport>, String> {
    let calls = session.items.iter().filter_map(|item| if let Item::Assistant(turn) = item { Some(turn) } else { None }).flat_map(|turn| &turn.tool_calls);
    let root = options.workspace_root.clone().or_else(|| workspace_root(session.cwd.as_deref(), calls));
    let turns = turns(session);
    let several = turns.len() > 1;
    turns
        .into_iter()
        .enumerate()
        .map(|(index, turn)| {
            let name = if index == 0 { options.name.clone() } else { format!("{}-turn-{}", options.name, index + 1) };
            let mut options = ConvertOptions { name, workspace_root: root.clone(), ..options.clone() };
            if several {
                options.source = format!("{} (user turn {})", options.source, index + 1);
            }
            agent_import(preset, turn, &options, tools)
        })
        .collect()
}

/// `session` cut at each user message that follows a model answer without
/// tool calls (a follow-up, as the converter names it); the cut sessions
/// that hold a model call. A user message between tool calls (steering)
/// stays in its turn.
fn turns(mut session: ImportedSession) -> Vec<ImportedSession> {
    let items = std::mem::take(&mut session.items);
    let mut turns: Vec<ImportedSession> = Vec::new();
    let mut current: Vec<Item> = Vec::new();
    for item in items {
        let answered = current.iter().rev().find_map(|item| if let Item::Assistant(turn) = item { Some(turn.tool_calls.is_empty()) } else { None });
        let follows_user = matches!(current.last(), Some(Item::User { .. }));
        if matches!(item, Item::User { .. }) && answered == Some(true) && !follows_user {
            turns.push(ImportedSession { items: std::mem::take(&mut current), ..session.clone() });
        }
        current.push(item);
    }
    turns.push(ImportedSession { items: current, ..session.clone() });
    turns.retain(|turn| turn.items.iter().any(|item| matches!(item, Item::Assistant(_))));
    turns
}

/// The black-box scenario of one turn of `session`, written by `preset`'s agent, named
/// after `options.name`, with `tools` (`replay` or `replay-or-live`).
fn agent_import(preset: AgentPreset, mut session: ImportedSession, options: &ConvertOptions, tools: ToolSideMode) -> Result<AgentImport, String> {
    let calls = session.items.iter().filter_map(|item| if let Item::Assistant(turn) = item { Some(turn) } else { None }).flat_map(|turn| &turn.tool_calls);
    let root = options.workspace_root.clone().or_else(|| workspace_root(session.cwd.as_deref(), calls));
    let found = world(preset, &mut session, root.as_deref())?;
    let unfit = fit(preset, &mut session);
    let name = format!("{}-{}", options.name, preset.as_str());
    let recording_path = crate::recording_file_name(&name);
    let converted = convert(session, ConvertOptions { name: name.clone(), recording_path: recording_path.clone(), ..options.clone() });
    let mut world = found.placed(&converted.recording);
    world.gaps.extend(unfit);
    world.files.retain(|path, text| {
        let refused = check_file_path(path)
            .err()
            .map(str::to_owned)
            .or_else(|| in_agent_home(preset, path).then(|| "is in the agent's home, which its preset writes".to_owned()));
        match refused {
            Some(why) => {
                world.gaps.push(format!("{path}: {why}: left out of the snapshot"));
                false
            }
            None => {
                if let Some(placeholder) = PLACEHOLDERS.iter().find(|p| text.contains(**p)) {
                    world.gaps.push(format!("{path}: its text holds `{placeholder}`, which agent.files expands: the replay's copy differs there"));
                }
                true
            }
        }
    });
    let built_in = converted.scenario;
    let extra_messages = built_in.follow_ups.len() + built_in.steering.len();
    if extra_messages > 0 {
        world
            .gaps
            .push(format!("{extra_messages} user messages after the task: {} takes one task, so the replay ends where the task's turn did", preset.as_str()));
    }
    let mut recording = converted.recording;
    recording.tool_side = world.tool_side.clone();
    let mut agent: AgentSpec = serde_json::from_value(serde_json::json!({ "preset": preset })).expect("a preset alone is an agent block");
    agent.tools = tools;
    agent.files = world.files.clone();
    agent.timeout_s = timeout_s(recording.exchanges.len());
    let outcome = built_in.expect.outcome;
    let scenario = ScenarioSpec {
        name: Some(name.clone()),
        description: Some(format!(
            "Imported by `reloop import --agent` from {}: {} as a black box on the session's {} model calls, its shell answered from the {} recorded commands (tool_side), its workspace the {} files the session read in full; {} gaps in the import report.",
            options.source,
            preset.as_str(),
            recording.exchanges.len(),
            world.tool_side.len(),
            world.files.len(),
            world.gaps.len()
        )),
        wire: built_in.wire.clone(),
        model: built_in.model.clone(),
        context_window: built_in.context_window,
        task: built_in.task.clone(),
        recording: recording_path.into(),
        agent: Some(agent),
        expect: Expectations {
            outcome,
            exit_code: (outcome == Some(Outcome::FinalAnswer)).then_some(0),
            tool_calls: built_in.expect.tool_calls.clone(),
            ..Expectations::default()
        },
        source: built_in.source.clone(),
        ..ScenarioSpec::default()
    };
    Ok(AgentImport { preset, name, scenario, recording, world })
}
