//! The little statistics a comparison needs: means, variances, Student's t
//! quantiles and a 95 % confidence interval for a difference of means when
//! runs were repeated.

/// The mean of the present values, `None` when there are none.
pub fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values.into_iter().fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    (count > 0).then(|| sum / count as f64)
}

/// The sample variance (n − 1), `None` below two values.
pub fn variance(values: &[f64]) -> Option<f64> {
    let n = values.len();
    let m = mean(values.iter().copied())?;
    (n >= 2).then(|| values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1) as f64)
}

/// Two-sided quantile of Student's t with `df` degrees of freedom at
/// `confidence`: at 95 % from the table, at other levels by the
/// Cornish–Fisher expansion around the normal quantile (within 1 % of the
/// exact value from 3 degrees of freedom on).
pub fn t_quantile(df: f64, confidence: f64) -> f64 {
    if (confidence - 0.95).abs() < 1e-12 {
        return t_quantile_95(df);
    }
    let (z, df) = (crate::trial_stats::normal_quantile(confidence), df.max(1.0));
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df) + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * df.powi(3))
}

/// Two-sided 95 % quantile of Student's t with `df` degrees of freedom
/// (table up to 30, the normal 1.96 beyond).
fn t_quantile_95(df: f64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
        2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    let index = df.floor().max(1.0) as usize;
    TABLE.get(index - 1).copied().unwrap_or(1.96)
}

/// Welch's 95 % interval for `mean(new) − mean(base)`; `None` unless both
/// sides have at least two values (a single run has no spread).
pub fn welch_interval(base: &[f64], new: &[f64]) -> Option<(f64, f64)> {
    let (vb, vn) = (variance(base)?, variance(new)?);
    let (nb, nn) = (base.len() as f64, new.len() as f64);
    let delta = mean(new.iter().copied())? - mean(base.iter().copied())?;
    let se2 = vb / nb + vn / nn;
    if se2 == 0.0 {
        return Some((delta, delta));
    }
    let df = se2.powi(2) / ((vb / nb).powi(2) / (nb - 1.0) + (vn / nn).powi(2) / (nn - 1.0));
    let half = t_quantile_95(df) * se2.sqrt();
    Some((delta - half, delta + half))
}

/// `(new − base) / |base|`; `None` when base is zero (any change from zero
/// is infinite, said as "new" instead).
pub fn relative(base: f64, new: f64) -> Option<f64> {
    (base != 0.0).then(|| (new - base) / base.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_a_worked_example() {
        // Two samples of 5 with means 10 and 12, variances 2.5 each:
        // se = sqrt(0.5 + 0.5) = 1, df = 8, t = 2.306.
        let base = [8.0, 9.0, 10.0, 11.0, 12.0];
        let new = [10.0, 11.0, 12.0, 13.0, 14.0];
        let (low, high) = welch_interval(&base, &new).unwrap();
        assert!((low - (2.0 - 2.306)).abs() < 1e-9, "{low}");
        assert!((high - (2.0 + 2.306)).abs() < 1e-9, "{high}");
    }

    #[test]
    fn t_quantiles_off_the_table_are_close_to_the_exact_ones() {
        // Exact: t(0.95 two-sided 90 %, df 10) = 1.8125; t(99 %, df 5) = 4.0321.
        assert!((t_quantile(10.0, 0.90) - 1.8125).abs() < 0.005, "{}", t_quantile(10.0, 0.90));
        assert!((t_quantile(5.0, 0.99) - 4.0321).abs() < 0.04, "{}", t_quantile(5.0, 0.99));
        assert_eq!(t_quantile(8.0, 0.95), 2.306);
    }

    #[test]
    fn no_interval_without_repeats_and_no_ratio_from_zero() {
        assert_eq!(welch_interval(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(relative(0.0, 5.0), None);
        assert_eq!(relative(200.0, 210.0), Some(0.05));
        assert_eq!(mean([]), None);
    }
}
