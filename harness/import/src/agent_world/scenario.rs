//! The black-box scenario of `reloop import --agent`: the agent that wrote
//! the session runs on its recording (`agent: {preset, tools: replay}`), its
//! shell answered from the recording's `tool_side:` and its workspace
//! holding the session's first snapshot, with the expectations a faithful
//! replay meets: the recorded sequence of tool calls and the recorded
//! ending.

use reloop_agent::Outcome;
use reloop_files::agent_presets::AgentPreset;
use reloop_files::scenario::agent::{AgentSpec, ToolSideMode, check_file_path};
use reloop_files::scenario::spec::{Expectations, ScenarioSpec};
use reloop_recording::Recording;

use super::{AgentWorld, world};
use crate::convert::{ConvertOptions, convert};
use crate::session::{ImportedSession, Item};
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

/// The black-box scenario of `session`, written by `preset`'s agent, named
/// after `options.name`, with `tools` (`replay` or `replay-or-live`).
pub fn agent_import(preset: AgentPreset, mut session: ImportedSession, options: &ConvertOptions, tools: ToolSideMode) -> Result<AgentImport, String> {
    let calls = session.items.iter().filter_map(|item| if let Item::Assistant(turn) = item { Some(turn) } else { None }).flat_map(|turn| &turn.tool_calls);
    let root = options.workspace_root.clone().or_else(|| workspace_root(session.cwd.as_deref(), calls));
    let found = world(preset, &mut session, root.as_deref())?;
    let name = format!("{}-{}", options.name, preset.as_str());
    let recording_path = crate::recording_file_name(&name);
    let converted = convert(session, ConvertOptions { name: name.clone(), recording_path: recording_path.clone(), ..options.clone() });
    let mut world = found.placed(&converted.recording);
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
        model: built_in.model.clone(),
        // The default's 0 is refused on load; the wire labels the run.
        context_window: built_in.context_window,
        wire: built_in.wire,
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
