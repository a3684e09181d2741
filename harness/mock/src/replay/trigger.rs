//! When a session goes live (`reloop run --upstream`): the record mode and
//! `--fork-at`, which the session judges per request
//! ([`Session::goes_live`](crate::replay::session::Session::goes_live)) and
//! the HTTP layer's live forwarding acts on.

/// When requests go to the upstream rather than the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordMode {
    /// Replay only (nothing goes live unless `--fork-at` says so).
    #[default]
    Once,
    /// Replay while requests match; from the first divergence, live.
    New,
    /// Every request live, recorded afresh.
    All,
}

/// What makes a session go live: the mode, and the number of main
/// exchanges to replay before going live whatever the requests (`--fork-at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Trigger {
    /// The record mode.
    pub mode: RecordMode,
    /// Replay this many main exchanges, then go live.
    pub fork_at: Option<usize>,
}
