//! Inline SVG charts drawn by hand: a step timeline (prompt tokens sent and
//! uncompacted, compaction marks, cache hits and breaks, the doom loop's
//! first step) and a horizontal bar chart. No scripts, no external assets.

use std::fmt::Write as _;

use super::escape;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 180.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 34.0;

/// One model call on the timeline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallPoint {
    /// The loop step it belongs to.
    pub step: u64,
    /// Prompt tokens sent (server count).
    pub input_tokens: f64,
    /// What the prompt would have been without compaction.
    pub uncompacted: Option<f64>,
    /// The provider cache served part of the prompt.
    pub cache_hit: bool,
    /// The simulated cache broke on this call.
    pub cache_break: bool,
}

/// A mark on the timeline at a step: a compaction (`L0`…`L4`), a detected
/// cache break, or the doom loop.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// The step.
    pub step: u64,
    /// Short label.
    pub label: String,
    /// CSS class: `compaction`, `doom`.
    pub class: &'static str,
}

/// The timeline of one run.
pub fn timeline(calls: &[CallPoint], marks: &[Mark]) -> String {
    let top_value = calls.iter().flat_map(|c| [c.input_tokens, c.uncompacted.unwrap_or(0.0)]).fold(1.0, f64::max);
    let last_step = calls.iter().map(|c| c.step).chain(marks.iter().map(|m| m.step)).max().unwrap_or(0).max(1) as f64;
    let x = |step: u64| LEFT + step as f64 / last_step * (WIDTH - LEFT - RIGHT);
    let y = |value: f64| TOP + (1.0 - value / top_value) * (HEIGHT - TOP - BOTTOM);
    let mut svg = open(WIDTH, HEIGHT, "prompt tokens per call");
    axes(&mut svg, top_value, last_step);
    for mark in marks {
        let _ = write!(
            svg,
            r#"<g class="mark {class}"><line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{bottom:.1}"/><text x="{px:.1}" y="{label_y:.1}">{label}</text></g>"#,
            class = mark.class,
            px = x(mark.step),
            bottom = HEIGHT - BOTTOM,
            label_y = TOP - 3.0 + if mark.class == "doom" { 10.0 } else { 0.0 },
            label = escape(&mark.label)
        );
    }
    let line = |points: Vec<(u64, f64)>, class: &str| {
        let path: Vec<String> = points.iter().map(|&(step, value)| format!("{:.1},{:.1}", x(step), y(value))).collect();
        format!(r#"<polyline class="{class}" points="{}"/>"#, path.join(" "))
    };
    let uncompacted: Vec<(u64, f64)> = calls.iter().filter_map(|c| c.uncompacted.map(|u| (c.step, u))).collect();
    if !uncompacted.is_empty() {
        svg.push_str(&line(uncompacted, "uncompacted"));
    }
    svg.push_str(&line(calls.iter().map(|c| (c.step, c.input_tokens)).collect(), "sent"));
    for call in calls {
        let (px, py) = (x(call.step), y(call.input_tokens));
        let class = if call.cache_break {
            "break"
        } else if call.cache_hit {
            "hit"
        } else {
            "miss"
        };
        let _ = write!(
            svg,
            r#"<circle class="{class}" cx="{px:.1}" cy="{py:.1}" r="3"><title>step {}: {} tokens, cache {class}</title></circle>"#,
            call.step, call.input_tokens
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Horizontal bars, one per (label, value in 0..=1), labelled in percent.
pub fn bars(rows: &[(String, f64)], title: &str) -> String {
    let labelled: Vec<(String, f64, String)> = rows.iter().map(|(label, value)| (label.clone(), *value, format!("{:.1}%", value * 100.0))).collect();
    labelled_bars(&labelled, title)
}

/// Horizontal bars, one per (label, length in 0..=1, the value's text).
pub fn labelled_bars(rows: &[(String, f64, String)], title: &str) -> String {
    let row_height = 24.0;
    let height = TOP + rows.len() as f64 * row_height + 8.0;
    let label_width = 140.0;
    let span = WIDTH - label_width - 70.0;
    let mut svg = open(WIDTH, height, title);
    for (i, (label, value, text)) in rows.iter().enumerate() {
        let top = TOP + i as f64 * row_height;
        let width = (value.clamp(0.0, 1.0) * span).max(1.0);
        let _ = write!(
            svg,
            r#"<text x="{lx:.1}" y="{ty:.1}" text-anchor="end">{label}</text><rect class="bar" x="{label_width}" y="{top:.1}" width="{width:.1}" height="{h:.1}"/><text x="{vx:.1}" y="{ty:.1}">{text}</text>"#,
            lx = label_width - 6.0,
            ty = top + row_height * 0.65,
            label = escape(label),
            h = row_height - 6.0,
            vx = label_width + width + 6.0,
            text = escape(text)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Series colours of [`lines`], in order (a variant keeps its colour on every chart).
const PALETTE: [&str; 8] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// One line per series over the steps, with a legend: the strategies of one
/// scenario overlaid. `title` names the value.
pub fn lines(series: &[(String, Vec<(u64, f64)>)], title: &str) -> String {
    let points = || series.iter().flat_map(|(_, points)| points.iter());
    let top_value = points().map(|p| p.1).fold(0.0, f64::max);
    let top_value = if top_value > 0.0 { top_value } else { 1.0 };
    let last_step = points().map(|p| p.0).max().unwrap_or(0).max(1) as f64;
    let x = |step: u64| LEFT + step as f64 / last_step * (WIDTH - LEFT - RIGHT);
    let y = |value: f64| TOP + (1.0 - value / top_value) * (HEIGHT - TOP - BOTTOM);
    let legend_height = 16.0;
    let mut svg = open(WIDTH, HEIGHT + legend_height, title);
    axes(&mut svg, crate::figures::number(top_value), last_step);
    for (i, (name, points)) in series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let path: Vec<String> = points.iter().map(|&(step, value)| format!("{:.1},{:.1}", x(step), y(value))).collect();
        let _ = write!(svg, r#"<polyline class="series" style="stroke:{colour}" points="{}"><title>{}</title></polyline>"#, path.join(" "), escape(name));
        let _ = write!(
            svg,
            r#"<rect x="{lx:.1}" y="{ly:.1}" width="10" height="10" style="fill:{colour}"/><text x="{tx:.1}" y="{ty:.1}">{}</text>"#,
            escape(name),
            lx = LEFT + i as f64 * 110.0,
            ly = HEIGHT + 2.0,
            tx = LEFT + 14.0 + i as f64 * 110.0,
            ty = HEIGHT + 11.0
        );
    }
    svg.push_str("</svg>");
    svg
}

fn open(width: f64, height: f64, title: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img"><title>{}</title>"#,
        escape(title)
    )
}

fn axes(svg: &mut String, top_value: impl std::fmt::Display, last_step: f64) {
    let bottom = HEIGHT - BOTTOM;
    let _ = write!(
        svg,
        r#"<g class="axes"><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/><line x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}"/><text x="{tx}" y="{ty}" text-anchor="end">{top_value}</text><text x="{tx}" y="{bottom}" text-anchor="end">0</text><text x="{right}" y="{sy}" text-anchor="end">step {last_step}</text><text x="{LEFT}" y="{sy}">step 0</text></g>"#,
        right = WIDTH - RIGHT,
        tx = LEFT - 4.0,
        ty = TOP + 8.0,
        sy = bottom + 16.0,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_draws_both_lines_every_call_and_every_mark() {
        let calls = [
            CallPoint { step: 0, input_tokens: 100.0, uncompacted: Some(100.0), cache_hit: false, cache_break: false },
            CallPoint { step: 1, input_tokens: 80.0, uncompacted: Some(200.0), cache_hit: true, cache_break: false },
            CallPoint { step: 2, input_tokens: 90.0, uncompacted: Some(300.0), cache_hit: false, cache_break: true },
        ];
        let marks = [Mark { step: 1, label: "L1".into(), class: "compaction" }, Mark { step: 2, label: "doom loop".into(), class: "doom" }];
        let svg = timeline(&calls, &marks);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains(r#"class="hit""#) && svg.contains(r#"class="break""#));
        assert!(svg.contains(">L1<") && svg.contains(">doom loop<"));
        assert!(svg.contains(r#"points="56.0,102.0 382.0,58.0 708.0,14.0""#), "uncompacted line scaled to the largest value: {svg}");
    }
}
