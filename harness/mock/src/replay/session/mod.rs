//! One replay session: a recording, its cursor, the request log, the prompt
//! cache and the context window. The server may hold many at once.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use reloop_wire::codec::{self, DecodedRequest, Reusable};
use reloop_wire::{Format, ModelTurn, Prompt, Usage};
use serde::Serialize;

use crate::replay::auxiliary;
use crate::replay::cache_explain::{Baselines, BreakFacts, BreakSite};
use crate::replay::divergence::Divergence;
use crate::replay::fault_plan::FaultPlan;
use crate::replay::pacing::Pacer;
use crate::replay::provider_tokens::scaled;
use crate::replay::render::answer;
pub use crate::replay::stages::Caching;
pub use crate::replay::stages::Reply;
use crate::replay::stages::{self, AccountInput, Caches, Rejection};
use crate::replay::tokens::{PromptCount, TokenCounter, content_hash};
use crate::replay::tool_results::{ToolResultSeen, new_tool_results};
use crate::replay::trigger::{RecordMode, Trigger};
use reloop_recording::provider_tokens::ProviderTokens;
use reloop_recording::{Exchange, Purpose, RecordedUsage, Recording, ReplayMode, ReplyUsage, Timing};

/// The `result` of a request the provider answered with a compaction
/// (`crate::replay::provider_context`): no exchange consumed.
pub const COMPACTION_RESULT: &str = "compaction";

mod matching;

/// One request as a session takes it ([`Session::handle`]): the prompt, the
/// cache model (and breakpoints) its wire format implies, what the
/// provider's context management made of it, and, when it went live, the
/// upstream's answer.
#[derive(Debug)]
pub struct ReplayRequest<'a> {
    /// The prompt as the client sent it.
    pub prompt: &'a Prompt,
    /// The cache model of the request's format.
    pub caching: &'a Caching,
    /// What the provider's context management made of it.
    pub managed: Managed<'a>,
    /// What the upstream answered live (redacted): counted, cached and
    /// rendered as a recorded exchange would be, so a replay of the
    /// re-recording serves the client the same reply.
    pub live: Option<Exchange>,
}

impl<'a> ReplayRequest<'a> {
    /// `prompt` with OpenAI's automatic caching, no context management,
    /// answered from the recording.
    pub fn new(prompt: &'a Prompt) -> Self {
        Self { prompt, caching: &Caching::Automatic, managed: Managed::default(), live: None }
    }
}

/// What the provider's context management made of a request
/// (`crate::replay::provider_context`), for [`ReplayRequest::managed`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Managed<'a> {
    /// What it did, for the request's record (`RequestRecord::server_edit`).
    pub note: Option<&'a str>,
    /// The summary of the compaction the request asked for alone
    /// (`/responses/compact`, Codex's `compaction_trigger`, a paused
    /// Anthropic compaction): the reply, accounted like any turn, result
    /// `compaction`, no exchange consumed.
    pub compaction: Option<&'a str>,
    /// The conversation with compactions expanded to what they replaced:
    /// what the recording (made of the whole conversation) is matched
    /// against. `None`: the request itself.
    pub history: Option<&'a Prompt>,
}

/// How a session is set up.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The responses to replay.
    pub recording: Arc<Recording>,
    /// Requests above this many prompt tokens get the provider's
    /// context-length error.
    pub context_window: Option<u64>,
    /// The clock the session paces streams with.
    pub pacer: Arc<dyn Pacer>,
    /// Faults to inject.
    pub faults: Vec<reloop_recording::fault::FaultSpec>,
    /// Count in a provider's tokens instead of o200k's.
    pub provider_tokens: Option<reloop_recording::provider_tokens::ProviderTokens>,
}

