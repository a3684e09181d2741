//! One run's bookkeeping as the loop holds it (transcript, context view,
//! strategy, frozen schema, calibration, cache-break detector, events),
//! grown one `read_file` round per step; shared by the `bookkeeping` bench
//! (a whole step) and the `microcompaction` bench (Layer 0 alone).

use std::hint::black_box;

use reloop_agent::cache_break::{CacheBreakDetector, SentRequest};
use reloop_agent::context::{self, ContextStrategy, ContextView, Edit, StrategyContext, StrategySpec, StrategyTuning};
use reloop_agent::estimate::{Calibration, prompt_tokens, text_tokens};
use reloop_agent::tool_schema::FrozenToolSchema;
use reloop_agent::{LoopEvent, Message, TimedEvent, ToolSpec};
use reloop_wire::ToolCall;

/// Steps timed on one history before it is rebuilt.
pub const STEPS_PER_HISTORY: u64 = 64;
const SYSTEM: &str = "You are a careful coding agent. Read before you edit.";
const MODEL: &str = "gpt-4o";

/// One run's bookkeeping, as the loop holds it.
pub struct Loop {
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
    let content =
        "pub fn handle(request: &Request) -> Result<Response, Error> {\n    let user = authenticate(request)?;\n    Ok(Response::ok(render(&user)))\n}\n"
            .repeat(4);
    [
        Message::assistant(String::new(), vec![ToolCall { id: id.as_str().into(), name: "read_file".into(), arguments: arguments.into() }]),
        Message::ToolResult { call_id: id.into(), tool_name: "read_file".into(), content: content.into(), is_error: false },
    ]
}

impl Loop {
    /// A run under `strategy` grown to `messages` messages (a plug-in runs
    /// in the current directory).
    pub fn with_history(messages: usize, strategy: impl Into<StrategySpec>) -> Self {
        let spec = ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        };
        let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut run = Self {
            transcript: vec![Message::user("Read every module.")],
            view: ContextView::new(),
            strategy: context::build(&strategy.into(), &StrategyTuning::default(), std::path::Path::new(".")),
            schema: FrozenToolSchema::freeze(vec![spec], reloop_wire::Format::OpenaiChat, &Default::default()),
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
    pub fn step(&mut self) -> u64 {
        self.grow();
        self.layer0();
        self.finish()
    }

    /// The rest of a step: the prompt estimate, the cache-break check and the
    /// step's event; returns the calibrated estimate.
    pub fn finish(&mut self) -> u64 {
        let estimate = self.calibration.apply(self.raw_estimate());
        // What the loop sends is the view: Layer 0's masking rewrites it, and
        // the detector sees that from the view's prefix hashes in one lookup.
        let sent = SentRequest { system: SYSTEM, tools_hash: self.schema.hash(), model: MODEL, history: self.view.prefix_hashes(), estimated_tokens: estimate };
        black_box(self.detector.observe(sent));
        let event = LoopEvent::StepComplete { remaining_step_budget: u32::MAX - self.step };
        let _ = self.events.send(TimedEvent { step: self.step, at_ms: 0, event });
        self.step += 1;
        estimate
    }

    /// A tool round enters the transcript and the view.
    pub fn grow(&mut self) {
        self.transcript.extend(tool_round(self.step));
        self.strategy.on_tool_result(self.transcript.len() - 1);
        self.view.sync(&self.transcript);
    }

    /// The strategy plans until it has nothing more to do; each plan is
    /// Layer 0's masking, as no pressure reaches the later layers.
    pub fn layer0(&mut self) {
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
            match self.strategy.plan(&context).expect("the strategy plans") {
                Some(Edit::Mask { results, .. }) => {
                    self.view.mask_all(&self.transcript, &results);
                }
                Some(other) => unreachable!("no pressure, no {other:?}"),
                None => break,
            }
        }
    }

    fn raw_estimate(&self) -> u64 {
        prompt_tokens(self.view.items().len(), self.system_tokens + self.schema.text_tokens() + self.view.text_tokens())
    }
}
