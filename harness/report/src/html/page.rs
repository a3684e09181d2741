//! Assembling the page from the report tables.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use super::escape;
use super::svg::{self, CallPoint, Mark};
use super::viewer;
use crate::compare::Comparison;
use crate::error::ReportError;
use crate::render::{Verdict, maybe, percent, signed};
use crate::table::Table;

/// Runs drawn as timelines; past this the page lists them in the table only.
const TIMELINES_SHOWN: usize = 300;

/// Columns of the runs table, by report column name, with their headers.
const RUN_COLUMNS: [(&str, &str); 14] = [
    ("scenario", "scenario"),
    ("variant", "variant"),
    ("strategy", "strategy"),
    ("outcome", "outcome"),
    ("passed", "pass"),
    ("steps_used", "steps"),
    ("step_budget", "budget"),
    ("doom_loop_first_step", "doom loop at"),
    ("cache_breaks", "cache breaks"),
    ("cache_breaks_simulated", "simulated breaks"),
    ("input_tokens_total", "input tokens"),
    ("output_tokens_total", "output tokens"),
    ("compaction_savings_ratio", "savings"),
    ("estimated_cost_usd", "cost $"),
];
/// Positions of the outcome and pass columns in [`RUN_COLUMNS`].
const OUTCOME: usize = 3;
const PASSED: usize = 4;
/// The outcome of a run that did not run.
const SKIPPED: &str = "skipped";

/// The page for the report in `dir`, with the diff against `baseline`
/// (and its gate verdict) when given.
pub fn render(dir: &Path, baseline: Option<&Verdict<'_>>) -> Result<String, ReportError> {
    let runs = Table::load(dir, "runs")?;
    let steps = Table::load(dir, "steps")?;
    let events = Table::load(dir, "events")?;
    let mut html = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(
        html,
        "<title>reloop report: {}</title><style>{STYLE}{}{}</style></head><body>",
        escape(&dir.display().to_string()),
        viewer::STYLE,
        super::frontier::STYLE
    );
    let skipped = runs.text("outcome")?.iter().filter(|outcome| *outcome == SKIPPED).count();
    let passed = runs.number("passed").map_or(0, |v| v.iter().filter(|p| **p == Some(1.0)).count()).saturating_sub(skipped);
    let failed = runs.len() - passed - skipped;
    let skipped_text = if skipped > 0 { format!(", {skipped} skipped") } else { String::new() };
    let _ = write!(
        html,
        "<h1>reloop report</h1><p class=\"summary\">{} runs, {passed} passed, {failed} failed{skipped_text}: <code>{}</code></p>",
        runs.len(),
        escape(&dir.display().to_string())
    );
    if let Some(verdict) = baseline {
        diff_section(&mut html, verdict);
    }
    viewer::sweep_section(&mut html, &runs, &steps)?;
    super::paired::section(&mut html, &runs)?;
    runs_section(&mut html, &runs)?;
    html.push_str("<div id=\"viewer\"><p>Click a scenario in the runs table to step through its run.</p></div>");
    timelines_section(&mut html, &runs, &steps, &events)?;
    viewer::run_data(&mut html, &runs, &steps, &events)?;
    let _ = writeln!(html, "<script>{SCRIPT}{}</script></body></html>", viewer::SCRIPT);
    Ok(html)
}

