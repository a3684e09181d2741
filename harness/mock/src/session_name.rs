//! Session names, in one place for serving and capture alike. A client
//! names its session in the path (`/s/NAME/…`); the routes get the segment
//! percent-decoded once, and so does everything that reads the name from
//! the raw path (capture files, live forwarding), through [`decoded`]: a
//! capture file of `/s/a%20b/…` is `a%20b.recording.yaml`, encoded once by
//! its writer, not `a%2520b`. A dot segment (`.`, `..`, `%2e%2e`) is no
//! name at all: it is refused by the routes ([`refusal`]) and before it is
//! forwarded ([`path_refusal`]), never taken for another name.

/// `raw` (a path segment, or `NAME/r/RUN`) with every `%XX` decoded once;
/// a `%` not followed by two hex digits stays as it is.
pub fn decoded(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| char::from(*b).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push(u8::try_from(high * 16 + low).unwrap_or(b'%'));
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Why the decoded session `name` is refused: a part of it (the name, or
/// the run of `NAME/r/RUN`) that is `.` or `..`. `None`: a name.
pub fn refusal(name: &str) -> Option<String> {
    let dotted = name.split(crate::server::RUN_SEPARATOR).any(|part| part == "." || part == "..");
    dotted.then(|| format!("reloop: `{}` is not a session name (a dot segment)", crate::api_errors::escape_control(name)))
}

/// Why a path with a dot segment (`/s/../v1/…`, `/s/%2e%2e/…`) is refused
/// where it would be forwarded (`serve --capture`, `record`): the URL
/// parser of the forwarding client removes it, so the request would reach
/// another path (the default session) than the one the client named.
pub fn path_refusal(path: &str) -> Option<String> {
    let path = path.split('?').next().unwrap_or_default();
    let dotted = path.split('/').map(decoded).any(|segment| segment == "." || segment == "..");
    dotted.then(|| format!("reloop: `{}` has a dot segment (`.` or `..`): no session or route is named so", crate::api_errors::escape_control(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_decoded_once_and_dot_segments_are_refused_however_spelled() {
        assert_eq!(decoded("a%20b"), "a b");
        assert_eq!(decoded("a%2520b"), "a%20b", "once, not twice");
        assert_eq!(decoded("100%"), "100%");
        assert_eq!(decoded("%2e%2E"), "..");
        for name in ["..", ".", "run/r/..", &decoded("%2e%2e")] {
            assert!(refusal(name).is_some(), "{name}");
        }
        assert!(refusal("a..b").is_none() && refusal("upstream.cap").is_none() && refusal("a/r/1").is_none());
        assert!(path_refusal("/s/%2E%2e/v1/messages").is_some() && path_refusal("/s/../v1/messages?x=1").is_some());
        assert!(path_refusal("/s/a..b/v1/messages").is_none() && path_refusal("/v1/chat/completions").is_none());
    }
}