/// What happened to one request, as the server saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRecord {
    /// 0-based index in the session.
    pub index: usize,
    /// The exchange that answered it, if any.
    pub exchange: Option<usize>,
    /// The model the client asked for.
    pub model: String,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// Messages in the request, system included.
    pub messages: usize,
    /// Prompt tokens, counted with the reference tokenizer.
    pub input_tokens: u64,
    /// Of those, the system prompt's (framing included; 0 without one).
    pub system_tokens: u64,
    /// Of those, the tool declarations'. With `system_tokens` and the
    /// counter's per-message counts, a harness prices another conversation
    /// under the same system prompt and tools without building a request.
    pub tools_tokens: u64,
    /// Completion tokens of the reply, counted the same way.
    pub output_tokens: u64,
    /// Prompt tokens the simulated cache served.
    pub cached_tokens: u64,
    /// Prompt tokens the simulated cache wrote, as reported to the client
    /// (Anthropic only: OpenAI reports no writes).
    pub cache_write_tokens: u64,
    /// Of those, the tokens written with a 1-hour lifetime.
    pub cache_write_1h_tokens: u64,
    /// Whether the simulated cache lost the previous call's prefix.
    pub cache_break: bool,
    /// Where and why, when it did.
    pub cache_break_site: Option<BreakSite>,
    /// Usage as recorded, if the recording kept it.
    pub recorded_usage: Option<Usage>,
    /// Of its cache writes, those with a 1-hour lifetime.
    pub recorded_cache_write_1h_tokens: Option<u64>,
    /// HTTP status sent.
    pub status: u16,
    /// `ok`, `auxiliary` (a tool-less side request answered with a short
    /// text, `crate::replay::auxiliary`), `context_length_exceeded`, `divergence`,
    /// or `fault:<kind>`.
    pub result: &'static str,
    /// Whether this request repeated the previous one (a retry).
    pub retry: bool,
    /// The pacer's clock when the request arrived, ms.
    pub at_ms: u64,
    /// The tool results it sent back for the previous turn's calls.
    pub tool_results: Vec<ToolResultSeen>,
    /// What the provider's own context management did to the prompt before
    /// it was counted (`crate::replay::provider_context`): `clear_tool_uses_20250919
    /// cleared 3 tool uses (1204 tokens)`; `None` when nothing.
    pub server_edit: Option<String>,
    /// Whether an upstream answered it live (`crate::http::live`) rather than the
    /// recording: such a step is not deterministic.
    pub live: bool,
}

#[derive(Debug, Default)]
struct SessionState {
    /// The next position in each purpose's list of exchanges.
    next: [usize; 2],
    /// The last answered request's fingerprint, purpose and exchange: an
    /// identical request is its retry and gets the same exchange.
    previous: Option<(u64, Purpose, usize)>,
    log: Vec<RequestRecord>,
    divergences: Vec<Divergence>,
    cache: Caches,
    /// The requests cache breaks are explained against.
    baselines: Baselines,
    faults: FaultPlan,
    /// The Responses item ids of the calls last answered on the main
    /// purpose, as rendered: a result may name a call by them.
    main_call_item_ids: Vec<String>,
    /// Answers of the `auxiliary:` list without `when` given so far.
    auxiliary_used: usize,
    /// The request last refused for the context window, while the agent recovers.
    recovery: crate::replay::recovery::Recovery,
    /// Every call served on the main purpose, in order, as rendered
    /// (`crate::replay::call_ids`).
    served_calls: crate::replay::call_ids::ServedCalls,
    /// What each request sent and the reply it got, for the report's viewer.
    sent: crate::replay::sent::SentLog,
    /// The request that went live first: every later one goes live too.
    live_from: Option<usize>,
    /// The exchanges the upstream answered, in order, redacted.
    live: Vec<Exchange>,
    /// Why the upstream could not be reached, the first time it could not:
    /// a run that failed then failed for the harness's reasons, not the
    /// agent's (`reloop_eval::live_run`).
    upstream_unreachable: Option<String>,
}

