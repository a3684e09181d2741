//! A run's answered calls summed whole and by what they were for. Every
//! answered call costs money, summaries included, so the run's token and
//! cost totals take them all; the breakdown shows where the money went (a
//! strategy that saves prompt tokens by paying for summaries shows both).

use reloop_agent::CallPurpose;
use reloop_agent::price_table::{self, PricedUsage};
use reloop_wire::Usage;

use crate::result::{ShareFigures, StepRow};

/// What an answered call was for, as the totals are broken down: the
/// loop's own [`CallPurpose`], or a sub-agent's call whatever its purpose
/// (the parent paid for the sub-agent as a whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// A call of the run's own loop, by its purpose.
    Own(CallPurpose),
    /// Any call of a sub-agent.
    SubAgent,
}

impl Share {
    /// Every share, in column order.
    pub const ALL: [Self; 5] = [
        Self::Own(CallPurpose::Main),
        Self::Own(CallPurpose::FinalTurn),
        Self::Own(CallPurpose::Escalation),
        Self::Own(CallPurpose::Compaction),
        Self::SubAgent,
    ];

    /// Summary calls, the share the sweep table reports apart.
    pub const COMPACTION: Self = Self::Own(CallPurpose::Compaction);

    /// The column suffix (`input_tokens_<share>`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Own(purpose) => purpose.as_str(),
            Self::SubAgent => "sub_agent",
        }
    }

    /// The share of a step row, from its `agent_depth` and `purpose`.
    pub fn of(step: &StepRow) -> Self {
        if step.agent_depth > 0 {
            return Self::SubAgent;
        }
        Self::Own(CallPurpose::from_name(&step.purpose).unwrap_or(CallPurpose::Main))
    }

    /// The share's place in [`Share::ALL`].
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|share| *share == self).expect("every share is in ALL")
    }
}

/// The server's counts of some answered calls, summed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CallTotals {
    /// Input (cached and written included), output, cache reads and writes.
    pub usage: Usage,
    /// Of the cache writes, those written for 1 hour.
    pub cache_write_1h_tokens: u64,
}

impl CallTotals {
    /// Adds one step; a call the server did not answer adds nothing.
    fn add(&mut self, step: &StepRow) {
        let Some(output_tokens) = step.output_tokens else { return };
        let usage = &mut self.usage;
        usage.input_tokens += step.input_tokens.unwrap_or(0);
        usage.output_tokens += output_tokens;
        usage.cache_read_tokens += step.cache_read_tokens.unwrap_or(0);
        usage.cache_write_tokens += step.cache_write_tokens.unwrap_or(0);
        self.cache_write_1h_tokens += step.cache_write_1h_tokens.unwrap_or(0);
    }

    /// What these calls cost on `model`; `None` when the price table has no row for it.
    pub fn cost(&self, model: &str) -> Option<f64> {
        price_table::active().cost(model, &PricedUsage { usage: self.usage, cache_write_1h_tokens: self.cache_write_1h_tokens })
    }
}

/// Every answered call of a run, whole and per [`Share`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunCalls {
    /// All answered calls.
    pub total: CallTotals,
    /// Per share, in [`Share::ALL`] order.
    pub shares: [CallTotals; 5],
}

impl RunCalls {
    /// Sums `steps`' answered calls.
    pub fn of(steps: &[StepRow]) -> Self {
        let mut calls = Self::default();
        for step in steps {
            calls.total.add(step);
            calls.shares[Share::of(step).index()].add(step);
        }
        calls
    }

    /// Each share's figures priced on `model`.
    pub fn figures(&self, model: &str) -> [ShareFigures; 5] {
        self.shares.map(|share| ShareFigures {
            input_tokens: share.usage.input_tokens,
            output_tokens: share.usage.output_tokens,
            estimated_cost_usd: share.cost(model),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(purpose: &str, depth: u64, input: u64, output: Option<u64>) -> StepRow {
        StepRow { purpose: purpose.to_owned(), agent_depth: depth, input_tokens: Some(input), output_tokens: output, ..StepRow::default() }
    }

    #[test]
    fn every_answered_call_counts_once_in_the_total_and_once_in_its_share() {
        let steps = [
            step("main", 0, 1_000, Some(10)),
            step("compaction", 0, 4_000, Some(300)),
            step("final_turn", 0, 500, Some(20)),
            step("escalation", 0, 700, Some(40)),
            step("compaction", 1, 900, Some(50)),
            step("main", 0, 2_000, None),
        ];
        let calls = RunCalls::of(&steps);
        assert_eq!((calls.total.usage.input_tokens, calls.total.usage.output_tokens), (7_100, 420));
        let inputs: Vec<u64> = calls.shares.iter().map(|s| s.usage.input_tokens).collect();
        assert_eq!(inputs, [1_000, 500, 700, 4_000, 900], "the unanswered call counts nowhere");
        let figures = calls.figures("gpt-4o");
        let share_cost: f64 = figures.iter().map(|f| f.estimated_cost_usd.unwrap()).sum();
        assert!((share_cost - calls.total.cost("gpt-4o").unwrap()).abs() < 1e-12, "shares add up to the total cost");
    }
}
