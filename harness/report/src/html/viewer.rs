//! The trajectory viewer and the sweep's side-by-side views.
//!
//! Each run's steps travel as one inert `<script type="application/json">`
//! block, parsed and drawn only when the run is opened, and a step's details
//! only when it is expanded: a suite of a thousand runs loads as its runs
//! table. Per step the viewer shows the calls (tokens, cost, cache hit or
//! break with its explanation, retries and faults, the messages sent and the
//! reply: [`super::sent`]), the tool calls with their results, and the
//! loop's events (compactions with their before and after, doom-loop
//! marks). Texts from events are the streamed text and the tool results'
//! heads the events carry, cut to [`TEXT_CHARS`].

use std::collections::HashMap;
use std::fmt::Write as _;

use reloop_text::cut;
use serde_json::{Value, json};

use super::escape;
use super::svg;
use crate::error::ReportError;
use crate::table::Table;

/// Longest text kept per step and per tool call, to keep pages small.
const TEXT_CHARS: usize = 800;

/// A run's key: (scenario, variant, trial).
type Key = (String, String, u64);

/// Column values by row, or nulls when the column is absent.
fn numbers(table: &Table, name: &str) -> Vec<Option<f64>> {
    table.number(name).unwrap_or_else(|| vec![None; table.len()])
}

fn texts(table: &Table, name: &str) -> Result<Vec<Option<String>>, ReportError> {
    Ok(table.text_opt(name)?.unwrap_or_else(|| vec![None; table.len()]))
}

/// Rows of a table by run key, in table order.
fn rows_by_run(table: &Table) -> Result<HashMap<Key, Vec<usize>>, ReportError> {
    let mut rows: HashMap<Key, Vec<usize>> = HashMap::new();
    for (row, key) in table.run_keys()?.into_iter().enumerate() {
        rows.entry(key).or_default().push(row);
    }
    Ok(rows)
}

