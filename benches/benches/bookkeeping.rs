//! The loop's per-step bookkeeping with 100, 1,000 and 10,000 messages of
//! history: a tool round enters the transcript and the view (each message
//! estimated once), the Roku strategy plans (Layer 0 masks the result that
//! fell out of the newest three), the prompt estimate is taken and
//! calibrated, the cache-break detector compares the request with the one
//! before (one lookup in the view's prefix hashes), and the step's event is
//! sent. Everything keeps running figures, so a step should cost about the
//! same whatever the history's length.
//!
//! Steps are timed in runs of [`STEPS_PER_HISTORY`] on a history built
//! untimed, as the loop grows it (cloning a history instead would hand every
//! step a vector at full capacity, and time its reallocation).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use reloop_agent::cache_break::{CacheBreakDetector, FrozenToolSchema, SentRequest};
use reloop_agent::context::{self, ContextStrategy, ContextView, Edit, StrategyContext, StrategyName, StrategyTuning};
use reloop_agent::estimate::{Calibration, prompt_tokens, text_tokens};
use reloop_agent::{LoopEvent, Message, TimedEvent, ToolSpec};
use reloop_wire::ToolCall;

/// Steps timed on one history before it is rebuilt.
const STEPS_PER_HISTORY: u64 = 64;
const SYSTEM: &str = "You are a careful coding agent. Read before you edit.";
const MODEL: &str = "gpt-4o";

/// One run's bookkeeping, as the loop holds it.
struct Loop {
    transcript: Vec<Message>,
    view: ContextView,
    strategy: Box<dyn ContextStrategy>,
    schema: FrozenToolSchema,
    system_tokens: f64,
    calibration: Calibration,
    detector: CacheBreakDetector,
    events: tokio::sync::mpsc::UnboundedSender<TimedEvent>,
    _receiver: tokio::sync::mpsc::UnboundedReceiver<TimedEvent>,
    step: u32,
}

fn tool_round(step: u32) -> [Message; 2] {
    let id = format!("call_{step}");
    let arguments = format!("{{\"path\":\"src/module_{step}.rs\"}}");
    let content = "pub fn handle(request: &Request) -> Result<Response, Error> {\n    let user = authenticate(request)?;\n    Ok(Response::ok(render(&user)))\n}\n".repeat(4);
    [
        Message::assistant(String::new(), vec![ToolCall { id: id.clone(), name: "read_file".into(), arguments }]),
        Message::ToolResult { call_id: id, tool_name: "read_file".into(), content, is_error: false },
    ]
}

impl Loop {
    fn with_history(messages: usize) -> Self {
        let spec = ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        };
        let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut run = Self {
            transcript: vec![Message::user("Read every module.")],
            view: ContextView::new(),
            strategy: context::build(StrategyName::Roku, &StrategyTuning::default()),
            schema: FrozenToolSchema::freeze(vec![spec]),
            system_tokens: text_tokens(SYSTEM),
            calibration: Calibration::new(),
            detector: CacheBreakDetector::default(),
            events,
            _receiver: receiver,
            step: 0,
        };
        while run.transcript.len() < messages {
            run.step();
        }
        run
    }

    /// One step's bookkeeping; returns the calibrated estimate.
    fn step(&mut self) -> u64 {
        self.transcript.extend(tool_round(self.step));
        self.strategy.on_tool_result(self.transcript.len() - 1);
        self.view.sync(&self.transcript);
        loop {
            let raw = self.raw_estimate();
            let context = StrategyContext {
                transcript: &self.transcript,
                view: &self.view,
                estimated_tokens: self.calibration.apply(raw),
                window: 1_000_000_000,
                max_output_tokens: 4_096,
                step: self.step,
            };
            match self.strategy.plan(&context) {
                Some(Edit::Mask { results, .. }) => {
                    self.view.mask_all(&self.transcript, &results);
                }
                Some(other) => unreachable!("no pressure, no {other:?}"),
                None => break,
            }
        }
        let estimate = self.calibration.apply(self.raw_estimate());
        // What the loop sends is the view: Layer 0's masking rewrites it, and
        // the detector sees that from the view's prefix hashes in one lookup.
        let sent = SentRequest { system: SYSTEM, tools: self.schema.specs(), model: MODEL, history: self.view.prefix_hashes(), estimated_tokens: estimate };
        black_box(self.detector.observe(sent));
        let event = LoopEvent::StepComplete { remaining_step_budget: u32::MAX - self.step };
        let _ = self.events.send(TimedEvent { step: self.step, at_ms: 0, event });
        self.step += 1;
        estimate
    }

    fn raw_estimate(&self) -> u64 {
        prompt_tokens(self.view.items().len(), self.system_tokens + self.schema.text_tokens() + self.view.text_tokens())
    }
}

fn bookkeeping(c: &mut Criterion) {
    let mut group = c.benchmark_group("bookkeeping");
    for messages in [100, 1_000, 10_000] {
        group.bench_with_input(BenchmarkId::new("step", messages), &messages, |b, &messages| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0;
                while done < iters {
                    let steps = STEPS_PER_HISTORY.min(iters - done);
                    let mut run = Loop::with_history(messages);
                    let start = Instant::now();
                    for _ in 0..steps {
                        black_box(run.step());
                    }
                    total += start.elapsed();
                    done += steps;
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bookkeeping);
criterion_main!(benches);
