//! Session names and the paths that carry them, in one place for serving,
//! capture, live forwarding and the files written per session. A client
//! names its session in the path (`/s/NAME/…`, [`SESSION_ROUTE`]); a run of
//! a recording is `/s/NAME/r/RUN/…` ([`RUN_ROUTE`]), session `NAME/r/RUN`;
//! `/v1/…` is [`DEFAULT_SESSION`]. The routes get the segment
//! percent-decoded once, and so does everything that reads the name from
//! the raw path (capture files, live forwarding), through [`decoded`]: a
//! capture file of `/s/a%20b/…` is `a%20b.recording.yaml`, encoded once by
//! its writer ([`file_stem_of`]), not `a%2520b`. A dot segment (`.`, `..`,
//! `%2e%2e`) is no name at all: the routes refuse it ([`is_dotted`]) and so
//! does forwarding ([`has_dot_segment`]), never taking it for another name.

/// The session `/v1/...` routes use.
pub const DEFAULT_SESSION: &str = "default";

/// What separates a recording's name from a run's in a session name: the
/// path `/s/NAME/r/RUN/v1` is session `NAME/r/RUN`, a fresh replay of
/// recording `NAME`. A path segment cannot hold `/`, so no name clashes.
pub const RUN_SEPARATOR: &str = "/r/";

/// What a path naming a session starts with.
const PREFIX: &str = "/s/";

/// The route (in axum's syntax) under which a named session's API is served.
pub const SESSION_ROUTE: &str = "/s/{session}";

/// The route under which a run of a recording is served ([`run_session`]).
pub const RUN_ROUTE: &str = "/s/{session}/r/{run}";

/// The session name of run `run` of recording `recording`.
pub fn run_session(recording: &str, run: &str) -> String {
    format!("{recording}{RUN_SEPARATOR}{run}")
}

/// The recording a session name replays: `NAME` of `NAME/r/RUN`.
pub fn recording_of(session: &str) -> &str {
    session.split_once(RUN_SEPARATOR).map_or(session, |(recording, _)| recording)
}

/// The OpenAI base URL (up to `/v1`) of session `name` on a server (or a
/// proxy in front of one) at `addr`.
pub fn base_url(addr: std::net::SocketAddr, name: &str) -> String {
    if name == DEFAULT_SESSION { format!("http://{addr}/v1") } else { format!("http://{addr}{PREFIX}{name}/v1") }
}

/// The reloop session a path names, `None` for the default one: `NAME` for
/// `/s/NAME/…`, `NAME/r/RUN` for `/s/NAME/r/RUN/…` (each run a fresh replay,
/// so each its own recording). Not decoded ([`decoded`]).
pub fn session_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix(PREFIX)?;
    let mut segments = rest.split('/');
    let name = segments.next().filter(|name| !name.is_empty())?;
    match (segments.next(), segments.next()) {
        (Some("r"), Some(run)) if !run.is_empty() => Some(&rest[..name.len() + RUN_SEPARATOR.len() + run.len()]),
        _ => Some(name),
    }
}

/// The session a raw path names, decoded: the default one when it names none.
pub fn session_named(path: &str) -> String {
    session_of(path).map_or_else(|| DEFAULT_SESSION.to_owned(), decoded)
}

/// `path` without the session prefix (`/s/NAME/…`, `/s/NAME/r/RUN/…`): the
/// provider's own path and query.
pub fn without_session(path: &str) -> &str {
    match session_of(path) {
        Some(session) => path.strip_prefix(PREFIX).and_then(|rest| rest.strip_prefix(session)).unwrap_or(path),
        None => path,
    }
}

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

/// Whether the decoded session `name` is no name: a part of it (the name,
/// or the run of `NAME/r/RUN`) is `.` or `..`.
pub fn is_dotted(name: &str) -> bool {
    name.split(RUN_SEPARATOR).any(|part| part == "." || part == "..")
}

/// Whether a path has a dot segment (`/s/../v1/…`, `/s/%2e%2e/…`), however
/// spelled: the URL parser of a forwarding client removes it, so the
/// request would reach another path (the default session) than the one the
/// client named.
pub fn has_dot_segment(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    path.split('/').map(decoded).any(|segment| segment == "." || segment == "..")
}

/// A session name as a file name stem: every byte outside `[A-Za-z0-9._-]`
/// percent-encoded (`run/r/1` is `run%2Fr%2F1`), so a name can neither leave
/// its folder nor clash with another. The JSON log and capture files alike.
pub fn file_stem_of(session: &str) -> String {
    let mut stem = String::with_capacity(session.len());
    for byte in session.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-') {
            stem.push(char::from(byte));
        } else {
            stem.push_str(&format!("%{byte:02X}"));
        }
    }
    stem
}

/// The session a recording file serves: its stem without `.recording`
/// (`NAME.recording.yaml` and `NAME.yaml` both serve as `NAME`).
pub fn of_file(path: &std::path::Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    stem.strip_suffix(".recording").filter(|name| !name.is_empty()).map_or_else(|| stem.clone(), str::to_owned)
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
            assert!(is_dotted(name), "{name}");
        }
        assert!(!is_dotted("a..b") && !is_dotted("upstream.cap") && !is_dotted("a/r/1"));
        assert!(has_dot_segment("/s/%2E%2e/v1/messages") && has_dot_segment("/s/../v1/messages?x=1"));
        assert!(!has_dot_segment("/s/a..b/v1/messages") && !has_dot_segment("/v1/chat/completions"));
    }

    #[test]
    fn each_run_of_a_session_is_its_own_session() {
        assert_eq!(session_of("/s/a/r/1/v1/messages"), Some("a/r/1"));
        assert_eq!(session_of("/s/a/r/22/v1/chat/completions?x=1"), Some("a/r/22"));
        assert_eq!((session_of("/s/run.1/v1/messages"), session_of("/v1/messages")), (Some("run.1"), None));
        assert_eq!(without_session("/s/a/r/1/v1/messages?x=1"), "/v1/messages?x=1");
        assert_eq!(without_session("/v1/messages"), "/v1/messages");
        assert_eq!(recording_of("a/r/1"), "a");
        assert_eq!((session_named("/s/a%20b/v1/messages"), session_named("/v1/messages")), ("a b".to_owned(), DEFAULT_SESSION.to_owned()));
    }

    #[test]
    fn a_session_is_named_without_recording() {
        let of = |path: &str| of_file(std::path::Path::new(path));
        assert_eq!(of("d/c1-chat.recording.yaml"), "c1-chat");
        assert_eq!(of("d/gpt-4.1-answer.yaml"), "gpt-4.1-answer");
        assert_eq!(of("d/.recording.yaml"), ".recording");
    }
}