/// One `<script type="application/json" id="run-N">` per run of `runs`.
pub(super) fn run_data(html: &mut String, runs: &Table, steps: &Table, events: &Table) -> Result<(), ReportError> {
    let step_rows = rows_by_run(steps)?;
    let event_rows = rows_by_run(events)?;
    let calls = CallColumns::of(steps)?;
    let (kind, payload, event_step) = (events.text("kind")?, texts(events, "payload")?, numbers(events, "step"));
    let keys = runs.run_keys()?;
    let divergence = texts(runs, "first_divergence")?;
    let first_seen = texts(steps, "messages_first_seen")?;
    let mut messages = super::sent::Messages::default();
    for row in 0..runs.len() {
        let key = &keys[row];
        let mut by_step: std::collections::BTreeMap<u64, StepView> = std::collections::BTreeMap::new();
        let run_steps = step_rows.get(key).map_or(&[][..], Vec::as_slice);
        let sent = messages.add_run(run_steps.iter().map(|&call| first_seen[call].as_deref()));
        for &call in run_steps {
            by_step.entry(calls.step[call].unwrap_or(0.0) as u64).or_default().calls.push(calls.json(call));
        }
        for &event in event_rows.get(key).map_or(&[][..], Vec::as_slice) {
            let Some(body) = payload[event].as_deref().and_then(|p| serde_json::from_str::<Value>(p).ok()) else { continue };
            let step = event_step[event].unwrap_or(0.0) as u64;
            by_step.entry(step).or_default().add(&kind[event], &body);
        }
        let mut lists = super::sent::SentLists::default();
        by_step.values_mut().flat_map(|view| view.calls.iter_mut()).for_each(|call| lists.shorten(call));
        let steps: Vec<Value> = by_step.into_iter().map(|(step, view)| view.json(step)).collect();
        let data = json!({ "divergence": divergence[row], "messages": sent, "steps": steps });
        let _ = write!(html, r#"<script type="application/json" id="run-{row}">{}</script>"#, super::script_json(&data));
    }
    messages.write(html);
    Ok(())
}

/// The steps table's columns the viewer shows per call.
struct CallColumns {
    step: Vec<Option<f64>>,
    numbers: Vec<(&'static str, Vec<Option<f64>>)>,
    texts: Vec<(&'static str, Vec<Option<String>>)>,
}

impl CallColumns {
    const NUMBERS: [&'static str; 11] = [
        "attempt",
        "input_tokens",
        "input_tokens_uncompacted",
        "request_messages",
        "cache_read_tokens",
        "output_tokens",
        "estimated_cost_usd",
        "cache_break_message",
        "cache_break_byte_offset",
        "cache_tokens_lost",
        "reply_message",
    ];
    const TEXTS: [&'static str; 11] = [
        "purpose",
        "server_result",
        "error",
        "finish_reason",
        "cache_break_cause",
        "cache_break_by",
        "cache_break_role",
        "cache_break_block",
        "cache_break_span",
        "cache_break_causes",
        "sent_messages",
    ];

    fn of(steps: &Table) -> Result<Self, ReportError> {
        Ok(Self {
            step: numbers(steps, "step"),
            numbers: Self::NUMBERS.iter().map(|name| (*name, numbers(steps, name))).collect(),
            texts: Self::TEXTS.iter().map(|name| Ok((*name, texts(steps, name)?))).collect::<Result<_, ReportError>>()?,
        })
    }

    /// The call's non-null fields.
    fn json(&self, row: usize) -> Value {
        let mut call = serde_json::Map::new();
        for (name, values) in &self.numbers {
            if let Some(value) = values[row] {
                call.insert((*name).to_owned(), json!(value));
            }
        }
        for (name, values) in &self.texts {
            if let Some(value) = &values[row] {
                call.insert((*name).to_owned(), json!(value));
            }
        }
        Value::Object(call)
    }
}

/// A black-box agent's shell command (`tool_side_command`) as a tool of
/// its step: the line and folder, then what the agent got and where it
/// came from (the recording's entry, the real shell, or nothing: a
/// divergence), which is an error when it diverged or exited non-zero.
fn shell_command(body: &Value, field: &dyn Fn(&str) -> String) -> Value {
    let diverged = body.get("diverged").and_then(Value::as_bool) == Some(true);
    let source = match (body.get("entry").and_then(Value::as_u64), body.get("ran").and_then(Value::as_bool) == Some(true)) {
        (Some(entry), _) => format!("served from the recording's tool_side entry {entry}"),
        (None, true) => "ran for real".to_owned(),
        (None, false) => "not run: the recording lacks it (tool_side divergence)".to_owned(),
    };
    let exit = body.get("exit_code").and_then(Value::as_i64);
    let output = exit.map_or_else(String::new, |code| format!("\n{}{}(exit {code})", field("stdout"), field("stderr")));
    json!({
        "label": format!("shell command ({source})"),
        "name": "shell command",
        "arguments": cut(&format!("$ {}\n(in {})", field("command"), field("cwd")), TEXT_CHARS),
        "result": cut(&format!("{source}{output}"), TEXT_CHARS),
        "error": diverged || exit.is_some_and(|code| code != 0),
    })
}

/// What one step holds, as the viewer draws it.
#[derive(Default)]
struct StepView {
    calls: Vec<Value>,
    text: String,
    tools: Vec<Value>,
    /// `[class, text]`: compaction, doom, retry, fault, note.
    notes: Vec<(&'static str, String)>,
}

impl StepView {
    fn add(&mut self, kind: &str, body: &Value) {
        let text = |value: &Value| value.as_str().map_or_else(|| value.to_string(), str::to_owned);
        let field = |name: &str| match body.get(name) {
            Some(Value::Array(items)) => items.iter().map(text).collect::<Vec<_>>().join(", "),
            Some(value) => text(value),
            None => String::new(),
        };
        match kind {
            "llm_text_delta" => {
                if self.text.len() <= TEXT_CHARS * 4 {
                    self.text.push_str(&field("text"));
                }
            }
            "tool_start" => self.tools.push(json!({ "id": field("call_id"), "name": field("tool"), "arguments": cut(&field("arguments"), TEXT_CHARS) })),
            "tool_end" => {
                let id = field("call_id");
                if let Some(tool) = self.tools.iter_mut().rev().find(|tool| tool["id"] == id.as_str()) {
                    tool["result"] = json!(cut(&field("result_summary"), TEXT_CHARS));
                    tool["error"] = json!(body.get("is_error").and_then(Value::as_bool).unwrap_or(false));
                }
            }
            "tool_side_command" => self.tools.push(shell_command(body, &field)),
            "workspace_diverged" => {
                let turn = body.get("after_exchange").and_then(Value::as_u64).map_or_else(|| "at the start".to_owned(), |e| format!("after exchange {e}"));
                let how = match (body.get("recorded").and_then(Value::as_str), body.get("replayed").and_then(Value::as_str)) {
                    (Some(_), Some(_)) => "another content than recorded",
                    (Some(_), None) => "recorded, missing (or not stored) here",
                    (None, Some(_)) => "here, not in the recording (or not stored there)",
                    (None, None) => "another size of a file not stored",
                };
                self.notes.push(("fault", format!("workspace differs from the recording {turn}: {} ({how})", field("path"))));
            }
            "microcompact_ran" | "mid_compact_layer1_ran" | "mid_compact_layer2_ran" | "compact_complete" => {
                let layer = match kind {
                    "microcompact_ran" => "0".to_owned(),
                    "mid_compact_layer1_ran" => "1".to_owned(),
                    "mid_compact_layer2_ran" => "2".to_owned(),
                    _ => field("layer"),
                };
                let fallback = if body.get("used_fallback").and_then(Value::as_bool) == Some(true) { " (mechanical fallback)" } else { "" };
                let text =
                    format!("compaction layer {layer} by {}{fallback}: {} → {} tokens", field("strategy"), field("tokens_before"), field("tokens_after"));
                self.notes.push(("compaction", text));
            }
            "compact_triggered" | "reactive_compact_triggered" => {
                self.notes.push((
                    "compaction",
                    format!("{} by {}: {} tokens", kind.replace('_', " "), field("strategy"), field("estimated_tokens") + &field("tokens_before")),
                ));
            }
            "doom_loop_detected" | "doom_loop_cycle_detected" | "doom_loop_no_progress_detected" => {
                self.notes.push(("doom", format!("{} on {} ({})", kind.replace('_', " "), field("tool"), field("reaction"))));
            }
            "llm_retry" => self.notes.push(("retry", format!("retry {} after {} ms: {}", field("attempt"), field("wait_ms"), field("reason")))),
            "llm_error" => self.notes.push(("fault", format!("model call failed ({}): {}", field("class"), cut(&field("message"), TEXT_CHARS)))),
            "cache_break_detected" => self.notes.push(("note", format!("the loop's detector: cache break ({})", field("changed")))),
            "llm_decision_complete" | "step_complete" | "estimator_calibrated" | "token_usage" | "cache_break_simulated" => {}
            _ => {
                let mut rest = body.clone();
                if let Some(object) = rest.as_object_mut() {
                    object.remove("kind");
                }
                self.notes.push(("note", format!("{}: {}", kind.replace('_', " "), cut(&rest.to_string(), TEXT_CHARS))));
            }
        }
    }

    /// The step as the page keeps it; the streamed text only when no call
    /// has its reply, which holds that text whole.
    fn json(self, step: u64) -> Value {
        let notes: Vec<Value> = self.notes.into_iter().map(|(class, text)| json!([class, text])).collect();
        let replied = self.calls.iter().any(|call| call.get("reply_message").is_some());
        let text = if replied { String::new() } else { cut(&self.text, TEXT_CHARS).into_owned() };
        json!({ "step": step, "calls": self.calls, "text": text, "tools": self.tools, "notes": notes })
    }
}

/// The sweep's views: the strategies side by side with their frontier
/// ([`super::strategies`]); and per scenario run under several variants, the
/// variants overlaid (prompt tokens per step, cumulative cost, cache hit
/// ratio). Nothing for a single variant.
pub(super) fn sweep_section(html: &mut String, runs: &Table, steps: &Table) -> Result<(), ReportError> {
    let variants = runs.text("variant")?;
    let mut order: Vec<String> = Vec::new();
    for variant in &variants {
        if !order.contains(variant) {
            order.push(variant.clone());
        }
    }
    if order.len() < 2 {
        return Ok(());
    }
    super::strategies::section(html, runs)?;
    let step_rows = rows_by_run(steps)?;
    let (step, purpose) = (numbers(steps, "step"), texts(steps, "purpose")?);
    let (input, cache_read, cost) = (numbers(steps, "input_tokens"), numbers(steps, "cache_read_tokens"), numbers(steps, "estimated_cost_usd"));
    let scenarios = runs.text("scenario")?;
    let mut seen: Vec<&String> = Vec::new();
    html.push_str("<h2>Strategies overlaid</h2><p>Per scenario, each variant's main calls: prompt tokens sent, cumulative cost of every call, and the share of the prompt read from the cache.</p>");
    for scenario in &scenarios {
        if seen.contains(&scenario) {
            continue;
        }
        seen.push(scenario);
        let mut tokens = Vec::new();
        let mut spent = Vec::new();
        let mut hits = Vec::new();
        for variant in &order {
            // The first trial stands for a repeated run's.
            let Some(rows) = step_rows.get(&(scenario.clone(), variant.clone(), 0)) else { continue };
            let main = |row: &&usize| purpose[**row].as_deref() != Some("compaction");
            let at = |row: usize| step[row].unwrap_or(0.0) as u64;
            tokens.push((variant.clone(), rows.iter().filter(main).filter_map(|&r| Some((at(r), input[r]?))).collect()));
            let mut sum = 0.0;
            spent.push((
                variant.clone(),
                rows.iter()
                    .map(|&r| {
                        sum += cost[r].unwrap_or(0.0);
                        (at(r), sum)
                    })
                    .collect(),
            ));
            let ratio = |r: usize| Some((at(r), cache_read[r]? / input[r].filter(|t| *t > 0.0)?));
            hits.push((variant.clone(), rows.iter().filter(main).filter_map(|&r| ratio(r)).collect()));
        }
        if tokens.len() < 2 {
            continue;
        }
        let _ = write!(
            html,
            r#"<details class="overlay"><summary>{}</summary><div class="charts"><figure>{}<figcaption>prompt tokens per step</figcaption></figure><figure>{}<figcaption>cumulative cost, USD</figcaption></figure><figure>{}<figcaption>cache hit ratio</figcaption></figure></div></details>"#,
            escape(scenario),
            svg::lines(&tokens, "prompt tokens per step"),
            svg::lines(&spent, "cumulative cost"),
            svg::lines(&hits, "cache hit ratio")
        );
    }
    Ok(())
}

pub(super) const STYLE: &str = ".charts{display:flex;flex-wrap:wrap;gap:1em}.charts figure{margin:0}.charts svg{width:480px;height:auto}polyline.series{fill:none;stroke-width:2}#filters select{margin-right:1em}tr.first td{border-top:2px solid #888}a.view{cursor:pointer;color:#1f5fa8;text-decoration:underline}#viewer{border-top:2px solid #1f77b4;margin-top:1em}#viewer details.step{border:1px solid #ddd;border-radius:4px;margin:.3em 0;padding:.2em .5em}#viewer details.step>summary{cursor:pointer}.call{margin:.3em 0;padding:.3em;background:#f7f7f7}.cachebreak{color:#b00020}.cachehit{color:#1b7f3b}.tool{border-left:3px solid #1f77b4;padding-left:.5em;margin:.4em 0}.tool.error{border-color:#d62728}pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;padding:.4em;margin:.2em 0;max-height:24em;overflow:auto}.note{margin:.2em 0}.note.compaction{color:#6a3d9a}.note.doom{color:#e65100;font-weight:bold}.note.retry{color:#8c564b}.note.fault{color:#b00020}.badge{display:inline-block;padding:0 .4em;border-radius:3px;font-size:12px;margin-left:.3em;background:#eee}.badge.doom{background:#ffe0b2}.badge.break{background:#fdecea}.badge.compaction{background:#ede7f6}.badge.masked{background:#fff3cd}.badge.compacted{background:#ede7f6}.badge.edited{background:#e3f2fd}.badge.new{background:#e6f4ea}details.sent,details.dropped,details.msg{margin:.2em 0 .2em 1em}details.msg>summary .head{color:#666}details.msg.masked>summary,details.msg.compacted>summary{font-style:italic}pre.reply{border-left:3px solid #1b7f3b}pre .del{background:#fdecea}pre .ins{background:#e6f4ea}";

/// The runs table's filters and grouping, and the viewer: a run opens on a
/// click on its scenario, a step's details render when it is expanded.
pub(super) const SCRIPT: &str = r#"
(function () {
  var table = document.getElementById('runs');
  if (!table) { return; }
  var body = table.tBodies[0];
  var filters = document.querySelectorAll('#filters select');
  function applyFilters() {
    Array.prototype.forEach.call(body.rows, function (row) {
      var shown = Array.prototype.every.call(filters, function (select) {
        return select.value === '' || row.dataset[select.name] === select.value;
      });
      row.style.display = shown ? '' : 'none';
    });
  }
  Array.prototype.forEach.call(filters, function (select) { select.addEventListener('change', applyFilters); });
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  var shared = null;
  function messageTable() {
    if (!shared) { var node = document.getElementById('messages'); shared = node ? JSON.parse(node.textContent) : []; }
    return shared;
  }
  function numbers(ranges) {
    var out = [];
    (ranges || '').split(',').forEach(function (part) {
      if (!part) { return; }
      var ends = part.split('-').map(Number);
      for (var n = ends[0]; n <= ends[ends.length - 1]; n++) { out.push(n); }
    });
    return out;
  }
  function entryOf(run, n) { var at = run.messages[n]; return at === null || at === undefined ? null : messageTable()[at]; }
  // A sent message, its body drawn when opened: number, role, class
  // (masked, compacted, edited; nothing for a transcript message) and the
  // text's head; a masked or edited one also shows its original, or says
  // that none was sent (a result masked in the step that first sent it).
  function messageNode(run, n, fresh) {
    var entry = entryOf(run, n);
    var node = el('details', 'msg' + (entry ? ' ' + entry[0] + (entry[1] ? ' ' + entry[1] : '') : ''));
    node.dataset.n = n;
    var summary = el('summary', '', '#' + n + ' ' + (entry ? entry[0] : '(not kept)'));
    if (entry && entry[1] && entry[1] !== 'original' && entry[1] !== 'system') { summary.appendChild(el('span', 'badge ' + entry[1], entry[1])); }
    if (fresh) { summary.appendChild(el('span', 'badge new', 'new')); }
    if (entry) { summary.appendChild(el('span', 'head', ' ' + entry[2].slice(0, 120).replace(/\s+/g, ' '))); }
    node.appendChild(summary);
    node.addEventListener('toggle', function () {
      if (!node.open || node.dataset.drawn || !entry) { return; }
      node.dataset.drawn = '1';
      node.appendChild(el('pre', 'body', entry[2]));
      if (entry[3] !== null) {
        node.appendChild(el('div', '', entry[1] === 'masked' ? 'shown in place of:' : 'the transcript holds:'));
        node.appendChild(el('pre', 'original', messageTable()[entry[3]][2]));
      } else if (entry[1] === 'masked' || entry[1] === 'edited') {
        node.appendChild(el('div', 'unsent-original', 'its original was never sent: the loop changed it before any call carried it'));
      }
    });
    return node;
  }
  // A list of a call's messages as one closed block, drawn when opened.
  function messageList(cls, title, run, list, firstNew) {
    var box = el('details', cls);
    box.appendChild(el('summary', '', title));
    box.addEventListener('toggle', function () {
      if (!box.open || box.dataset.drawn) { return; }
      box.dataset.drawn = '1';
      list.forEach(function (n) { box.appendChild(messageNode(run, n, n >= firstNew)); });
    });
    return box;
  }
  // What the call sent: the messages in order with their classes counted,
  // those left out since the previous call (a compaction's before), and
  // the reply.
  function sentNode(call, run, node) {
    if (call.sent) {
      var counts = {};
      call.sent.forEach(function (n) { var e = entryOf(run, n); if (e && e[1] && e[1] !== 'original') { counts[e[1]] = (counts[e[1]] || 0) + 1; } });
      var fresh = call.sent.filter(function (n) { return n >= call.firstNew; }).length;
      var title = 'sent ' + plural(call.sent.length, 'message') + Object.keys(counts).map(function (k) { return ', ' + counts[k] + ' ' + k; }).join('') + ', ' + fresh + ' new';
      node.appendChild(messageList('sent', title, run, call.sent, call.firstNew));
    }
    if (call.dropped && call.dropped.length) {
      node.appendChild(messageList('dropped', 'left out since the previous call: ' + plural(call.dropped.length, 'message'), run, call.dropped, Infinity));
    }
    if (call.reply_message !== undefined) {
      var reply = entryOf(run, call.reply_message);
      node.appendChild(el('div', '', 'reply:'));
      node.appendChild(el('pre', 'reply', reply ? reply[2] : '(not kept)'));
    }
  }
  // Per call: the messages it sent (its common start with the previous
  // call of its kind, then the rest), the first it sent new, and those the
  // previous call of its kind sent that it left out.
  function prepare(data) {
    var next = 0, previous = {};
    data.steps.forEach(function (step) {
      step.calls.forEach(function (call) {
        if (call.sent_messages === undefined) { return; }
        var kind = call.purpose === 'compaction' ? 'compaction' : 'main';
        var parts = call.sent_messages.split('|');
        call.sent = (previous[kind] || []).slice(0, Number(parts[0])).concat(numbers(parts[1]));
        call.firstNew = next;
        call.sent.concat(call.reply_message === undefined ? [] : [call.reply_message]).forEach(function (n) { next = Math.max(next, n + 1); });
        if (previous[kind]) {
          var now = {};
          call.sent.forEach(function (n) { now[n] = true; });
          call.dropped = previous[kind].filter(function (n) { return !now[n]; });
        }
        previous[kind] = call.sent;
      });
    });
  }
  // The classes first sent at a step, for its summary's badges.
  function freshClasses(step, run) {
    var found = {};
    step.calls.forEach(function (call) {
      (call.sent || []).forEach(function (n) {
        var e = n >= call.firstNew && entryOf(run, n);
        if (e && (e[1] === 'masked' || e[1] === 'compacted')) { found[e[1]] = true; }
      });
    });
    return Object.keys(found);
  }
  function plural(n, noun) { return n + ' ' + noun + (n === 1 ? '' : 's'); }
  function num(v) { return v === undefined ? '-' : (Math.round(v * 10000) / 10000).toLocaleString('en'); }
  function callNode(call, run) {
    var node = el('div', 'call');
    var head = (call.purpose || 'main') + ' call' + (call.attempt ? ' (attempt ' + (call.attempt + 1) + ')' : '') +
      ': ' + num(call.input_tokens) + ' prompt tokens in ' + num(call.request_messages) + ' messages' +
      (call.input_tokens_uncompacted !== undefined ? ' (uncompacted ' + num(call.input_tokens_uncompacted) + ')' : '') +
      ', ' + num(call.output_tokens) + ' out, $' + num(call.estimated_cost_usd) +
      (call.finish_reason ? ', finish ' + call.finish_reason : '');
    node.appendChild(el('div', '', head));
    if (call.server_result && call.server_result !== 'ok') { node.appendChild(el('div', 'note fault', 'server: ' + call.server_result + (call.error ? ' (' + call.error + ')' : ''))); }
    if (call.cache_break_cause) {
      var where = call.cache_break_role ? ' at ' + call.cache_break_role + (call.cache_break_message !== undefined ? ' message ' + call.cache_break_message : '') +
        (call.cache_break_block ? ', ' + call.cache_break_block : '') + (call.cache_break_byte_offset !== undefined ? ' byte ' + call.cache_break_byte_offset : '') : '';
      var text = 'cache break: ' + call.cache_break_cause + where + ', ' + num(call.cache_tokens_lost) + ' cached tokens lost' +
        (call.cache_break_by ? '; by ' + call.cache_break_by : '');
      node.appendChild(el('div', 'cachebreak', text));
      if (call.cache_break_span) { node.appendChild(el('pre', 'span', call.cache_break_span)); }
    } else if (call.cache_read_tokens > 0) {
      node.appendChild(el('div', 'cachehit', 'cache hit: ' + num(call.cache_read_tokens) + ' tokens read'));
    }
    sentNode(call, run, node);
    return node;
  }
  function stepBody(step, box, run) {
    step.calls.forEach(function (call) { box.appendChild(callNode(call, run)); });
    step.notes.forEach(function (note) { box.appendChild(el('div', 'note ' + note[0], note[1])); });
    if (step.text) { box.appendChild(el('div', '', 'model text:')); box.appendChild(el('pre', 'text', step.text)); }
    step.tools.forEach(function (tool) {
      var node = el('div', 'tool' + (tool.error ? ' error' : ''));
      node.appendChild(el('div', 'toolname', tool.label || 'tool call ' + tool.name + ' (' + tool.id + ')'));
      node.appendChild(el('pre', 'arguments', tool.arguments));
      node.appendChild(el('div', '', tool.error ? 'error result:' : 'result:'));
      node.appendChild(el('pre', 'result', tool.result === undefined ? '(no result)' : tool.result));
      box.appendChild(node);
    });
  }
  function open(index, label) {
    var data = JSON.parse(document.getElementById('run-' + index).textContent);
    prepare(data);
    var viewer = document.getElementById('viewer');
    viewer.textContent = '';
    viewer.appendChild(el('h2', '', 'Run ' + label));
    if (data.divergence) {
      viewer.appendChild(el('div', 'note fault', 'divergence: what the recording expected (−) against what the loop sent (+)'));
      var diff = el('pre', 'divergence');
      data.divergence.split('\n').forEach(function (line) {
        var kind = /^\s*expected:/.test(line) ? 'del' : /^\s*actual:/.test(line) ? 'ins' : '';
        diff.appendChild(el('span', kind, (kind === 'del' ? '− ' : kind === 'ins' ? '+ ' : '') + line.trim() + '\n'));
      });
      viewer.appendChild(diff);
    }
    data.steps.forEach(function (step) {
      var details = el('details', 'step');
      details.dataset.step = step.step;
      var summary = el('summary', '', 'step ' + step.step + ': ' + step.calls.map(function (c) { return num(c.input_tokens) + ' tokens'; }).join(', ') +
        (step.tools.length ? ' · ' + step.tools.map(function (t) { return t.name; }).join(', ') : ''));
      if (step.calls.some(function (c) { return c.cache_break_cause; })) { summary.appendChild(el('span', 'badge break', 'cache break')); }
      step.notes.forEach(function (note) { if (note[0] === 'doom' || note[0] === 'compaction' || note[0] === 'fault' || note[0] === 'retry') { summary.appendChild(el('span', 'badge ' + note[0], note[0])); } });
      freshClasses(step, data).forEach(function (cls) { summary.appendChild(el('span', 'badge ' + cls, cls)); });
      details.appendChild(summary);
      details.addEventListener('toggle', function () {
        if (details.open && !details.dataset.drawn) { details.dataset.drawn = '1'; stepBody(step, details, data); }
      });
      viewer.appendChild(details);
    });
    viewer.scrollIntoView();
  }
  body.addEventListener('click', function (event) {
    var link = event.target.closest('a.view');
    if (link) { event.preventDefault(); open(link.dataset.run, link.textContent + ' [' + link.dataset.variant + ']'); }
  });
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_pairs_tool_calls_with_their_results_and_names_compactions_and_doom_loops() {
        let mut step = StepView::default();
        let add = |step: &mut StepView, kind: &str, body: Value| step.add(kind, &body);
        add(&mut step, "llm_text_delta", json!({ "text": "Reading " }));
        add(&mut step, "llm_text_delta", json!({ "text": "it." }));
        add(&mut step, "tool_start", json!({ "call_id": "c1", "tool": "read_file", "arguments": "{\"path\":\"a.rs\"}" }));
        add(&mut step, "tool_end", json!({ "call_id": "c1", "tool": "read_file", "is_error": false, "result_summary": "fn main() {}" }));
        add(&mut step, "microcompact_ran", json!({ "strategy": "masking", "cleared": 1, "tokens_before": 9000, "tokens_after": 4000 }));
        add(&mut step, "doom_loop_detected", json!({ "detector": "identical_calls", "tool": "read_file", "repeats": 3, "reaction": "warn" }));
        add(&mut step, "cache_break_detected", json!({ "changed": ["system", "history"] }));
        add(&mut step, "step_complete", json!({ "remaining_step_budget": 3 }));
        let view = step.json(4);
        assert_eq!(view["text"], "Reading it.");
        assert_eq!(view["tools"][0]["result"], "fn main() {}");
        assert_eq!(view["tools"][0]["error"], false);
        assert_eq!(view["notes"][0], json!(["compaction", "compaction layer 0 by masking: 9000 → 4000 tokens"]));
        assert_eq!(view["notes"][1][0], "doom");
        assert_eq!(view["notes"][2], json!(["note", "the loop's detector: cache break (system, history)"]));
        assert_eq!(view["notes"].as_array().unwrap().len(), 3, "bookkeeping events are not shown");
    }

    #[test]
    fn a_shell_command_shows_its_line_and_what_answered_it() {
        let mut step = StepView::default();
        let served = json!({ "command": "make", "cwd": ".", "entry": 0, "ran": false, "diverged": false, "stdout": "built\n", "stderr": "", "exit_code": 0 });
        step.add("tool_side_command", &served);
        let ran = json!({ "command": "make test", "cwd": "src", "entry": null, "ran": true, "diverged": false, "stdout": "", "stderr": "1 failed\n", "exit_code": 1 });
        step.add("tool_side_command", &ran);
        let missing =
            json!({ "command": "rm -rf /", "cwd": ".", "entry": null, "ran": false, "diverged": true, "stdout": null, "stderr": null, "exit_code": null });
        step.add("tool_side_command", &missing);
        step.add("workspace_diverged", &json!({ "after_exchange": 1, "path": "out.txt", "recorded": "ab", "replayed": null }));
        let view = step.json(2);
        let tools = view["tools"].as_array().unwrap();
        assert_eq!(tools[0]["arguments"], "$ make\n(in .)");
        assert_eq!(tools[0]["result"], "served from the recording's tool_side entry 0\nbuilt\n(exit 0)");
        assert_eq!((&tools[0]["error"], &tools[1]["error"], &tools[2]["error"]), (&json!(false), &json!(true), &json!(true)));
        assert_eq!(tools[1]["result"], "ran for real\n1 failed\n(exit 1)");
        assert_eq!(tools[2]["result"], "not run: the recording lacks it (tool_side divergence)");
        assert_eq!(
            view["notes"],
            json!([["fault", "workspace differs from the recording after exchange 1: out.txt (recorded, missing (or not stored) here)"]]),
            "shell commands are not notes of raw JSON; a diverged workspace is one of its own"
        );
    }

    #[test]
    fn a_step_whose_reply_is_kept_does_not_repeat_its_streamed_text() {
        let mut step = StepView::default();
        step.add("llm_text_delta", &json!({ "text": "Reading it." }));
        step.calls.push(json!({ "reply_message": 3 }));
        assert_eq!(step.json(1)["text"], "");
    }
}
