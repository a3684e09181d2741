//! Replies in the client's wire format: the neutral reply of a request
//! ([`answer`]), which `reloop_wire::codec` encodes whole or streamed, and
//! the frames a stream fault sends.

mod answer;

pub use answer::answer;

use reloop_wire::Format;
use reloop_wire::codec::{self, StreamErrorKind};

use crate::replay::stream_plan::FaultFrames;

impl FaultFrames for Format {
    fn garbled(&self) -> String {
        codec::garbled_frame(*self).to_owned()
    }
    fn stream_error(&self, kind: StreamErrorKind) -> String {
        codec::stream_error_frame(*self, kind)
    }
}

#[cfg(test)]
mod tests;
