//! The session factories of `reloop serve`: which recording (and faults) a
//! session name replays.

use std::collections::HashMap;
use std::sync::Arc;

use reloop_recording::Recording;
use reloop_recording::fault::FaultSpec;
use reloop_recording::session_path::{self, DEFAULT_SESSION};

use crate::http::registry::SessionFactory;
use crate::replay::pacing::Pacer;
use crate::replay::session::SessionConfig;

/// A session factory serving `recordings` by name: a session called `NAME`
/// or `NAME/r/RUN` (path `/s/NAME/r/RUN/v1`) replays recording `NAME` from
/// its start, so a client can open fresh sessions at will; `default`
/// replays the only recording when there is exactly one. The older
/// `NAME.RUN` still works when `NAME.RUN` is not itself a recording's name.
pub fn recording_factory(recordings: HashMap<String, Arc<Recording>>, pacer: Arc<dyn Pacer>, context_window: Option<u64>) -> SessionFactory {
    Box::new(move |name: &str| {
        let stem = session_path::recording_of(name);
        let dotted = || stem.char_indices().rev().filter(|(_, c)| *c == '.').find_map(|(i, _)| recordings.get(&stem[..i]));
        let recording = match recordings.get(stem).or_else(dotted) {
            Some(recording) => recording,
            None if stem == DEFAULT_SESSION && recordings.len() == 1 => recordings.values().next()?,
            None => return None,
        };
        Some(SessionConfig { recording: Arc::clone(recording), context_window, pacer: Arc::clone(&pacer), faults: Vec::new(), provider_tokens: None })
    })
}

/// A session factory for one scenario's recording (`reloop serve
/// --scenario`): every session name replays it from its start with the
/// scenario's faults, so each client run meets the same faults afresh.
pub fn scenario_factory(recording: Arc<Recording>, faults: Vec<FaultSpec>, pacer: Arc<dyn Pacer>, context_window: Option<u64>) -> SessionFactory {
    Box::new(move |_name: &str| {
        Some(SessionConfig { recording: Arc::clone(&recording), context_window, pacer: Arc::clone(&pacer), faults: faults.clone(), provider_tokens: None })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::pacing::NoPacer;

    #[test]
    fn a_session_name_replays_its_recording_from_the_start() {
        let one = Arc::new(Recording { model: Some("one".into()), ..Recording::default() });
        let two = Arc::new(Recording { model: Some("two".into()), ..Recording::default() });
        let recordings = HashMap::from([("a".to_owned(), one), ("a.b".to_owned(), two)]);
        let factory = recording_factory(recordings, Arc::new(NoPacer), Some(9));
        let model = |name: &str| factory(name).and_then(|config| config.recording.model.clone());
        assert_eq!(model("a").as_deref(), Some("one"));
        assert_eq!(model("a/r/7").as_deref(), Some("one"), "a run of `a`");
        assert_eq!(model("a.b").as_deref(), Some("two"), "a recording's own name first");
        assert_eq!(model("a.c").as_deref(), Some("one"), "the older `NAME.RUN`");
        assert_eq!((model("default"), model("z")), (None, None), "`default` only with one recording");
        let only = recording_factory(HashMap::from([("x".to_owned(), Arc::new(Recording::default()))]), Arc::new(NoPacer), None);
        assert!(only("default").is_some());
    }
}
