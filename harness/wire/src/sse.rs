//! Server-Sent-Events framing, decoded incrementally.
//!
//! Every streaming provider API sends its events as SSE, and network reads split the stream
//! anywhere: inside a line, inside a UTF-8 sequence, between the `\r` and `\n` of a line ending.
//! [`SseDecoder`] buffers bytes and yields an [`SseFrame`] only once a whole event has arrived,
//! following the WHATWG event-stream parsing rules. [`encode_frame`] is the inverse, used by the
//! mock server.

/// One dispatched SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The `event:` field, if the event had a non-empty one.
    pub event: Option<String>,
    /// The event's `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental SSE decoder: [`push`](Self::push) bytes as they arrive, then drain
/// [`next_frame`](Self::next_frame) until it returns `None`.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes received but not yet consumed as complete lines.
    buf: Vec<u8>,
    /// The last consumed line ended in `\r`, so a `\n` right after it is part of that line ending.
    skip_lf: bool,
    /// Some line was consumed already (a UTF-8 BOM is only stripped from the first line).
    started: bool,
    /// The event being assembled from field lines.
    pending: PendingEvent,
}

impl SseDecoder {
    /// Creates a decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes from the network; they may end anywhere, even inside a character or a line ending.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Returns the next complete event (terminated by a blank line), or `None` if more bytes are needed.
    pub fn next_frame(&mut self) -> Option<SseFrame> {
        let mut consumed = 0;
        let mut frame = None;
        while frame.is_none() {
            let rest = &self.buf[consumed..];
            if self.skip_lf && !rest.is_empty() {
                self.skip_lf = false;
                if rest[0] == b'\n' {
                    consumed += 1;
                    continue;
                }
            }
            let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else {
                break;
            };
            self.skip_lf = rest[end] == b'\r';
            let decoded = String::from_utf8_lossy(&rest[..end]);
            let line = match decoded.strip_prefix('\u{feff}') {
                Some(unmarked) if !self.started => unmarked,
                _ => &decoded,
            };
            self.started = true;
            frame = self.pending.line(line);
            consumed += end + 1;
        }
        self.buf.drain(..consumed);
        frame
    }

    /// Ends the stream: returns a final event that lacked its terminating blank line, if any.
    ///
    /// Drain [`next_frame`](Self::next_frame) first; this only terminates what is left. (The
    /// WHATWG rules discard such an event; real servers that close without the blank line exist,
    /// so the decoder is lenient.)
    pub fn finish(&mut self) -> Option<SseFrame> {
        self.push(b"\n\n");
        self.next_frame()
    }
}

/// The field values of the event currently being received.
#[derive(Debug, Default)]
struct PendingEvent {
    /// The last `event:` value.
    event: Option<String>,
    /// The `data:` values joined with `\n`; `None` until the first `data` field.
    data: Option<String>,
}

impl PendingEvent {
    /// Applies one line (without its line ending); returns the event if the line was blank and completed one.
    fn line(&mut self, line: &str) -> Option<SseFrame> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None; // comment
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            _ => {} // `id`, `retry` and unknown fields carry nothing we use
        }
        None
    }

    /// Ends the event at a blank line. An event without any `data` field is not dispatched.
    fn dispatch(&mut self) -> Option<SseFrame> {
        let event = self.event.take().filter(|event| !event.is_empty());
        let data = self.data.take()?;
        Some(SseFrame { event, data })
    }
}

