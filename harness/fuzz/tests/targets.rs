//! The fuzz targets: no input may panic. Each target takes valid traffic
//! or files and damages them (see the crate's docs); decoders and loaders
//! must answer with an error value, never a panic.

use std::path::Path;

use proptest::prelude::*;
use reloop_eval::Scenario;
use reloop_fuzz::{Damage, apply, complete_body, damage, stream_frames, turn};
use reloop_wire::{Format, ModelTurn, SseDecoder, decoder_for};

/// Feeds `bytes` to the SSE decoder in `chunk`-byte pieces and every frame
/// to `format`'s stream decoder, up to its first error, then finishes.
fn decode_stream(format: Format, bytes: &[u8], chunk: usize) {
    let mut sse = SseDecoder::new();
    let mut decoder = decoder_for(format);
    for piece in bytes.chunks(chunk.max(1)) {
        sse.push(piece);
        while let Some(frame) = sse.next_frame() {
            if decoder.push_frame(&frame).is_err() {
                return;
            }
        }
    }
    if let Some(frame) = sse.finish()
        && decoder.push_frame(&frame).is_err()
    {
        return;
    }
    let _ = decoder.finish();
}

fn stream_target(format: Format, turn: &ModelTurn, damages: &[Damage], chunk: usize, drop_frame: Option<usize>) {
    let mut frames = stream_frames(format, turn);
    if let Some(i) = drop_frame.filter(|i| *i < frames.len()) {
        frames.remove(i);
    }
    decode_stream(format, &apply(&frames.concat(), damages), chunk);
}

fn body_target(format: Format, turn: &ModelTurn, damages: &[Damage]) {
    let bytes = apply(&complete_body(format, turn), damages);
    let _ = reloop_wire::codec::decode_response(format, &bytes);
}

const RECORDING: &str = "\
format: reloop.recording/v1
model: gpt-4o
exchanges:
  - text: Reading.
    tool_calls: [{ name: read_file, arguments: { path: a.rs } }]
    usage: { input_tokens: 12, output_tokens: 3, cache_read_tokens: 2, cache_write_tokens: 1 }
    timing: { first_byte_ms: 40, chunk_ms: 5 }
  - purpose: compaction
    reusable: true
    text: Summary.
  - text: Done 42.
    finish_reason: stop
";

const SCENARIO: &str = "\
model: gpt-4o
context_window: 32000
system: You are terse.
system_changes: [{ from_step: 2, system: changed }]
task: What is the answer?
recording: recording.yaml
loop:
  step_budget: 10
  max_output_tokens: 4096
  doom_loop: { threshold: 3, reaction: warn }
  stream_idle_timeout_secs: 300
  summary_timeout_secs: 300
  retry: { max_retries: 5, initial_backoff_ms: 2000, max_backoff_ms: 30000 }
  strategies:
    roku: { microcompact_retain: 3, mid_water_ratio: 0.60, high_water_ratio: 0.75, keep_recent_rounds: 4 }
    opencode: { prune_protect_tokens: 40000, prune_minimum_tokens: 20000, protected_user_turns: 2 }
    codex: { auto_compact_ratio: 0.90, user_message_max_tokens: 20000 }
    masking: { keep: 10, batch: 1 }
tools:
  read_file:
    description: Read.
    latency_ms: 40
    results:
      - { when: { path: a.rs }, output: \"fn a() {}\", latency_ms: 900 }
      - error: no such file
steering: [{ after_tool_calls: 2, message: Stop. }]
interrupt: { during_tool_call: 3, after_ms: 1500 }
faults:
  - { exchange: 1, http: { status: 429, headers: { retry-after: \"3\", retry-after-ms: \"250\" } } }
  - { exchange: 2, stall: { after_events: 3, seconds: 400 } }
  - { exchange: 0, times: 2, cut_after_events: 5 }
expect:
  steps: { min: 1, max: 6 }
  llm_retries: { min: 0, max: 3 }
";

/// Writes the (damaged) scenario and recording and loads them as `reloop
/// run` does: parse, range checks, faults against the recording.
fn load_target(dir: &Path, scenario: &[u8], recording: &[u8]) {
    std::fs::write(dir.join("recording.yaml"), recording).unwrap();
    std::fs::write(dir.join("s.yaml"), scenario).unwrap();
    if let Ok(scenario) = Scenario::load(&dir.join("s.yaml")) {
        // What the run derives from the settings at once.
        let _ = scenario.spec.loop_settings.stream_idle_timeout();
        for fault in &scenario.spec.faults {
            let _ = fault.fault();
        }
        for (i, exchange) in scenario.recording.exchanges.iter().enumerate() {
            let _ = exchange.to_turn(i);
        }
    }
}

/// A directory under cargo's `target/tmp` (not the system's temp
/// directory), reused by every case of a target.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reloop-fuzz-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn damages() -> impl Strategy<Value = Vec<Damage>> {
    prop::collection::vec(damage(), 0..4)
}

proptest! {
    #[test]
    fn openai_chat_stream(turn in turn(), damages in damages(), chunk in 1..64usize, drop_frame in prop::option::of(0..12usize)) {
        stream_target(Format::OpenaiChat, &turn, &damages, chunk, drop_frame);
    }

    #[test]
    fn openai_responses_stream(turn in turn(), damages in damages(), chunk in 1..64usize, drop_frame in prop::option::of(0..12usize)) {
        stream_target(Format::OpenaiResponses, &turn, &damages, chunk, drop_frame);
    }

    #[test]
    fn anthropic_stream(turn in turn(), damages in damages(), chunk in 1..64usize, drop_frame in prop::option::of(0..12usize)) {
        stream_target(Format::Anthropic, &turn, &damages, chunk, drop_frame);
    }

    #[test]
    fn sse_and_decoders_on_raw_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512), chunk in 1..64usize) {
        for format in Format::ALL {
            decode_stream(format, &bytes, chunk);
        }
    }

    #[test]
    fn openai_chat_body(turn in turn(), damages in damages()) {
        body_target(Format::OpenaiChat, &turn, &damages);
    }

    #[test]
    fn openai_responses_body(turn in turn(), damages in damages()) {
        body_target(Format::OpenaiResponses, &turn, &damages);
    }

    #[test]
    fn anthropic_body(turn in turn(), damages in damages()) {
        body_target(Format::Anthropic, &turn, &damages);
    }

    #[test]
    fn scenario_loader(damages in prop::collection::vec(damage(), 1..4)) {
        load_target(&temp_dir("scenario"), &apply(SCENARIO, &damages), RECORDING.as_bytes());
    }

    #[test]
    fn recording_loader(damages in prop::collection::vec(damage(), 1..4)) {
        load_target(&temp_dir("recording"), SCENARIO.as_bytes(), &apply(RECORDING, &damages));
    }
}

/// The undamaged inputs load, so the loader targets start from valid files.
#[test]
fn the_seeds_are_valid() {
    let dir = temp_dir("seeds");
    std::fs::write(dir.join("recording.yaml"), RECORDING).unwrap();
    std::fs::write(dir.join("s.yaml"), SCENARIO).unwrap();
    Scenario::load(&dir.join("s.yaml")).unwrap();
}
