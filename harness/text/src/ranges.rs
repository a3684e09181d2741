//! The sent-message ranges of the report's steps table (`sent_messages`,
//! `docs/metrics.md`): the numbers a call sent, in order, runs of
//! consecutive ones as ranges, `0-41,57,43-56`. The eval crate writes them,
//! the report's viewer reads them (and writes the rest of each list the
//! same way).

use std::ops::RangeInclusive;

/// `numbers` in order, runs of consecutive ones as ranges: `0-3,9,5-6`.
pub fn write(numbers: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut at = 0;
    while at < numbers.len() {
        let mut end = at;
        while numbers[end].checked_add(1).is_some_and(|next| numbers.get(end + 1) == Some(&next)) {
            end += 1;
        }
        parts.push(if end > at { format!("{}-{}", numbers[at], numbers[end]) } else { numbers[at].to_string() });
        at = end + 1;
    }
    parts.join(",")
}

/// The ranges of `text` in order, a number alone as a range of one; a part
/// that is no number, or a range that ends before it starts (a hand-edited
/// report), is skipped. How long a range may be is the reader's to judge.
pub fn read(text: &str) -> impl Iterator<Item = RangeInclusive<u64>> + '_ {
    text.split(',').filter_map(|part| {
        let (start, end) = part.split_once('-').unwrap_or((part, part));
        let (start, end) = (start.parse::<u64>().ok()?, end.parse::<u64>().ok()?);
        (start <= end).then_some(start..=end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_numbers_are_written_as_ranges_and_read_back() {
        let numbers = [0, 1, 2, 3, 9, 5, 6, 8];
        assert_eq!(write(&numbers), "0-3,9,5-6,8");
        assert_eq!(read("0-3,9,5-6,8").flatten().collect::<Vec<_>>(), numbers);
        assert_eq!(write(&[]), "");
        assert_eq!(read("").count(), 0);
    }

    #[test]
    fn the_largest_numbers_neither_overflow_nor_are_misread() {
        assert_eq!(write(&[u64::MAX - 1, u64::MAX]), format!("{}-{}", u64::MAX - 1, u64::MAX));
        assert_eq!(read("18446744073709551615").collect::<Vec<_>>(), [u64::MAX..=u64::MAX]);
    }

    #[test]
    fn malformed_and_reversed_parts_are_skipped() {
        assert_eq!(read("0,x-1,9-2,,3-4,5-").collect::<Vec<_>>(), [0..=0, 3..=4]);
    }
}