/// Renders one SSE event: `event: X\n` (if given), one `data: ` line per line of `data` (any of
/// `\n`, `\r\n` or `\r` ends a line), then the blank line that dispatches it.
pub fn encode_frame(event: Option<&str>, data: &str) -> String {
    let mut out = String::with_capacity(data.len() + 16);
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    for line in data.split("\r\n").flat_map(|line| line.split(['\r', '\n'])) {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// Renders a JSON event the way the Responses and Anthropic APIs frame theirs: the `event:` name
/// is the event's own `type` field (omitted if it has none), the data is the compact JSON.
pub fn encode_typed_frame(event: &serde_json::Value) -> String {
    let name = event.get("type").and_then(serde_json::Value::as_str);
    encode_frame(name, &event.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a whole stream fed in the given pieces, including the lenient final event.
    fn decode_pieces<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseFrame> {
        let mut decoder = SseDecoder::new();
        let mut frames = Vec::new();
        for piece in pieces {
            decoder.push(piece);
            frames.extend(std::iter::from_fn(|| decoder.next_frame()));
        }
        frames.extend(decoder.finish());
        frames
    }

    fn decode(stream: &str) -> Vec<SseFrame> {
        decode_pieces([stream.as_bytes()])
    }

    fn frame(event: Option<&str>, data: &str) -> SseFrame {
        SseFrame { event: event.map(str::to_owned), data: data.to_owned() }
    }

    /// A stream exercising every rule: all three line endings, comments, `id`/`retry`, an
    /// unknown `#` line, multi-line data, multi-byte characters and an unterminated last event.
    const AWKWARD: &str = "\u{feff}: keep-alive\r\n\
        event: greeting\r\ndata: héllo\r\ndata:  wörld ✓\r\n\r\n\
        id: 7\rretry: 1000\r# core/tests/cli_responses_fixture.sse\rdata\r\r\
        event: no-data\n\n\
        data:{\"a\":1}\nevent:\n\n\
        data: tail";

    #[test]
    fn follows_the_whatwg_field_rules() {
        assert_eq!(decode(AWKWARD), vec![frame(Some("greeting"), "héllo\n wörld ✓"), frame(None, ""), frame(None, "{\"a\":1}"), frame(None, "tail"),]);
    }

    #[test]
    fn same_frames_when_split_at_every_byte_offset() {
        let bytes = AWKWARD.as_bytes();
        let whole = decode(AWKWARD);
        for split in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(split);
            assert_eq!(decode_pieces([head, tail]), whole, "split at byte {split}");
        }
        assert_eq!(decode_pieces(bytes.chunks(1)), whole, "byte by byte");
    }

    #[test]
    fn waits_for_the_blank_line() {
        let mut decoder = SseDecoder::new();
        decoder.push(b"data: a\n");
        assert_eq!(decoder.next_frame(), None);
        decoder.push(b"\ndata: b\n\n");
        assert_eq!(decoder.next_frame(), Some(frame(None, "a")));
        assert_eq!(decoder.next_frame(), Some(frame(None, "b")));
        assert_eq!(decoder.next_frame(), None);
        assert_eq!(decoder.finish(), None);
    }

    #[test]
    fn a_trailing_carriage_return_is_one_line_ending_with_a_later_line_feed() {
        let mut decoder = SseDecoder::new();
        decoder.push(b"data: a\r");
        assert_eq!(decoder.next_frame(), None);
        decoder.push(b"\n");
        assert_eq!(decoder.next_frame(), None, "\\r\\n must not count as two line endings");
        decoder.push(b"\r\n");
        assert_eq!(decoder.next_frame(), Some(frame(None, "a")));
    }

    #[test]
    fn only_a_leading_bom_is_stripped() {
        assert_eq!(decode("\u{feff}data: x\n\n"), vec![frame(None, "x")]);
        assert_eq!(decode("data: x\n\n\u{feff}data: y\n\n"), vec![frame(None, "x")]);
    }

    #[test]
    fn encode_frame_renders_each_data_line() {
        assert_eq!(encode_frame(None, "[DONE]"), "data: [DONE]\n\n");
        assert_eq!(encode_frame(Some("ping"), ""), "event: ping\ndata: \n\n");
        assert_eq!(encode_frame(None, "a\nb\r\nc\rd"), "data: a\ndata: b\ndata: c\ndata: d\n\n");
    }

    #[test]
    fn typed_frames_are_named_by_their_type() {
        let event = serde_json::json!({"type": "message_stop", "n": 1});
        assert_eq!(encode_typed_frame(&event), "event: message_stop\ndata: {\"type\":\"message_stop\",\"n\":1}\n\n");
        assert_eq!(encode_typed_frame(&serde_json::json!({"n": 1})), "data: {\"n\":1}\n\n");
    }

    #[test]
    fn encode_then_decode_round_trips() {
        let frames = [frame(Some("message_start"), "{\"x\":1}"), frame(None, "two\nlines"), frame(None, "")];
        let stream: String = frames.iter().map(|f| encode_frame(f.event.as_deref(), &f.data)).collect();
        assert_eq!(decode(&stream), frames);
    }
}
