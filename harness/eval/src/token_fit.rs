//! How the provider's own input-token counts relate to reloop's o200k
//! counts over one run: a least-squares line through the (counted,
//! recorded) input tokens of every answered call that has both. The slope
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
    Some(TokenFit { slope, intercept: mean_y - slope * mean_x })
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
    }

    #[test]
    fn one_size_of_call_or_no_data_fits_nothing() {
        assert_eq!(fit(&[(100, 130), (100, 130)]), None);
        assert_eq!(fit(&[(100, 130)]), None);
        assert_eq!(fit(&[]), None);
        assert_eq!(fit(&[(0, 50)]), None);
    }
}
