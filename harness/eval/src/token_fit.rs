//! How the provider's own input-token counts relate to reloop's o200k
//! counts over one recorded session: a least-squares line through the
//! (counted, recorded) input tokens of every answered call that has both,
//! the count being of what the session sent (the call's uncompacted
//! request), so every strategy's run of one session gets the same line. The slope
//! is the provider's tokens per o200k token (its tokenizer against
//! o200k); the intercept, the tokens each call carries that the recording
//! does not show (a system prompt or tool schemas a transcript left out).
//! Savings can then be stated in the provider's own tokens: saved × slope.

/// A fitted line: `recorded ≈ intercept + slope × counted`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenFit {
    /// Provider tokens per o200k token.
    pub slope: f64,
    /// Provider tokens per call that reloop did not count.
    pub intercept: f64,
    /// Calls the line was fitted on.
    pub calls: usize,
    /// Share of the recorded counts' variance the line explains (1: exact).
    pub r_squared: f64,
}

/// Fewest calls a credible line rests on: two points fit any line exactly.
pub const MIN_CALLS: usize = 3;
/// Least share of variance a credible line explains.
pub const MIN_R_SQUARED: f64 = 0.9;
/// Tokenizers differ from o200k by tens of percent, not by factors.
const SLOPES: std::ops::RangeInclusive<f64> = 0.5..=3.0;

impl TokenFit {
    /// Why the line cannot be trusted, if it cannot: too few calls, a poor
    /// fit, a slope no tokenizer has, or hidden tokens below zero (more than
    /// rounding: a call cannot carry fewer tokens than it shows).
    pub fn refusal(&self) -> Option<String> {
        if self.calls < MIN_CALLS {
            Some(format!("{} calls (at least {MIN_CALLS} needed)", self.calls))
        } else if self.r_squared < MIN_R_SQUARED {
            Some(format!("R² {:.3} < {MIN_R_SQUARED}", self.r_squared))
        } else if !SLOPES.contains(&self.slope) {
            Some(format!("{:.2} provider tokens per o200k token (outside {}..{})", self.slope, SLOPES.start(), SLOPES.end()))
        } else if self.intercept < -1.0 {
            Some(format!("negative hidden tokens per call ({:.1})", self.intercept))
        } else {
            None
        }
    }
}

/// The least-squares line through `(counted, recorded)` points; `None`
/// unless the calls counted at least two different sizes: one call (or
/// calls all of one size) cannot tell a tokenizer ratio from hidden tokens.
pub fn fit(points: &[(u64, u64)]) -> Option<TokenFit> {
    let n = points.len() as f64;
    let mean = |value: fn(&(u64, u64)) -> u64| points.iter().map(|p| value(p) as f64).sum::<f64>() / n;
    let (mean_x, mean_y) = (mean(|p| p.0), mean(|p| p.1));
    if points.is_empty() || mean_x == 0.0 {
        return None;
    }
    let sxx: f64 = points.iter().map(|&(x, _)| (x as f64 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|&(x, y)| (x as f64 - mean_x) * (y as f64 - mean_y)).sum();
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let syy: f64 = points.iter().map(|&(_, y)| (y as f64 - mean_y).powi(2)).sum();
    let r_squared = if syy == 0.0 { 1.0 } else { (sxy * sxy) / (sxx * syy) };
    Some(TokenFit { slope, intercept: mean_y - slope * mean_x, calls: points.len(), r_squared })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_tokenizer_ratio_and_hidden_tokens_per_call() {
        // A provider counting 1.15 tokens per o200k token, plus 1,200 unseen per call.
        let points: Vec<(u64, u64)> = [1_000u64, 5_000, 9_000, 20_000].iter().map(|&x| (x, 1_200 + x * 115 / 100)).collect();
        let line = fit(&points).unwrap();
        assert!((line.slope - 1.15).abs() < 1e-9 && (line.intercept - 1_200.0).abs() < 1e-6, "{line:?}");
        assert_eq!((line.calls, line.refusal()), (4, None));
        assert!((line.r_squared - 1.0).abs() < 1e-9);
    }

    /// Issue 30: two-call fits gave negative hidden tokens and slopes of 36.9,
    /// and nothing flagged them.
    #[test]
    fn lines_no_tokenizer_could_draw_are_refused_with_the_reason() {
        let two_calls = fit(&[(1_000, 600), (2_000, 2_100)]).unwrap();
        assert!(two_calls.intercept < 0.0 && two_calls.refusal().unwrap().contains("2 calls"), "{two_calls:?}");
        let steep = fit(&[(100, 1_000), (110, 1_369), (120, 1_738)]).unwrap();
        assert!(steep.refusal().unwrap().contains("36.90 provider tokens per o200k"), "{steep:?}");
        let scattered = fit(&[(1_000, 5_000), (2_000, 1_000), (3_000, 6_000), (4_000, 2_000)]).unwrap();
        assert!(scattered.refusal().unwrap().starts_with("R² "), "{scattered:?}");
        let hidden_below_zero = fit(&[(1_000, 500), (2_000, 1_700), (3_000, 2_900)]).unwrap();
        assert!(hidden_below_zero.refusal().unwrap().contains("negative hidden tokens"), "{hidden_below_zero:?}");
    }

    #[test]
    fn one_size_of_call_or_no_data_fits_nothing() {
        assert_eq!(fit(&[(100, 130), (100, 130)]), None);
        assert_eq!(fit(&[(100, 130)]), None);
        assert_eq!(fit(&[]), None);
        assert_eq!(fit(&[(0, 50)]), None);
    }
}