/// Account: the server's usage of a turn given its prompt, the cache
/// simulation advanced, and the figures noted in the request's log line.
fn account(
    state: &mut SessionState,
    (request, caching): (&Prompt, &Caching),
    (count, provider_tokens): (&PromptCount, Option<&ProviderTokens>),
    turn: &ModelTurn,
    record: &mut RequestRecord,
) -> Usage {
    let input = AccountInput { caching, model: &request.model, has_system: request.system.is_some(), now_ms: record.at_ms };
    let mut accounted = stages::account(&mut state.cache, count, turn, input);
    if let Some(provider) = provider_tokens {
        accounted.usage.output_tokens = provider.tokens(accounted.usage.output_tokens);
    }
    record.output_tokens = accounted.usage.output_tokens;
    record.cached_tokens = accounted.cache.cached_tokens;
    record.cache_write_tokens = accounted.usage.cache_write_tokens;
    record.cache_write_1h_tokens = accounted.cache_write_1h_tokens;
    record.cache_break = accounted.cache.broke;
    let cache = accounted.cache;
    let facts = BreakFacts { lost_tokens: cache.lost_tokens, expired: cache.expired, below_minimum: cache.below_minimum };
    record.cache_break_site = state.baselines.observe(request, &count.tools_json, cache.broke.then_some(facts));
    state.sent.reply(turn);
    accounted.usage
}

/// A replay session.
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    /// Exchange indices per purpose.
    by_purpose: [Vec<usize>; 2],
    counter: TokenCounter,
    state: Mutex<SessionState>,
    /// The previous request's parse, which the next request of the conversation reuses
    /// ([`Self::decode`]); apart from `state`, so no request waits on a parse.
    reusable: Mutex<Option<Reusable<Bytes>>>,
    /// Called as each request arrives, before it is answered ([`Self::on_request`]).
    request_hook: std::sync::OnceLock<RequestHook>,
}

/// What [`Session::on_request`] calls: given the exchange served last.
struct RequestHook(Box<dyn Fn(Option<usize>) + Send + Sync>);

impl std::fmt::Debug for RequestHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestHook")
    }
}

impl Session {
    /// A session at the start of its recording; `Err` names an invalid fault.
    pub fn new(config: SessionConfig) -> Result<Self, String> {
        let faults = FaultPlan::new(&config.faults)?;
        let state = SessionState { faults, ..SessionState::default() };
        let by_purpose = config.recording.by_purpose();
        Ok(Self { config, by_purpose, counter: TokenCounter::new(), state: Mutex::new(state), reusable: Mutex::default(), request_hook: Default::default() })
    }

    /// Has `hook` called as each request arrives, before anything answers
    /// it, with the exchange served last (numbered as in the log): a
    /// client waiting for its answer has finished what the last one asked,
    /// so a black-box run snapshots its agent's workspace there. Called on
    /// the request's own task: it should be quick. A second hook is
    /// refused (`false`).
    pub fn on_request(&self, hook: impl Fn(Option<usize>) + Send + Sync + 'static) -> bool {
        self.request_hook.set(RequestHook(Box::new(hook))).is_ok()
    }

    /// The exchange of the last request answered with one (status 200),
    /// numbered as in the log.
    pub fn last_served(&self) -> Option<usize> {
        self.lock().log.iter().rev().find(|record| record.status == 200 && record.exchange.is_some())?.exchange
    }

    /// The session's pacer.
    pub fn pacer(&self) -> Arc<dyn Pacer> {
        Arc::clone(&self.config.pacer)
    }

    /// The request log so far.
    pub fn log(&self) -> Vec<RequestRecord> {
        self.lock().log.clone()
    }

    /// The latest request's record, without copying the whole log.
    pub fn last_record(&self) -> Option<RequestRecord> {
        self.lock().log.last().cloned()
    }

    /// What each request so far sent, and the replies.
    pub fn sent(&self) -> crate::replay::sent::SentLog {
        self.lock().sent.clone()
    }

    /// The divergences so far.
    pub fn divergences(&self) -> Vec<Divergence> {
        self.lock().divergences.clone()
    }

    /// Notes that a call meant for the upstream could not reach it
    /// (`why`); the first reason is kept.
    pub fn note_upstream_unreachable(&self, why: &str) {
        self.lock().upstream_unreachable.get_or_insert_with(|| why.to_owned());
    }

