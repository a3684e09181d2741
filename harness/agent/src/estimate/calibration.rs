//! Runtime calibration (Roku's `EstimatorCalibration`): whatever bias the
//! static estimate has on this conversation (its mix of classes, the
//! provider's own framing, another tokenizer) shows in the provider's usage.
//! The loop keeps the last [`WINDOW`] (estimate, real) pairs and scales later
//! estimates by Σreal / Σestimate, clamped so that one odd answer cannot
//! swing compaction decisions far.

use std::collections::VecDeque;

/// Pairs kept (Roku: the last 8).
pub const WINDOW: usize = 8;
/// Lowest scale (Roku's clamp).
pub const MIN_SCALE: f64 = 0.5;
/// Highest scale (Roku's clamp).
pub const MAX_SCALE: f64 = 2.0;

/// The running calibration of one loop.
#[derive(Debug, Clone)]
pub struct Calibration {
    pairs: VecDeque<(u64, u64)>,
    scale: f64,
}

impl Default for Calibration {
    fn default() -> Self {
        Self { pairs: VecDeque::with_capacity(WINDOW), scale: 1.0 }
    }
}

impl Calibration {
    /// No pairs yet: scale 1.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// `estimate` (uncalibrated) scaled.
    pub fn apply(&self, estimate: u64) -> u64 {
        (estimate as f64 * self.scale).round() as u64
    }

    /// Records the uncalibrated estimate of a request and the provider's
    /// count of it; returns the new scale when it changed. A zero on either
    /// side (no usage reported) teaches nothing and is ignored.
    pub fn observe(&mut self, estimate: u64, real: u64) -> Option<f64> {
        if estimate == 0 || real == 0 {
            return None;
        }
        if self.pairs.len() == WINDOW {
            self.pairs.pop_front();
        }
        self.pairs.push_back((estimate, real));
        let (estimated, counted) = self.pairs.iter().fold((0u64, 0u64), |(e, r), (pe, pr)| (e + pe, r + pr));
        let scale = (counted as f64 / estimated as f64).clamp(MIN_SCALE, MAX_SCALE);
        let previous = std::mem::replace(&mut self.scale, scale);
        (scale != previous).then_some(scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_is_the_ratio_of_sums_over_the_window() {
        let mut c = Calibration::new();
        assert_eq!(c.apply(1000), 1000);
        assert_eq!(c.observe(100, 120), Some(1.2));
        assert_eq!(c.observe(300, 300), Some(420.0 / 400.0));
        assert_eq!(c.apply(400), 420);
        for _ in 0..WINDOW {
            c.observe(100, 90);
        }
        assert!((c.scale() - 0.9).abs() < 1e-12, "older pairs left the window: {}", c.scale());
    }

    #[test]
    fn an_unchanged_scale_is_not_reported() {
        let mut c = Calibration::new();
        assert_eq!(c.observe(100, 100), None);
        assert_eq!(c.observe(50, 50), None);
    }

    #[test]
    fn clamped_and_zeros_ignored() {
        let mut c = Calibration::new();
        assert_eq!(c.observe(100, 1000), Some(MAX_SCALE));
        assert_eq!(c.observe(0, 10), None);
        assert_eq!(c.observe(10, 0), None);
        let mut low = Calibration::new();
        assert_eq!(low.observe(1000, 1), Some(MIN_SCALE));
    }
}
