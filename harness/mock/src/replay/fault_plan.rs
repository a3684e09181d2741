//! Which attempt at an exchange meets which of the scenario's faults.

use std::collections::BTreeMap;

use reloop_recording::fault::{Fault, FaultSpec};

/// The faults of a session, with the attempts seen per exchange.
#[derive(Debug, Default)]
pub struct FaultPlan {
    faults: Vec<(usize, u32, Fault)>,
    attempts: BTreeMap<usize, u32>,
}

impl FaultPlan {
    /// A plan from validated specs.
    pub fn new(specs: &[FaultSpec]) -> Result<Self, String> {
        let faults = specs.iter().map(|s| s.fault().map(|fault| (s.exchange, s.times, fault)).map_err(|e| e.to_string())).collect::<Result<_, String>>()?;
        Ok(Self { faults, attempts: BTreeMap::new() })
    }

    /// Counts an attempt at `exchange` and returns the fault it meets, if any.
    /// Faults on one exchange apply in the order written, each `times` times.
    pub fn next_attempt(&mut self, exchange: usize) -> Option<Fault> {
        let attempt = self.attempts.entry(exchange).or_default();
        let current = *attempt;
        *attempt += 1;
        let mut first_attempt = 0;
        for (at, times, fault) in &self.faults {
            if *at != exchange {
                continue;
            }
            if current < first_attempt + times {
                return Some(fault.clone());
            }
            first_attempt += times;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: serde_json::Value) -> FaultSpec {
        serde_json::from_value(yaml).unwrap()
    }

    #[test]
    fn faults_hit_their_attempts_in_order() {
        let specs =
            [spec(serde_json::json!({"exchange": 1, "times": 2, "http": {"status": 429}})), spec(serde_json::json!({"exchange": 1, "cut_after_events": 3}))];
        let mut plan = FaultPlan::new(&specs).unwrap();
        assert_eq!(plan.next_attempt(0), None);
        assert!(matches!(plan.next_attempt(1), Some(Fault::Http(_))));
        assert!(matches!(plan.next_attempt(1), Some(Fault::Http(_))));
        assert_eq!(plan.next_attempt(1), Some(Fault::Cut { after_events: 3 }));
        assert_eq!(plan.next_attempt(1), None);
    }
}
