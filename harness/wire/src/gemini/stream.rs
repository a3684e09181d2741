//! The agent's decoder of a `streamGenerateContent?alt=sse` stream. Each
//! event is a whole response holding the next pieces; there is no terminal
//! event, so the stream is complete once a chunk carried a `finishReason`.

use serde_json::Value;

use super::response::Decoded;
use crate::{ModelTurn, SseFrame, StreamDecoder, StreamDelta, WireError};

/// Accumulates a Gemini stream into a turn.
#[derive(Debug, Default)]
pub struct GeminiStreamDecoder {
    decoded: Decoded,
}

impl GeminiStreamDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamDecoder for GeminiStreamDecoder {
    fn push_frame(&mut self, frame: &SseFrame) -> Result<Vec<StreamDelta>, WireError> {
        let chunk: Value = serde_json::from_str(&frame.data).map_err(|source| WireError::Json { context: "Gemini stream chunk", source })?;
        let texts = self.decoded.push(&chunk, true)?;
        let mut deltas: Vec<StreamDelta> = texts.into_iter().map(StreamDelta::Text).collect();
        if self.is_done() {
            let turn = self.decoded.to_turn();
            deltas.push(StreamDelta::Finished(turn.finish_reason));
            deltas.extend(turn.usage.map(StreamDelta::Usage));
            deltas.push(StreamDelta::Done);
        }
        Ok(deltas)
    }

    fn is_done(&self) -> bool {
        self.decoded.finish_reason.is_some()
    }

    fn finish(&mut self) -> Result<ModelTurn, WireError> {
        let decoded = std::mem::take(&mut self.decoded);
        if decoded.finish_reason.is_none() {
            return Err(WireError::StreamEndedEarly);
        }
        Ok(decoded.to_turn())
    }
}