/// The runs table, grouped by scenario (in order of first appearance),
/// with filters for outcome, strategy and wire; a scenario opens its run in
/// the viewer.
fn runs_section(html: &mut String, runs: &Table) -> Result<(), ReportError> {
    let filtered = [("outcome", "outcome"), ("strategy", "strategy"), ("wire", "wire")];
    let filter_values: Vec<Vec<String>> = filtered.iter().map(|(name, _)| cells(runs, name)).collect::<Result<_, _>>()?;
    html.push_str("<h2>Runs</h2><p id=\"filters\">");
    for ((name, label), values) in filtered.iter().zip(&filter_values) {
        let mut distinct: Vec<&String> = values.iter().filter(|v| !v.is_empty()).collect();
        distinct.sort();
        distinct.dedup();
        let _ = write!(html, "<label>{label} <select name=\"{name}\"><option value=\"\">all</option>");
        for value in distinct {
            let _ = write!(html, "<option>{}</option>", escape(value));
        }
        html.push_str("</select></label>");
    }
    html.push_str("</p><table class=\"sortable\" id=\"runs\"><thead><tr>");
    for (_, header) in RUN_COLUMNS {
        let _ = write!(html, "<th>{header}</th>");
    }
    html.push_str("</tr></thead><tbody>");
    let mut columns: Vec<Vec<String>> = RUN_COLUMNS.iter().map(|(name, _)| cells(runs, name)).collect::<Result<_, _>>()?;
    // A skipped run (its agent is not installed) neither passed nor failed.
    let skipped: Vec<bool> = columns[OUTCOME].iter().map(|outcome| outcome == SKIPPED).collect();
    for (cell, _) in columns[PASSED].iter_mut().zip(skipped).filter(|(_, skipped)| *skipped) {
        *cell = SKIPPED.to_owned();
    }
    let scenarios = &columns[0];
    let mut first_seen: HashMap<&str, usize> = HashMap::new();
    for (row, scenario) in scenarios.iter().enumerate() {
        first_seen.entry(scenario.as_str()).or_insert(row);
    }
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|row| first_seen[scenarios[*row].as_str()]);
    for (position, &row) in order.iter().enumerate() {
        let mut classes = Vec::new();
        if columns[PASSED][row] == "no" {
            classes.push("failed");
        }
        if position == 0 || scenarios[order[position - 1]] != scenarios[row] {
            classes.push("first");
        }
        let class = if classes.is_empty() { String::new() } else { format!(" class=\"{}\"", classes.join(" ")) };
        let data: String = filtered.iter().zip(&filter_values).map(|((name, _), values)| format!(" data-{name}=\"{}\"", escape(&values[row]))).collect();
        let _ = write!(html, "<tr{class}{data}>");
        for (index, column) in columns.iter().enumerate() {
            if index == 0 {
                let variant = escape(&columns[1][row]);
                let _ = write!(html, "<td><a class=\"view\" href=\"#viewer\" data-run=\"{row}\" data-variant=\"{variant}\">{}</a></td>", escape(&column[row]));
            } else {
                let _ = write!(html, "<td>{}</td>", escape(&column[row]));
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
    Ok(())
}

/// A column as cell texts, whatever its type; blank when absent.
fn cells(table: &Table, name: &str) -> Result<Vec<String>, ReportError> {
    if let Some(numbers) = table.number(name) {
        let boolean = table.batch.column_by_name(name).is_some_and(|c| *c.data_type() == arrow_schema::DataType::Boolean);
        return Ok(numbers
            .into_iter()
            .map(|value| match (boolean, value) {
                (true, Some(v)) => if v == 1.0 { "yes" } else { "no" }.to_owned(),
                (_, value) => value.map_or_else(String::new, crate::render::number),
            })
            .collect());
    }
    Ok(table.text_opt(name)?.map_or_else(|| vec![String::new(); table.len()], |v| v.into_iter().map(Option::unwrap_or_default).collect()))
}

fn diff_section(html: &mut String, verdict: &Verdict<'_>) {
    let c: &Comparison = verdict.comparison;
    let _ = write!(html, "<h2>Against the baseline</h2><p class=\"{}\">{}</p>", if verdict.passed() { "pass" } else { "fail" }, escape(&verdict.headline()));
    let failures: Vec<String> = verdict.failures().map(|f| f.describe()).collect();
    if !failures.is_empty() {
        html.push_str("<ul class=\"failures\">");
        for failure in failures {
            let _ = write!(html, "<li>{}</li>", escape(&failure));
        }
        html.push_str("</ul>");
    }
    html.push_str(
        "<table class=\"sortable\" id=\"diff\"><thead><tr><th>metric</th><th>base</th><th>new</th><th>delta</th><th>relative</th></tr></thead><tbody>",
    );
    for m in &c.metrics {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&m.metric),
            maybe(m.base),
            maybe(m.new),
            signed(m.delta),
            percent(m.relative)
        );
    }
    html.push_str("</tbody></table>");
    let moved: Vec<String> = c
        .added
        .iter()
        .map(|(key, _)| format!("{key} added"))
        .chain(c.removed.iter().map(|key| format!("{key} removed")))
        .chain(c.changed.iter().map(|change| crate::render::markdown::change_summary(change, 4).replace('`', "")))
        .collect();
    if !moved.is_empty() {
        html.push_str("<ul class=\"moved\">");
        for line in moved {
            let _ = write!(html, "<li>{}</li>", escape(&line));
        }
        html.push_str("</ul>");
    }
}

/// A run's key: (scenario, variant, trial).
type RunKeyRef = (String, String, u64);