    /// Why the upstream could not be reached, if a call could not reach it.
    pub fn upstream_unreachable(&self) -> Option<String> {
        self.lock().upstream_unreachable.clone()
    }

    /// Whether `request` goes to the upstream under `trigger`: once one
    /// request went live every later one does; before that, `all` sends
    /// every request, `--fork-at N` each main request once `N` exchanges
    /// were replayed, and `new` a request the recording would refuse as a
    /// divergence (a retry of an answered request, or an auxiliary one,
    /// stays replayed, as [`Session::handle`] would answer it).
    pub fn goes_live(&self, request: &Prompt, caching: &Caching, trigger: Trigger) -> bool {
        let renamed = self.lock().served_calls.with_served_ids(request);
        let request = renamed.as_ref().unwrap_or(request);
        let state = self.lock();
        let purpose = self.purpose_of(request);
        if state.live_from.is_some() || trigger.mode == RecordMode::All {
            return true;
        }
        if trigger.fork_at.is_some_and(|step| purpose == Purpose::Main && state.next[Purpose::Main.index()] >= step) {
            return true;
        }
        if trigger.mode != RecordMode::New {
            return false;
        }
        let count = self.counter.count_prompt(request);
        let count = match &self.config.provider_tokens {
            Some(provider) => scaled(provider, &count),
            None => count,
        };
        let retry = state.previous.is_some_and(|(previous, _, _)| previous == fingerprint(request, &count));
        let next = self.next_exchange(&state, purpose).map(|i| &self.config.recording.exchanges[i]);
        if retry || auxiliary::is_auxiliary(request, next, &self.config.recording.auxiliary) {
            return false;
        }
        self.check(&state, state.log.len(), request, matches!(caching, Caching::Breakpoints(_))).is_err()
    }

    /// The recording this session's run leaves: the recorded exchanges it
    /// replayed, in the recording's order, then the live ones. Everything
    /// else of the recording (model, auxiliary answers, what was redacted)
    /// is kept; `redacted` adds what the live exchanges lost.
    pub fn rerecorded(&self, redacted: &[String]) -> Recording {
        let state = self.lock();
        let recorded = &self.config.recording;
        let mut exchanges: Vec<Exchange> = self.replayed(&state).into_iter().map(|e| recorded.exchanges[e].clone()).collect();
        exchanges.extend(state.live.iter().cloned());
        let mut kept = recorded.redacted.clone();
        kept.extend(redacted.iter().filter(|r| !recorded.redacted.contains(r)).cloned());
        Recording { exchanges, redacted: kept, ..(**recorded).clone() }
    }

    /// Where the exchange numbered `exchange` in the log is in
    /// [`Self::rerecorded`]'s exchanges, if it is there.
    pub fn rerecorded_index(&self, exchange: usize) -> Option<usize> {
        let state = self.lock();
        let replayed = self.replayed(&state);
        match exchange.checked_sub(self.config.recording.exchanges.len()) {
            None => replayed.binary_search(&exchange).ok(),
            Some(live) => (live < state.live.len()).then_some(replayed.len() + live),
        }
    }

    /// The recorded exchanges the session replayed, in the recording's order.
    fn replayed(&self, state: &SessionState) -> Vec<usize> {
        let recorded = self.config.recording.exchanges.len();
        let mut replayed: Vec<usize> = state.log.iter().filter(|r| !r.live).filter_map(|r| r.exchange).filter(|e| *e < recorded).collect();
        replayed.sort_unstable();
        replayed.dedup();
        replayed
    }

    /// The exchange numbered `index` in the log: the recording's, or past
    /// its last one, an exchange an upstream answered live.
    pub fn exchange(&self, index: usize) -> Option<Exchange> {
        let recorded = &self.config.recording.exchanges;
        match index.checked_sub(recorded.len()) {
            None => recorded.get(index).cloned(),
            Some(live) => self.lock().live.get(live).cloned(),
        }
    }

