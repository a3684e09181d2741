//! The tool set a run declares: the runtime's tools, then the task tools,
//! the `Agent` tool and the pseudo-tools when the settings enable them;
//! with deferred tools, only the core runtime tools, those discovered so
//! far and `tool_search`.

use crate::deferred_tools::tool_search_spec;
use crate::sub_agent::agent_tool_spec;
use crate::task_store::task_tool_specs;
use crate::tools::{ToolRuntime, ToolSpec, pseudo_tool_specs};

/// Everything the loop can declare, in order: the runtime's tools, the task
/// tools, `Agent` and the pseudo-tools (each when enabled).
pub fn declared_tools(runtime: &dyn ToolRuntime, settings: &crate::LoopSettings) -> Vec<ToolSpec> {
    let mut specs = runtime.specs();
    specs.extend(loop_tools(settings));
    specs
}

/// What the loop declares now: [`declared_tools`], unless the runtime's
/// schema is deferred; then the core and `discovered` runtime tools, the
/// loop's own tools and `tool_search`.
pub fn visible_tools(runtime: &dyn ToolRuntime, settings: &crate::LoopSettings, discovered: &[String]) -> Vec<ToolSpec> {
    let runtime_specs = runtime.specs();
    if !settings.deferred_tools.applies_to(&runtime_specs) {
        return declared_tools(runtime, settings);
    }
    let deferred = &settings.deferred_tools;
    let mut specs: Vec<ToolSpec> = runtime_specs.into_iter().filter(|spec| !deferred.is_deferred(&spec.name) || discovered.contains(&spec.name)).collect();
    specs.push(tool_search_spec());
    specs.extend(loop_tools(settings));
    specs
}

/// The runtime tools still out of sight, which `tool_search` searches.
pub fn hidden_tools(runtime: &dyn ToolRuntime, settings: &crate::LoopSettings, discovered: &[String]) -> Vec<ToolSpec> {
    let deferred = &settings.deferred_tools;
    runtime.specs().into_iter().filter(|spec| deferred.is_deferred(&spec.name) && !discovered.contains(&spec.name)).collect()
}

/// Whether `tool_search` is declared for `runtime` under `settings`.
pub fn searches_tools(runtime: &dyn ToolRuntime, settings: &crate::LoopSettings) -> bool {
    settings.deferred_tools.applies_to(&runtime.specs())
}

fn loop_tools(settings: &crate::LoopSettings) -> Vec<ToolSpec> {
    let mut specs = Vec::new();
    if settings.task_tools {
        specs.extend(task_tool_specs());
    }
    if settings.sub_agent.enabled {
        specs.push(agent_tool_spec());
    }
    if settings.pseudo_tools {
        specs.extend(pseudo_tool_specs());
    }
    specs
}
