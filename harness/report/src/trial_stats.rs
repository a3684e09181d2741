//! The statistics of repeated trials (`docs/metrics.md`, "Trials"): the
//! unbiased pass^k and pass@k estimators of c passes in n trials, and the
//! Wilson score interval on a pass rate (with Newcombe's interval for a
//! difference of two rates, built from it). Wilson rather than the normal
//! (Wald) interval: with 20 trials and a rate near 0 or 1 the Wald interval
//! leaves [0, 1] or shrinks to nothing at 0/20 and 20/20; Wilson stays
//! inside and keeps a width.

/// C(n, k) as a float (exact for the trial counts a suite runs).
fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// pass^k: the chance that k trials drawn from the n (without
/// replacement) all pass, C(c, k) / C(n, k) (tau-bench's estimator);
/// `None` when fewer than k trials counted.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Option<f64> {
    (k >= 1 && n >= k && c <= n).then(|| choose(c, k) / choose(n, k))
}

/// pass@k: the chance that at least one of k such trials passes,
/// 1 − C(n − c, k) / C(n, k) (Chen et al., 2021); `None` when fewer than k
/// trials counted.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    (k >= 1 && n >= k && c <= n).then(|| 1.0 - choose(n - c, k) / choose(n, k))
}

/// The two-sided standard normal quantile for `confidence` (0.95 → 1.96),
/// by Acklam's rational approximation (relative error below 1.2e-9).
pub fn normal_quantile(confidence: f64) -> f64 {
    let p = 1.0 - (1.0 - confidence) / 2.0;
    const A: [f64; 6] = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
    const B: [f64; 5] = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let tail = |q: f64| (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0);
    if p > 0.97575 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// The Wilson score interval on the rate c / n at `confidence`; `None`
/// without trials.
pub fn wilson(c: u64, n: u64, confidence: f64) -> Option<(f64, f64)> {
    if n == 0 || c > n {
        return None;
    }
    let (z, n, p) = (normal_quantile(confidence), n as f64, c as f64 / n as f64);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// Newcombe's hybrid score interval (his method 10) on the difference of
/// rates `c1/n1 − c2/n2`, from the two Wilson intervals.
pub fn rate_difference(c1: u64, n1: u64, c2: u64, n2: u64, confidence: f64) -> Option<(f64, f64)> {
    let ((l1, u1), (l2, u2)) = (wilson(c1, n1, confidence)?, wilson(c2, n2, confidence)?);
    let (p1, p2) = (c1 as f64 / n1 as f64, c2 as f64 / n2 as f64);
    let d = p1 - p2;
    let low = d - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
    let high = d + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
    Some((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn pass_hat_k_and_pass_at_k_are_the_unbiased_estimators() {
        // 3 of 5 passed: pass^2 = C(3,2)/C(5,2) = 3/10; pass@2 = 1 − C(2,2)/C(5,2) = 9/10.
        assert!(close(pass_hat_k(5, 3, 2).unwrap(), 0.3));
        assert!(close(pass_at_k(5, 3, 2).unwrap(), 0.9));
        assert_eq!(pass_hat_k(5, 3, 1), Some(0.6));
        assert_eq!((pass_hat_k(20, 19, 20), pass_hat_k(20, 20, 20)), (Some(0.0), Some(1.0)));
        assert_eq!((pass_at_k(20, 0, 20), pass_at_k(20, 1, 20)), (Some(0.0), Some(1.0)));
        assert_eq!(pass_hat_k(2, 1, 3), None, "fewer trials than k");
    }

    #[test]
    fn the_normal_quantile_matches_the_table() {
        assert!(close(normal_quantile(0.95), 1.959964));
        assert!(close(normal_quantile(0.90), 1.644854));
        assert!(close(normal_quantile(0.99), 2.575829));
    }

    /// Worked values (Newcombe 1998, table I): 81/263 gives [0.2553, 0.3662];
    /// 0/10 gives [0, 0.2775]; Newcombe's difference 56/70 − 48/80 is
    /// [0.0524, 0.3339] (his table II, method 10).
    #[test]
    fn wilson_and_newcombe_match_published_examples() {
        let (low, high) = wilson(81, 263, 0.95).unwrap();
        assert!(close(low, 0.2553) && close(high, 0.3662), "{low} {high}");
        let (low, high) = wilson(0, 10, 0.95).unwrap();
        assert!(low == 0.0 && close(high, 0.2775), "{low} {high}");
        let (low, high) = rate_difference(56, 70, 48, 80, 0.95).unwrap();
        assert!(close(low, 0.0524) && close(high, 0.3339), "{low} {high}");
        assert_eq!(wilson(0, 0, 0.95), None);
    }
}