    /// The token counter, for pricing counterfactual requests the same way.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// `body` decoded as [`codec::decode_request`] does, parsing only what it adds to the
    /// session's previous request ([`codec::decode_request_reusing`]): a client resends the whole
    /// history each time, and parsing it whole parsed the conversation's first message once per
    /// request. A request decoded meanwhile by another connection finds nothing to reuse and is
    /// parsed whole.
    ///
    /// # Errors
    ///
    /// The body is not the format's request.
    pub fn decode(&self, format: Format, body: &Bytes, model: &str, stream: bool) -> Result<DecodedRequest, serde_json::Error> {
        let reusable = || self.reusable.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let previous = reusable().take();
        let (request, kept) = codec::decode_request_reusing(format, body.clone(), model, stream, previous)?;
        *reusable() = kept;
        Ok(request)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().expect("session state poisoned")
    }

    /// Answers one request, in whatever format it came: counts it (new
    /// messages only) and prices it as its prompt, matches it against the
    /// recording as its managed history when it has one, then runs the
    /// stages of [`crate::replay::stages`] (or answers with its compaction,
    /// or with the live exchange) and logs what happened.
    pub fn handle(&self, ReplayRequest { prompt: request, caching, managed, live }: ReplayRequest<'_>) -> Reply {
        if let Some(hook) = self.request_hook.get() {
            (hook.0)(self.last_served());
        }
        let renamed = self.lock().served_calls.with_served_ids(request);
        let request = renamed.as_ref().unwrap_or(request);
        let history = managed.history.map(|history| self.lock().served_calls.with_served_ids(history).unwrap_or_else(|| history.clone()));
        let matched = history.as_ref().unwrap_or(request);
        let count = self.counter.count_and_keep(request);
        let count = match &self.config.provider_tokens {
            Some(provider) => scaled(provider, &count),
            None => count,
        };
        let fingerprint = fingerprint(request, &count);
        let mut state = self.lock();
        let index = state.log.len();
        let retry = state.previous.is_some_and(|(previous, _, _)| previous == fingerprint);
        state.sent.request(request, &count.message_hashes);
        let mut record = RequestRecord {
            index,
            exchange: None,
            model: request.model.clone(),
            stream: request.stream,
            messages: count.messages.len(),
            input_tokens: count.total,
            system_tokens: if request.system.is_some() { count.messages[0] } else { 0 },
            tools_tokens: count.tools,
            output_tokens: 0,
            cached_tokens: 0,
            cache_write_tokens: 0,
            cache_write_1h_tokens: 0,
            cache_break: false,
            cache_break_site: None,
            recorded_usage: None,
            recorded_cache_write_1h_tokens: None,
            status: 200,
            result: "ok",
            retry,
            at_ms: self.config.pacer.now_ms(),
            tool_results: new_tool_results(matched),
            server_edit: managed.note.map(str::to_owned),
            live: live.is_some(),
        };
        let served = match (managed.compaction, live) {
            (Some(summary), _) => stages::admit(self.config.context_window, count.total)
                .map(|()| self.compaction_reply(&mut state, (request, caching), &count, summary, &mut record)),
            (None, Some(exchange)) => self.serve_live(&mut state, (request, caching), &count, fingerprint, &mut record, exchange),
            (None, None) => self.serve(&mut state, (request, caching), matched, &count, fingerprint, &mut record),
        };
        let reply = match served {
            Ok(reply) => reply,
            Err(rejection) => {
                record.status = rejection.status;
                record.result = rejection.result;
                *rejection.reply
            }
        };
        state.recovery.observe(record.result, &count);
        state.log.push(record);
        reply
    }

    /// Admit: the request's breakpoints and its size against the window.
    fn admit(&self, caching: &Caching, count: &PromptCount) -> Result<(), Rejection> {
        stages::admit_breakpoints(caching)?;
        stages::admit(self.config.context_window, count.total)
    }

