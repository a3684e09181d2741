//! Fixture tools: the scenario's tools, answering from their `results`
//! without touching the machine. Latency runs on the run's clock.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use reloop_agent::clock::BoxFuture;
use reloop_agent::grounding::{Workspace, ground_paths};
use reloop_agent::{DeclaredRisk, ToolContext, ToolInvocation, ToolOutput, ToolRuntime, ToolSpec, ToolTraits};

use crate::scenario::{FixtureResult, ToolFixture};

/// The scenario's tools as a [`ToolRuntime`]. Latency runs on the clock
/// each call is given, so parallel calls overlap in virtual time.
pub struct FixtureTools {
    tools: BTreeMap<String, ToolFixture>,
    workspace: Workspace,
    /// `(tool, result index)` of `once` answers already given.
    used: Mutex<HashSet<(String, usize)>>,
}

impl FixtureTools {
    /// Tools from a scenario, in the virtual workspace.
    pub fn new(tools: BTreeMap<String, ToolFixture>) -> Self {
        Self::in_workspace(tools, Workspace::Virtual)
    }

    /// Tools whose paths resolve in `workspace`. Path values in `when` are
    /// grounded as the calls' arguments will be, so a `when` may name a
    /// path exactly as the session recorded it (absolute under the root).
    pub fn in_workspace(mut tools: BTreeMap<String, ToolFixture>, workspace: Workspace) -> Self {
        for result in tools.values_mut().flat_map(|fixture| fixture.results.iter_mut()) {
            if let Some(when) = result.when.as_mut() {
                let mut grounded = serde_json::Value::Object(std::mem::take(when));
                // A path that escapes stays as written: such a call is refused before it gets here.
                let _ = ground_paths(&mut grounded, &workspace);
                let serde_json::Value::Object(grounded) = grounded else { unreachable!("an object stays an object") };
                *when = grounded;
            }
        }
        Self { tools, workspace, used: Mutex::default() }
    }

    /// The answer for `invocation`, consuming a `once` answer.
    fn choose(&self, fixture: &ToolFixture, invocation: &ToolInvocation) -> Option<FixtureResult> {
        let mut used = self.used.lock().expect("fixture state poisoned");
        let (index, result) = fixture.results.iter().enumerate().find(|(index, result)| {
            !(result.once && used.contains(&(invocation.name.clone(), *index))) && result.when.as_ref().is_none_or(|when| matches(when, &invocation.arguments))
        })?;
        if result.once {
            used.insert((invocation.name.clone(), index));
        }
        Some(result.clone())
    }
}

/// Whether every `when` entry is present in `arguments` with an equal value.
fn matches(when: &serde_json::Map<String, serde_json::Value>, arguments: &serde_json::Value) -> bool {
    when.iter().all(|(key, expected)| arguments.get(key) == Some(expected))
}

impl ToolRuntime for FixtureTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|(name, fixture)| ToolSpec { name: name.clone(), description: fixture.description.clone(), parameters: fixture.parameters.clone() })
            .collect()
    }

    fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    fn traits(&self, tool: &str) -> ToolTraits {
        self.tools.get(tool).map_or(ToolTraits { parallel_safe: false, risk: DeclaredRisk::Unknown }, |fixture| ToolTraits {
            parallel_safe: fixture.parallel_safe,
            risk: fixture.risk,
        })
    }

    fn execute(&self, invocation: ToolInvocation, context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        Box::pin(async move {
            let Some(fixture) = self.tools.get(&invocation.name) else {
                return ToolOutput::error(format!("unknown tool `{}`", invocation.name));
            };
            let Some(result) = self.choose(fixture, &invocation) else {
                return ToolOutput::error(format!("no fixture result of `{}` matches {}", invocation.name, invocation.arguments));
            };
            let latency = result.latency_ms.unwrap_or(fixture.latency_ms);
            if latency > 0 {
                context.clock.sleep(Duration::from_millis(latency)).await;
            }
            match (result.output, result.error) {
                (Some(output), _) => ToolOutput::ok(output),
                (None, error) => ToolOutput::error(error.unwrap_or_default()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_agent::{Clock, SharedClock, VirtualClock};
    use std::sync::Arc;

    fn context(clock: &VirtualClock) -> ToolContext {
        let shared: SharedClock = Arc::new(clock.clone());
        ToolContext { clock: shared }
    }

    fn fixture(yaml: &str) -> ToolFixture {
        crate::yaml::parse(std::path::Path::new("t.yaml"), yaml).unwrap()
    }

    fn call(name: &str, arguments: serde_json::Value) -> ToolInvocation {
        ToolInvocation { name: name.into(), arguments }
    }

    #[tokio::test]
    async fn answers_by_argument_match_then_default_with_latency() {
        let clock = VirtualClock::new();
        let tool = fixture("description: read\nlatency_ms: 250\nresults:\n  - when: { path: a.rs }\n    output: A\n  - error: no such file\n");
        let tools = FixtureTools::new(BTreeMap::from([("read".to_owned(), tool)]));
        let run = |arguments| tools.execute(call("read", arguments), context(&clock));
        assert_eq!(run(serde_json::json!({"path": "a.rs"})).await, ToolOutput::ok("A"));
        assert_eq!(run(serde_json::json!({"path": "b.rs"})).await, ToolOutput::error("no such file"));
        assert_eq!(clock.now_ms(), 500);
        assert!(tools.execute(call("write", serde_json::json!({})), context(&clock)).await.is_error);
    }

    #[tokio::test]
    async fn when_paths_ground_like_the_calls_under_a_recorded_root() {
        let clock = VirtualClock::new();
        let tool = fixture("description: read\nresults:\n  - when: { path: /home/me/p/a.rs }\n    output: A\n  - error: none\n");
        let tools = FixtureTools::in_workspace(BTreeMap::from([("read".to_owned(), tool)]), Workspace::VirtualAt("/home/me/p".into()));
        let mut arguments = serde_json::json!({ "path": "/home/me/p/./a.rs" });
        ground_paths(&mut arguments, tools.workspace()).unwrap();
        let output = tools.execute(ToolInvocation { name: "read".into(), arguments }, context(&clock)).await;
        assert_eq!(output, ToolOutput::ok("A"));
    }

    #[tokio::test]
    async fn once_answers_are_used_up() {
        let tool = fixture("description: test\nresults:\n  - output: FAIL\n    once: true\n  - output: PASS\n");
        let tools = FixtureTools::new(BTreeMap::from([("test".to_owned(), tool)]));
        let clock = VirtualClock::new();
        for expected in ["FAIL", "PASS", "PASS"] {
            assert_eq!(tools.execute(call("test", serde_json::json!({})), context(&clock)).await.content, expected);
        }
    }
}
