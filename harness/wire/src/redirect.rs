//! No HTTP client of reloop follows a redirect: the loop's provider
//! client, live forwarding to an `--upstream`, `record` and OTLP export
//! all build theirs with redirects off, because a followed redirect sends
//! the whole conversation (and, live, the key) to a host nobody named. A
//! 3xx is then an error, and this is its one message, naming both ends.

/// The error for `from` answering `status` with `location` (the header's
/// value, `None` when it had none).
pub fn refused(from: &str, status: u16, location: Option<&str>) -> String {
    let to = location.map_or_else(|| "no location".to_owned(), |location| format!("`{location}`"));
    format!("`{from}` answered {status}, a redirect to {to}: reloop follows no redirect (point it at the final URL)")
}

/// Whether `status` is a redirect (300 to 399).
pub fn is_redirect(status: u16) -> bool {
    (300..400).contains(&status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_both_ends() {
        let message = refused("http://127.0.0.1:1/v1/chat/completions", 307, Some("http://127.0.0.1:2/v1/chat/completions"));
        assert!(message.contains("127.0.0.1:1/") && message.contains("127.0.0.1:2/") && message.contains("307"), "{message}");
        assert!(refused("http://a", 302, None).contains("no location"));
        assert!(is_redirect(307) && is_redirect(300) && !is_redirect(200) && !is_redirect(400));
    }
}
