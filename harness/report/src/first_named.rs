//! Long lists in verdicts (a failed gate's offenders, the runs left out of
//! compare's means) name their first few and count the rest, so a comment
//! stays short and still says who.

/// How many a list names before `and N more`.
pub const NAMES_SHOWN: usize = 10;

/// The first [`NAMES_SHOWN`] of `items` as `show` writes them, joined by
/// `, `, then ` and N more` when there are more.
pub fn first_named<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    let mut text = items.iter().take(NAMES_SHOWN).map(show).collect::<Vec<_>>().join(", ");
    if items.len() > NAMES_SHOWN {
        text.push_str(&format!(" and {} more", items.len() - NAMES_SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_ten_then_counts_the_rest() {
        let items: Vec<u32> = (1..=12).collect();
        assert_eq!(first_named(&items, u32::to_string), "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more");
        assert_eq!(first_named(&items[..2], u32::to_string), "1, 2");
        assert_eq!(first_named::<u32>(&[], u32::to_string), "");
    }
}
