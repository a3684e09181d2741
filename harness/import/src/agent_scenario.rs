//! The `agent:` scenario that `record` (and `serve --capture`) writes
//! beside the built-in skeleton when the captured client named itself in
//! its `user-agent` header and a preset knows it: the skeleton replays the
//! recording against reloop's own loop, which is not the system that was
//! recorded; this one runs the agent that was.

use reloop_agent::Outcome;
use reloop_files::agent_presets::AgentPreset;
use reloop_files::scenario::agent::AgentSpec;
use reloop_files::scenario::spec::{Expectations, ScenarioSpec};
use reloop_recording::Recording;

/// The preset of the agent that sent the recording's first request, and
/// the scenario running it on the recording (`skeleton`'s name, model,
/// task and recording file), or `None` when the client is not one a
/// preset knows.
pub fn agent_scenario(recording: &Recording, skeleton: &ScenarioSpec) -> Option<(AgentPreset, ScenarioSpec)> {
    let user_agent = recording.exchanges.first()?.request.as_ref()?.headers.get("user-agent")?;
    let preset = AgentPreset::of_user_agent(user_agent)?;
    let agent: AgentSpec = serde_json::from_value(serde_json::json!({ "preset": preset })).expect("a preset alone is an agent block");
    let name = skeleton.name.as_deref().map(|name| format!("{name}-{}", preset.as_str()));
    let scenario = ScenarioSpec {
        name,
        description: Some(format!("{} as a black box on the captured session (written by reloop from its user-agent); add expectations.", preset.as_str())),
        model: skeleton.model.clone(),
        task: skeleton.task.clone(),
        recording: skeleton.recording.clone(),
        agent: Some(agent),
        expect: Expectations { outcome: Some(Outcome::FinalAnswer), exit_code: Some(0), ..Expectations::default() },
        ..ScenarioSpec::default()
    };
    Some((preset, scenario))
}