fn timelines_section(html: &mut String, runs: &Table, steps: &Table, events: &Table) -> Result<(), ReportError> {
    let mut calls: HashMap<RunKeyRef, Vec<CallPoint>> = HashMap::new();
    let step_keys = steps.run_keys()?;
    let purpose = steps.text_opt("purpose")?.unwrap_or_default();
    let column = |name| steps.number(name).unwrap_or_else(|| vec![None; steps.len()]);
    let (step, input, uncompacted, cache_read, broke) =
        (column("step"), column("input_tokens"), column("input_tokens_uncompacted"), column("cache_read_tokens"), column("cache_break_simulated"));
    for row in 0..steps.len() {
        let main = purpose.get(row).and_then(Option::as_deref).is_none_or(|p| p != "compaction");
        let Some(tokens) = input[row].filter(|_| main) else { continue };
        calls.entry(step_keys[row].clone()).or_default().push(CallPoint {
            step: step[row].unwrap_or(0.0) as u64,
            input_tokens: tokens,
            uncompacted: uncompacted[row],
            cache_hit: cache_read[row].is_some_and(|v| v > 0.0),
            cache_break: broke[row] == Some(1.0),
        });
    }
    let mut marks: HashMap<RunKeyRef, Vec<Mark>> = HashMap::new();
    let (event_keys, kind) = (events.run_keys()?, events.text("kind")?);
    let (event_step, layer) = (events.number("step").unwrap_or_default(), events.number("layer").unwrap_or_default());
    for row in 0..events.len() {
        let step = event_step.get(row).copied().flatten().unwrap_or(0.0) as u64;
        let mark = match (layer.get(row).copied().flatten(), kind[row].as_str()) {
            (Some(layer), _) => Mark { step, label: format!("L{layer}"), class: "compaction" },
            (None, "doom_loop_detected" | "doom_loop_cycle_detected" | "doom_loop_no_progress_detected") => {
                Mark { step, label: "doom loop".to_owned(), class: "doom" }
            }
            _ => continue,
        };
        marks.entry(event_keys[row].clone()).or_default().push(mark);
    }
    html.push_str("<h2>Timelines</h2><p class=\"legend\">Prompt tokens per main call: <span class=\"sent\">sent</span>, <span class=\"uncompacted\">uncompacted</span>; dots: <span class=\"hit\">cache hit</span>, <span class=\"break\">cache break (simulated)</span>, <span class=\"miss\">no cache</span>; vertical marks: compactions by layer and the doom loop.</p>");
    let run_keys = runs.run_keys()?;
    // The header's counts are the runs table's own figures (every call of
    // the run), not recounted from the plotted main calls.
    let run_figure = |name: &str| runs.number(name).unwrap_or_else(|| vec![None; runs.len()]);
    let (llm_calls, breaks) = (run_figure("llm_calls"), run_figure("cache_breaks_simulated"));
    let layers: Vec<Vec<Option<f64>>> = (0..=4).map(|layer| run_figure(&format!("compactions_layer{layer}"))).collect();
    for row in 0..runs.len().min(TIMELINES_SHOWN) {
        let key = run_keys[row].clone();
        let run_calls = calls.remove(&key).unwrap_or_default();
        let run_marks = marks.remove(&key).unwrap_or_default();
        let hits = run_calls.iter().filter(|c| c.cache_hit).count();
        let compactions: f64 = layers.iter().filter_map(|layer| layer[row]).sum();
        let _ = write!(
            html,
            "<details{}><summary>{} <small>{}: {} calls, {} compactions, cache hits {hits} of {} main calls, simulated breaks {}</small></summary>{}</details>",
            if row == 0 { " open" } else { "" },
            escape(&key.0),
            escape(&key.1),
            crate::figures::maybe(llm_calls[row]),
            crate::figures::number(compactions),
            run_calls.len(),
            crate::figures::maybe(breaks[row]),
            svg::timeline(&run_calls, &run_marks)
        );
    }
    if runs.len() > TIMELINES_SHOWN {
        let _ = write!(html, "<p>… {} more runs, in the table above only.</p>", runs.len() - TIMELINES_SHOWN);
    }
    Ok(())
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}th{background:#f3f3f3;cursor:pointer;user-select:none}th.asc::after{content:' ▲'}th.desc::after{content:' ▼'}tr.failed td{background:#fdecea}.fail{color:#b00020;font-weight:bold}.pass{color:#1b7f3b;font-weight:bold}svg{display:block;margin:.5em 0}svg text{font-size:11px;fill:#444}.axes line{stroke:#888}polyline{fill:none;stroke-width:2}polyline.sent{stroke:#1f77b4}polyline.uncompacted{stroke:#aaa;stroke-dasharray:4 3}circle.hit{fill:#2ca02c}circle.break{fill:#d62728}circle.miss{fill:#bbb}.mark line{stroke-width:1}.compaction line{stroke:#9467bd}.doom line{stroke:#ff7f0e;stroke-width:2}.doom text{fill:#ff7f0e}rect.bar{fill:#1f77b4}span.sent{color:#1f77b4}span.uncompacted{color:#888}span.hit{color:#2ca02c}span.break{color:#d62728}span.miss{color:#999}details{margin:.3em 0}";

/// Click a header to sort by it; numbers sort as numbers, blanks last.
const SCRIPT: &str = r#"
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, index) {
    th.addEventListener('click', function () {
      var ascending = !th.classList.contains('asc');
      table.querySelectorAll('th').forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(ascending ? 'asc' : 'desc');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[index].textContent, y = b.cells[index].textContent;
        if (x === '' || y === '') { return (x === '') - (y === ''); }
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"#;
