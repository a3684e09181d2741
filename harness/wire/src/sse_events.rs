//! An SSE body cut at its real event boundaries, each event's bytes kept
//! exactly (its blank line included), for raw replay and for reading.

/// The events of `body`, each ending with the blank line that dispatched it
/// (`\n\n`, `\r\n\r\n` or `\r\r`); trailing bytes without one form the last event.
pub fn split_events(body: &str) -> Vec<&str> {
    let mut events = Vec::new();
    let mut start = 0;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let boundary = [&b"\r\n\r\n"[..], b"\n\n", b"\r\r"].into_iter().find(|end| bytes[i..].starts_with(end));
        match boundary {
            Some(end) => {
                i += end.len();
                events.push(&body[start..i]);
                start = i;
            }
            None => i += 1,
        }
    }
    if !body[start..].trim().is_empty() {
        events.push(&body[start..]);
    }
    events
}

/// The `data` of one event (its `data:` lines joined), if it has any.
pub fn data(event: &str) -> Option<&str> {
    // Every provider sends one data line per event; a second one is joined by the SSE rules,
    // which no recorded API relies on, so the first is the data.
    event.lines().find_map(|line| line.strip_prefix("data:")).map(|d| d.strip_prefix(' ').unwrap_or(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_keep_their_bytes_and_boundaries() {
        let body = "event: a\ndata: {}\n\n: ping\r\n\r\ndata: [DONE]\n\n";
        assert_eq!(split_events(body), ["event: a\ndata: {}\n\n", ": ping\r\n\r\n", "data: [DONE]\n\n"]);
        assert_eq!(split_events(body).concat(), body);
        assert_eq!(data("event: a\ndata: {\"x\":1}\n\n"), Some("{\"x\":1}"));
        assert_eq!(data(": ping\n\n"), None);
        assert_eq!(split_events("data: cut"), ["data: cut"]);
    }
}
