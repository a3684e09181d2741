//! The import report: what the session held and where every line went.
//! Printed by `reloop import` and written beside the scenario as JSON.

use std::collections::BTreeMap;

use serde::Serialize;

use reloop_files::scenario::spec::RecordedCompaction;

use crate::session::{ImportedSession, LineAccount, RecordedUsage};

/// One session's import report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    /// The scenario name.
    pub name: String,
    /// `format:file`.
    pub source: String,
    /// The source format.
    pub format: String,
    /// The model the session used.
    pub model: Option<String>,
    /// Model calls (main exchanges from the session).
    pub turns: usize,
    /// Tool calls per tool.
    pub tool_calls: BTreeMap<String, usize>,
    /// User messages (the task, follow-ups, steering).
    pub user_messages: usize,
    /// Compactions the session recorded.
    pub compactions_seen: usize,
    /// Each of them: where, and the prompt tokens before and after.
    pub compactions: Vec<RecordedCompaction>,
    /// The tokens they saved over the session, counted as a strategy's
    /// `tokens_saved_total` is: each later call sent that much less.
    pub tokens_saved_recorded: Option<i64>,
    /// Recorded usage summed over exchanges.
    pub usage_recorded: RecordedUsage,
    /// Exchanges with recorded usage.
    pub exchanges_with_usage: usize,
    /// Recorded cost, USD, where the session kept one.
    pub cost_recorded_usd: Option<f64>,
    /// Calls without a result (answered with an error fixture).
    pub calls_without_result: usize,
    /// Lines of user messages joined to the one before (no model call between).
    pub joined_user_messages: Vec<usize>,
    /// Results without a call (skipped).
    pub results_without_call: usize,
    /// Their lines.
    pub unmatched_results: Vec<usize>,
    /// Tools declared from the calls because no declaration had them.
    pub generated_tools: Vec<String>,
    /// What the import added that the session did not hold.
    pub synthetic: Vec<String>,
    /// How the session ended (the scenario's `ending.outcome`).
    pub ending: &'static str,
    /// The workspace root written to the scenario.
    pub workspace_root: Option<String>,
    /// Every line of the source: read, used, ignored, skipped, joined, warnings.
    pub lines: LineAccount,
    /// `--agent`: the black-box scenarios written beside (one per user turn), and what their replays lack.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agent: Vec<crate::agent_world::AgentReport>,
}

impl ImportReport {
    /// An empty report for `session`, imported as scenario `name` from `source`.
    pub fn new(session: &ImportedSession, name: &str, source: &str) -> Self {
        Self { name: name.to_owned(), source: source.to_owned(), format: session.format.to_owned(), model: session.model.clone(), ..Default::default() }
    }

    /// Adds one exchange's recorded usage and cost.
    pub fn add_usage(&mut self, usage: RecordedUsage, cost: Option<f64>) {
        self.usage_recorded = self.usage_recorded.plus(usage);
        self.exchanges_with_usage += 1;
        if let Some(cost) = cost {
            *self.cost_recorded_usd.get_or_insert(0.0) += cost;
        }
    }

    /// Every line is accounted for exactly once.
    pub fn accounts_for_every_line(&self) -> bool {
        self.lines.accounted() == self.lines.read
    }

    /// A short human summary, one fact per line.
    pub fn summary(&self) -> String {
        let calls: usize = self.tool_calls.values().sum();
        let per_tool: Vec<String> = self.tool_calls.iter().map(|(tool, n)| format!("{tool} {n}")).collect();
        let ignored: Vec<String> = self.lines.ignored.iter().map(|(kind, n)| format!("{kind} {n}")).collect();
        let mut out = format!(
            "{name} ({source})\n  model {model}, {turns} model calls, {calls} tool calls ({per_tool}), {users} user messages, {compactions} compactions{saved}\n  usage recorded on {with_usage} exchanges: input {input} (cache read {read}, write {write}{write_1h}), output {output}{cost}\n  lines: {read_lines} read, {used} used, {ignored_n} ignored ({ignored}), {skipped} skipped, {joined} joined\n",
            name = self.name,
            source = self.source,
            model = self.model.as_deref().unwrap_or("unknown"),
            turns = self.turns,
            per_tool = per_tool.join(", "),
            users = self.user_messages,
            compactions = self.compactions_seen,
            saved = self.tokens_saved_recorded.map(|saved| format!(" (saving {saved} prompt tokens over the session)")).unwrap_or_default(),
            with_usage = self.exchanges_with_usage,
            input = self.usage_recorded.input_tokens,
            read = self.usage_recorded.cache_read_tokens,
            write = self.usage_recorded.cache_write_tokens,
            write_1h = match self.usage_recorded.cache_write_1h_tokens {
                0 => String::new(),
                tokens => format!(" of which {tokens} for 1 hour"),
            },
            output = self.usage_recorded.output_tokens,
            cost = self.cost_recorded_usd.map(|c| format!(", cost ${c:.4}")).unwrap_or_default(),
            read_lines = self.lines.read,
            used = self.lines.used,
            ignored_n = self.lines.ignored.values().sum::<usize>(),
            ignored = ignored.join(", "),
            skipped = self.lines.skipped.len(),
            joined = self.lines.joined.len(),
        );
        for note in self.lines.skipped.iter().chain(&self.lines.joined) {
            out.push_str(&format!("  line {}: {}\n", note.line, note.reason));
        }
        for note in &self.lines.warnings {
            out.push_str(&format!("  warning: line {}: {}\n", note.line, note.reason));
        }
        for added in &self.synthetic {
            out.push_str(&format!("  added: {added}\n"));
        }
        for agent in &self.agent {
            out.push_str(&agent.summary());
        }
        out
    }
}
