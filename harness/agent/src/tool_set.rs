//! The tool set a run declares: the runtime's tools, then the task tools,
//! the `Agent` tool and the pseudo-tools when the settings enable them.

use crate::sub_agent::agent_tool_spec;
use crate::task_store::task_tool_specs;
use crate::tools::{ToolRuntime, ToolSpec, pseudo_tool_specs};

/// Everything the loop declares, in order: the runtime's tools, the task
/// tools, `Agent` and the pseudo-tools (each when enabled). One list, for the loop's
/// requests and for pricing their uncompacted counterparts.
pub fn declared_tools(runtime: &dyn ToolRuntime, settings: &crate::LoopSettings) -> Vec<ToolSpec> {
    let mut specs = runtime.specs();
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

