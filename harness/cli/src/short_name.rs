//! Names shortened for the terminal's tables: an imported session's name can
//! run to 80 characters and more, which made the run table 200 columns wide.
//! The reports keep the full names; the table keeps each name's start and
//! end (where imported names differ: the agent and the session's id).

/// The widest a name is printed in a table, in characters.
pub const MAX_NAME_CHARS: usize = 40;

/// `name` if it fits in `max` characters; else its first and last
/// characters around a `…`, `max` characters in all.
pub fn shortened(name: &str, max: usize) -> String {
    let count = name.chars().count();
    if count <= max || max < 3 {
        return name.to_owned();
    }
    let kept = max - 1;
    let head = kept.div_ceil(2);
    let tail = kept - head;
    let start: String = name.chars().take(head).collect();
    let end: String = name.chars().skip(count - tail).collect();
    format!("{start}…{end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_name_is_kept_whole() {
        assert_eq!(shortened("one-shot-answer", MAX_NAME_CHARS), "one-shot-answer");
        assert_eq!(shortened(&"x".repeat(40), 40), "x".repeat(40));
    }

    #[test]
    fn a_long_name_keeps_its_start_and_end_within_the_limit() {
        let name = "pi-2025-11-03T09-41-12-845Z_0a1b2c3d-4e5f-6789-abcd-ef0123456789-refactor-the-ledger";
        let short = shortened(name, MAX_NAME_CHARS);
        assert_eq!(short.chars().count(), MAX_NAME_CHARS);
        assert!(short.starts_with("pi-2025-11-03T09-41-"), "{short}");
        assert!(short.ends_with("refactor-the-ledger"), "{short}");
        assert!(short.contains('…'), "{short}");
    }

    #[test]
    fn characters_are_counted_not_bytes() {
        let name = "日本語".repeat(20);
        let short = shortened(&name, 9);
        assert_eq!(short.chars().count(), 9);
        assert_eq!(short, "日本語日…語日本語");
    }
}
