//! The answers to a session name or path with a dot segment, which
//! `reloop_recording::session_path` says is no name: refused by the routes
//! ([`refusal`]) and before a request is forwarded ([`path_refusal`]), never
//! taken for another name.

use reloop_recording::session_path::{has_dot_segment, is_dotted};

use crate::http::api_errors::escape_control;

/// Why the decoded session `name` is refused; `None`: a name.
pub(crate) fn refusal(name: &str) -> Option<String> {
    is_dotted(name).then(|| format!("reloop: `{}` is not a session name (a dot segment)", escape_control(name)))
}

/// Why a path with a dot segment (`/s/../v1/…`, `/s/%2e%2e/…`) is refused
/// where it would be forwarded (`serve --capture`, `record`, live calls).
pub(crate) fn path_refusal(path: &str) -> Option<String> {
    let path = path.split('?').next().unwrap_or_default();
    has_dot_segment(path).then(|| format!("reloop: `{}` has a dot segment (`.` or `..`): no session or route is named so", escape_control(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_are_refused_with_the_name_shown_escaped() {
        assert_eq!(refusal("..").unwrap(), "reloop: `..` is not a session name (a dot segment)");
        assert!(refusal("a/r/1").is_none());
        assert!(path_refusal("/s/..\n/v1").is_none(), "`..\\n` is a name");
        assert_eq!(
            path_refusal("/s/%2e%2e/v1/messages?x").unwrap(),
            "reloop: `/s/%2e%2e/v1/messages` has a dot segment (`.` or `..`): no session or route is named so"
        );
    }
}
