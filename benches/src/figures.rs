//! Small helpers for the figures the bench commands print.

use std::path::Path;

/// The median of `values` (sorted in place).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 { values[middle] } else { (values[middle - 1] + values[middle]) / 2.0 }
}

/// `values` as `a / b / c`, with `decimals` decimals.
pub fn listed(values: &[f64], decimals: usize) -> String {
    values.iter().map(|value| format!("{value:.decimals$}")).collect::<Vec<_>>().join(" / ")
}

/// `path` as a command-line argument, which must be UTF-8.
pub fn path_str(path: &Path) -> Result<&str, String> {
    path.to_str().ok_or_else(|| format!("{}: not UTF-8", path.display()))
}
