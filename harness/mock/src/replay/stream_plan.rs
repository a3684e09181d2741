//! What the server sends on a stream, frame by frame, with the waits before
//! each and where a fault breaks it. Built from the rendered frames, the
//! recorded timing and an optional fault; played by the HTTP layer.

use std::time::Duration;

use reloop_recording::Timing;
use reloop_recording::fault::Fault;
use reloop_wire::codec::StreamErrorKind;

/// How many events come before an injected in-stream error.
pub const EVENTS_BEFORE_STREAM_ERROR: usize = 2;

/// Frames with their waits, and whether the connection breaks after them.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamPlan {
    /// `(wait before, frame)` in order.
    pub frames: Vec<(Duration, String)>,
    /// Break the connection after the last frame instead of ending cleanly.
    pub abort: bool,
}

/// Format-specific frames a fault may need.
pub trait FaultFrames {
    /// A frame that is not valid for the format (half a JSON object).
    fn garbled(&self) -> String;
    /// The provider's in-stream error event.
    fn stream_error(&self, kind: StreamErrorKind) -> String;
}

impl StreamPlan {
    /// The plan for `frames` paced by `timing`, broken by `fault`.
    pub fn new(frames: Vec<String>, timing: Timing, fault: Option<&Fault>, formats: &dyn FaultFrames) -> Self {
        let waits = std::iter::once(timing.first_byte_ms).chain(std::iter::repeat(timing.chunk_ms)).map(Duration::from_millis);
        let mut frames: Vec<(Duration, String)> = waits.zip(frames).collect();
        let mut abort = false;
        match fault {
            Some(Fault::Cut { after_events }) => {
                frames.truncate(*after_events);
                abort = true;
            }
            Some(Fault::Stall { after_events, duration }) => {
                if let Some((wait, _)) = frames.get_mut(*after_events) {
                    *wait += *duration;
                }
            }
            Some(Fault::Garble { after_events }) => {
                if let Some((_, frame)) = frames.get_mut(*after_events) {
                    *frame = formats.garbled();
                }
            }
            Some(Fault::StreamError(kind)) => {
                frames.truncate(EVENTS_BEFORE_STREAM_ERROR);
                frames.push((Duration::from_millis(timing.chunk_ms), formats.stream_error(*kind)));
            }
            Some(Fault::Http(_) | Fault::ContextLengthExceeded | Fault::TruncateArguments) | None => {}
        }
        Self { frames, abort }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Plain;

    impl FaultFrames for Plain {
        fn garbled(&self) -> String {
            "data: {\"broken\n\n".into()
        }
        fn stream_error(&self, _: StreamErrorKind) -> String {
            "data: error\n\n".into()
        }
    }

    fn frames() -> Vec<String> {
        (0..5).map(|i| format!("data: {i}\n\n")).collect()
    }

    #[test]
    fn timing_paces_every_frame() {
        let plan = StreamPlan::new(frames(), Timing { first_byte_ms: 300, chunk_ms: 10 }, None, &Plain);
        let waits: Vec<u64> = plan.frames.iter().map(|(w, _)| w.as_millis() as u64).collect();
        assert_eq!(waits, [300, 10, 10, 10, 10]);
        assert!(!plan.abort);
    }

    #[test]
    fn each_stream_fault_shapes_the_plan() {
        let timing = Timing::default();
        let cut = StreamPlan::new(frames(), timing, Some(&Fault::Cut { after_events: 2 }), &Plain);
        assert_eq!((cut.frames.len(), cut.abort), (2, true));
        let stall = Fault::Stall { after_events: 3, duration: Duration::from_secs(400) };
        let stalled = StreamPlan::new(frames(), timing, Some(&stall), &Plain);
        assert_eq!(stalled.frames[3].0, Duration::from_secs(400));
        let garbled = StreamPlan::new(frames(), timing, Some(&Fault::Garble { after_events: 1 }), &Plain);
        assert_eq!(garbled.frames[1].1, "data: {\"broken\n\n");
        let errored = StreamPlan::new(frames(), timing, Some(&Fault::StreamError(StreamErrorKind::Overloaded)), &Plain);
        assert_eq!(errored.frames.len(), 3);
        assert_eq!(errored.frames[2].1, "data: error\n\n");
    }
}