    /// The stages after counting for what the upstream answered live: admit,
    /// then render and account `exchange`, numbered on from the recording's.
    fn serve_live(
        &self,
        state: &mut SessionState,
        (request, caching): (&Prompt, &Caching),
        count: &PromptCount,
        fingerprint: u64,
        record: &mut RequestRecord,
        exchange: Exchange,
    ) -> Result<Reply, Rejection> {
        self.admit(caching, count)?;
        let exchange_index = self.config.recording.exchanges.len() + state.live.len();
        state.live_from.get_or_insert(record.index);
        let reply = self.reply_with(state, (request, caching), count, fingerprint, record, (self.purpose_of(request), exchange_index, &exchange));
        state.live.push(exchange);
        reply
    }

    /// The stages after counting: admit, match, render, fault, account.
    fn serve(
        &self,
        state: &mut SessionState,
        (request, caching): (&Prompt, &Caching),
        matched: &Prompt,
        count: &PromptCount,
        fingerprint: u64,
        record: &mut RequestRecord,
    ) -> Result<Reply, Rejection> {
        self.admit(caching, count)?;
        let purpose = self.purpose_of(request);
        let next = self.next_exchange(state, purpose).map(|i| &self.config.recording.exchanges[i]);
        let recovering = purpose == Purpose::Main && state.recovery.is_side_request(request, count);
        if !record.retry && (recovering || auxiliary::is_auxiliary(request, next, &self.config.recording.auxiliary)) {
            return Ok(self.auxiliary_reply(state, (request, caching), count, record));
        }
        let (purpose, exchange_index) = self.match_exchange(state, record, matched, caching)?;
        let exchange = &self.config.recording.exchanges[exchange_index];
        self.reply_with(state, (request, caching), count, fingerprint, record, (purpose, exchange_index, exchange))
    }

    /// Render, fault, account: the reply of `exchange` (number
    /// `exchange_index`, of `purpose`), recorded or live.
    fn reply_with(
        &self,
        state: &mut SessionState,
        (request, caching): (&Prompt, &Caching),
        count: &PromptCount,
        fingerprint: u64,
        record: &mut RequestRecord,
        (purpose, exchange_index, exchange): (Purpose, usize, &Exchange),
    ) -> Result<Reply, Rejection> {
        record.exchange = Some(exchange_index);
        let mut turn = stages::render(exchange, exchange_index);
        let fault = state.faults.next_attempt(exchange_index);
        let effect = stages::apply_fault(fault, &mut turn, self.config.context_window, count.total)?;
        turn.usage = Some(account(state, (request, caching), (count, self.config.provider_tokens.as_ref()), &turn, record));
        let answer = answer(&turn, Some(exchange), self.config.recording.reply_usage == ReplyUsage::Recorded);
        if purpose == Purpose::Main {
            state.main_call_item_ids = reloop_wire::openai_responses::reply::call_item_ids(&answer, record.index);
            if !record.retry {
                state.served_calls.extend(&turn.tool_calls);
            }
        }
        if !record.retry {
            state.next[purpose.index()] += 1;
        }
        state.previous = Some((fingerprint, purpose, exchange_index));
        record.result = effect.result;
        record.recorded_usage = exchange.usage.as_ref().map(RecordedUsage::tokens);
        record.recorded_cache_write_1h_tokens = exchange.usage.as_ref().map(RecordedUsage::cache_write_1h_tokens);
        let recorded_model = self.config.recording.model.clone().or_else(|| exchange.model.clone());
        let model = recorded_model.unwrap_or_else(|| request.model.clone());
        let raw = exchange.raw.clone().filter(|_| exchange.replay == ReplayMode::Raw).map(Box::new);
        Ok(Reply::Turn { answer: Box::new(answer), fault: effect.stream_fault, timing: exchange.timing, model, request_index: record.index, raw })
    }

    /// A short text for an auxiliary request, accounted like any turn; no
    /// exchange is consumed.
    fn auxiliary_reply(&self, state: &mut SessionState, (request, caching): (&Prompt, &Caching), count: &PromptCount, record: &mut RequestRecord) -> Reply {
        let turn = auxiliary::auxiliary_turn(request, &self.config.recording.auxiliary, &mut state.auxiliary_used);
        // After a summary the agent rewrote its history: a request identical
        // to the one before it (the same summary again) is a new turn, not a retry.
        if state.recovery.answered_auxiliary(request) {
            state.previous = None;
        }
        let usage = account(state, (request, caching), (count, self.config.provider_tokens.as_ref()), &turn, record);
        record.result = auxiliary::AUXILIARY_RESULT;
        let turn = ModelTurn { usage: Some(usage), ..turn };
        let model = self.config.recording.model.clone().unwrap_or_else(|| request.model.clone());
        Reply::Turn { answer: Box::new(answer(&turn, None, false)), fault: None, timing: Timing::default(), model, request_index: record.index, raw: None }
    }

