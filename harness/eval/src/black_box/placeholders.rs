//! The placeholders of a black-box `agent:` block (`{task}`, `{workspace}`,
//! `{base_url}`, ..., and `{mcp.NAME.command|args|argv}` for its MCP
//! servers), expanded once per run in its command line, environment and
//! files.

use super::mcp::McpLaunch;

/// The values the placeholders of one run expand to.
#[derive(Debug, Clone)]
pub struct Placeholders<'a> {
    /// The scenario's task.
    pub task: &'a str,
    /// The run's workspace directory.
    pub workspace: &'a str,
    /// The directory of the scenario file, for scripts kept beside it.
    pub scenario_dir: &'a str,
    /// The mock's OpenAI base URL for the run (up to `/v1`).
    pub base_url: &'a str,
    /// The mock's port.
    pub port: u16,
    /// The scenario's model.
    pub model: &'a str,
    /// How the agent's MCP servers start in this run.
    pub mcp: &'a [McpLaunch],
}

impl Placeholders<'_> {
    /// The Anthropic base URL: the OpenAI one without its `/v1`.
    pub fn anthropic_base_url(&self) -> &str {
        self.base_url.trim_end_matches("/v1")
    }

    /// `text` with every placeholder replaced, in one pass (an expanded
    /// value is never expanded again: a task may contain `{workspace}`).
    pub fn expand(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let tail = &rest[open..];
            let port = self.port.to_string();
            let found = [
                ("{task}", self.task),
                ("{workspace}", self.workspace),
                ("{scenario_dir}", self.scenario_dir),
                ("{base_url}", self.base_url),
                ("{anthropic_base_url}", self.anthropic_base_url()),
                ("{port}", &port),
                ("{model}", self.model),
            ]
            .into_iter()
            .find(|(key, _)| tail.starts_with(key));
            let mcp = || tail.find('}').and_then(|end| Some((end + 1, McpLaunch::placeholder(self.mcp, &tail[1..end])?)));
            match found {
                Some((key, value)) => {
                    out.push_str(value);
                    rest = &tail[key.len()..];
                }
                None if let Some((length, value)) = mcp() => {
                    out.push_str(&value);
                    rest = &tail[length..];
                }
                None => {
                    out.push('{');
                    rest = &tail[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placeholders() -> Placeholders<'static> {
        Placeholders { task: "fix {workspace}", workspace: "/tmp/w", scenario_dir: "/s", base_url: "http://127.0.0.1:9/v1", port: 9, model: "m", mcp: &[] }
    }

    #[test]
    fn placeholders_expand_once_and_unknown_braces_stay() {
        let p = placeholders();
        assert_eq!(
            p.expand("{task} at {base_url} port {port} in {workspace} from {scenario_dir}"),
            "fix {workspace} at http://127.0.0.1:9/v1 port 9 in /tmp/w from /s"
        );
        assert_eq!(p.expand("{model} at {anthropic_base_url}"), "m at http://127.0.0.1:9");
        assert_eq!(p.expand("{ \"json\": {other}} {"), "{ \"json\": {other}} {");
    }
}
