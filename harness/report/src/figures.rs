//! Figures as people read them, shared by every renderer and by the gates'
//! own descriptions: integers plainly, other numbers with up to four
//! significant decimals, changes with their sign.

/// A figure for people: integers plainly, others with up to four
/// significant decimals, without trailing zeros.
pub fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let text = if value.abs() >= 100.0 { format!("{value:.1}") } else { format!("{value:.4}") };
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// An optional figure, `-` when absent.
pub fn maybe(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), number)
}

/// A signed relative change in percent, `-` when undefined.
pub fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{:+.1}%", v * 100.0))
}

/// A delta with its sign.
pub fn signed(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| if v > 0.0 { format!("+{}", number(v)) } else { number(v) })
}

/// A 95 % interval, `-` when runs did not repeat.
pub fn interval(value: Option<(f64, f64)>) -> String {
    value.map_or_else(|| "-".to_owned(), |(low, high)| format!("[{}, {}]", number(low), number(high)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_plainly() {
        assert_eq!(number(1200.0), "1200");
        assert_eq!(number(0.05), "0.05");
        assert_eq!(number(0.123456), "0.1235");
        assert_eq!(number(1234.56), "1234.6");
        assert_eq!(percent(Some(0.0812)), "+8.1%");
        assert_eq!(signed(Some(-3.0)), "-3");
        assert_eq!(interval(Some((1.0, 2.5))), "[1, 2.5]");
    }
}