    /// A compaction's summary as its answer, accounted like any turn; no
    /// exchange is consumed.
    fn compaction_reply(
        &self,
        state: &mut SessionState,
        (request, caching): (&Prompt, &Caching),
        count: &PromptCount,
        summary: &str,
        record: &mut RequestRecord,
    ) -> Reply {
        let turn = ModelTurn { text: summary.to_owned(), ..ModelTurn::default() };
        let usage = account(state, (request, caching), (count, self.config.provider_tokens.as_ref()), &turn, record);
        record.result = COMPACTION_RESULT;
        let turn = ModelTurn { usage: Some(usage), ..turn };
        let model = self.config.recording.model.clone().unwrap_or_else(|| request.model.clone());
        Reply::Turn { answer: Box::new(answer(&turn, None, false)), fault: None, timing: Timing::default(), model, request_index: record.index, raw: None }
    }
}

/// What makes two requests the same request: every field, the messages
/// by the content hashes they were counted by (no second serialization).
/// The context management is left out: the provider-side emulation reads it
/// from the body (`provider_context`), and its effect is in the messages.
fn fingerprint(request: &Prompt, count: &PromptCount) -> u64 {
    let Prompt { model, system: _, messages: _, tools: _, tool_choice, max_output_tokens, stream, include_usage, context_management: _ } = request;
    let choice = serde_json::to_string(tool_choice).unwrap_or_default();
    content_hash(&(model, &count.tools_json, &count.message_hashes, choice, max_output_tokens, stream, include_usage))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::{Message, ToolCall};

    /// A session decodes each request of a conversation as the whole parse does, whatever came
    /// before it: a grown history (reused), a body that does not parse, another format.
    #[test]
    fn a_session_decodes_a_conversation_as_the_whole_parse_does() {
        let recording: Recording = serde_json::from_value(serde_json::json!({ "format": "reloop.recording/v1", "exchanges": [{ "text": "one" }] })).unwrap();
        let config =
            SessionConfig { recording: Arc::new(recording), context_window: None, pacer: Arc::new(crate::NoPacer), faults: Vec::new(), provider_tokens: None };
        let session = Session::new(config).unwrap();
        let mut prompt = Prompt { model: "m".into(), system: Some("s".into()), messages: vec![Message::User { text: "go".into() }], ..Prompt::default() };
        let mut bodies = Vec::new();
        for i in 0..4 {
            let call = ToolCall { id: format!("call_{i}").into(), name: "read_file".into(), arguments: format!(r#"{{"path":"src/{i}.rs"}}"#).into() };
            prompt.messages.push(Message::assistant("", vec![call]));
            prompt.messages.push(Message::ToolResult {
                call_id: format!("call_{i}").into(),
                tool_name: "read_file".into(),
                content: format!("line \"{i}\"\n").into(),
                is_error: false,
            });
            bodies.push((Format::OpenaiChat, codec::encode_request(Format::OpenaiChat, prompt.clone(), |_| Vec::new()).unwrap()));
        }
        bodies.insert(2, (Format::OpenaiChat, b"{\"model\":\"m\",\"messages\":[".to_vec()));
        bodies.insert(4, (Format::Gemini, codec::encode_request(Format::Gemini, prompt.clone(), |_| Vec::new()).unwrap()));
        for (format, body) in bodies {
            let whole = codec::decode_request(format, &body, "m", false).map_err(|e| e.to_string());
            assert_eq!(session.decode(format, &Bytes::from(body), "m", false).map_err(|e| e.to_string()), whole);
        }
    }
}
