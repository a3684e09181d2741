//! The cost–retention frontier as an inline SVG scatter: one point per
//! strategy at (retention, cost with the prompt cache priced), labelled with
//! its variant, the Pareto-optimal ones ringed and joined by a dashed
//! staircase.
//! A strategy without a retention figure (an older report, or nothing
//! needed) sits in a lane of its own left of the axis, so it is still drawn
//! and never mistaken for a measured 0; one whose runs did not complete is
//! drawn hollow with how they ended, since it looks cheap for having done less.

use std::fmt::Write as _;

use super::escape;
use super::svg::{PALETTE, open};
use crate::figures::number;
use crate::strategy_totals::StrategyTotals;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 48.0;
/// Width of the lane for strategies without a retention figure.
const UNMEASURED_LANE: f64 = 56.0;
/// Vertical room a point's label needs before the next is moved down.
const LABEL_HEIGHT: f64 = 12.0;

/// The x-axis label: what retention is (`docs/metrics.md`).
pub const RETENTION_AXIS: &str = "retention: 1 − references lost / needed";
/// The y-axis label.
pub const COST_AXIS: &str = "cost, USD (prompt cache priced)";

/// One strategy on a chart.
#[derive(Debug, Clone, Copy)]
pub struct Point<'a> {
    /// Its figures.
    pub totals: &'a StrategyTotals,
    /// Its colour: the variant's position in the sweep.
    pub colour: usize,
    /// Whether it is on the frontier ([`crate::strategy_totals::pareto_optimal`]).
    pub optimal: bool,
}

/// The scatter of `points`.
pub fn chart(points: &[Point<'_>], title: &str) -> String {
    let measured: Vec<f64> = points.iter().filter_map(|p| p.totals.retention()).collect();
    let unmeasured = measured.len() < points.len();
    // Retention is usually close to 1: the axis starts at the tenth below the
    // lowest figure, so nearby strategies stay apart.
    let low = measured.iter().fold(0.9_f64, |low, r| low.min((r * 10.0).floor() / 10.0)).max(0.0);
    let (top, cost_step) = cost_scale(points.iter().map(|p| p.totals.cost_usd).fold(0.0, f64::max));
    let plot_left = LEFT + if unmeasured { UNMEASURED_LANE } else { 0.0 };
    let bottom = HEIGHT - BOTTOM;
    let x = |retention: Option<f64>| match retention {
        Some(r) => plot_left + 8.0 + (r - low) / (1.0 - low) * (WIDTH - RIGHT - plot_left - 16.0),
        None => LEFT + UNMEASURED_LANE / 2.0,
    };
    let y = |cost: f64| TOP + (1.0 - cost / top) * (bottom - TOP);
    let mut svg = open(WIDTH, HEIGHT, title);
    axes(&mut svg, (low, top, cost_step), plot_left, &x, &y);
    if unmeasured {
        let _ = write!(
            svg,
            r#"<g class="unmeasured"><line x1="{right}" x2="{right}" y1="{TOP}" y2="{bottom}"/><text x="{middle}" y="{tick}" text-anchor="middle">-</text><text x="{middle}" y="{note}" text-anchor="middle">not measured</text></g>"#,
            right = plot_left,
            middle = LEFT + UNMEASURED_LANE / 2.0,
            tick = bottom + 14.0,
            note = bottom + 28.0,
        );
    }
    // A staircase through the optimal points by retention: the lowest cost
    // at each retention level is the next optimal point's at or above it.
    let mut frontier: Vec<(f64, f64)> = points.iter().filter(|p| p.optimal).map(|p| (x(p.totals.retention()), y(p.totals.cost_usd))).collect();
    frontier.sort_by(|a, b| a.0.total_cmp(&b.0));
    if frontier.len() > 1 {
        let mut path = vec![format!("{:.1},{:.1}", frontier[0].0, frontier[0].1)];
        for pair in frontier.windows(2) {
            let ((from_x, _), (to_x, to_y)) = (pair[0], pair[1]);
            path.push(format!("{from_x:.1},{to_y:.1} {to_x:.1},{to_y:.1}"));
        }
        let _ = write!(svg, r#"<polyline class="frontier" points="{}"/>"#, path.join(" "));
    }
    let placed = label_positions(points.iter().map(|p| (x(p.totals.retention()), y(p.totals.cost_usd))).collect());
    for (point, ((px, py), label_y)) in points.iter().zip(placed) {
        let colour = PALETTE[point.colour % PALETTE.len()];
        let totals = point.totals;
        let mut class = String::from("point");
        if point.optimal {
            class.push_str(" optimal");
        }
        if !totals.completed() {
            class.push_str(" incomplete");
        }
        let label = if totals.completed() { totals.variant.clone() } else { format!("{} ({})", totals.variant, distinct(&totals.incomplete)) };
        let (anchor, label_x) = if px > WIDTH * 0.7 { ("end", px - 12.0) } else { ("start", px + 12.0) };
        let ring = if point.optimal { format!(r#"<circle class="ring" cx="{px:.1}" cy="{py:.1}" r="9" style="stroke:{colour}"/>"#) } else { String::new() };
        let fill = if totals.completed() { colour } else { "#fff" };
        let _ = write!(
            svg,
            r#"<g class="{class}" data-variant="{variant}">{ring}<circle cx="{px:.1}" cy="{py:.1}" r="5" style="fill:{fill};stroke:{colour}"/><text x="{label_x:.1}" y="{label_y:.1}" text-anchor="{anchor}">{label}</text><title>{tip}</title></g>"#,
            variant = escape(&totals.variant),
            label = escape(&label),
            tip = escape(&tooltip(point)),
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The cost axis's top and tick step for a highest cost of `highest`: a
/// step of 1, 2 or 5 times a power of ten giving three to five ticks above
/// 0, and the first tick at or above `highest` plus a twentieth, so the
/// ticks read as prices (`$5`, `$10`, `$15`), not as fractions of the top.
fn cost_scale(highest: f64) -> (f64, f64) {
    if highest <= 0.0 || !highest.is_finite() {
        return (1.0, 0.5);
    }
    let room = highest * 1.05;
    let magnitude = 10f64.powf((room / 4.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * magnitude).find(|step| room / step <= 4.0).unwrap_or(10.0 * magnitude);
    ((room / step).ceil() * step, step)
}

/// The axes, their ticks and their labels.
fn axes(svg: &mut String, (low, top, cost_step): (f64, f64, f64), plot_left: f64, x: &impl Fn(Option<f64>) -> f64, y: &impl Fn(f64) -> f64) {
    let bottom = HEIGHT - BOTTOM;
    let _ = write!(
        svg,
        r#"<g class="axes"><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/><line x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}"/>"#,
        right = WIDTH - RIGHT
    );
    for i in 0..=4 {
        let retention = low + (1.0 - low) * f64::from(i) / 4.0;
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(Some(retention)),
            bottom + 14.0,
            number((retention * 1000.0).round() / 1000.0)
        );
    }
    let steps = (top / cost_step).round() as u32;
    for i in 0..=steps {
        let cost = cost_step * f64::from(i);
        let _ = write!(svg, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#, LEFT - 4.0, y(cost) + 4.0, number(cost));
    }
    let _ = write!(
        svg,
        r#"<text class="axis-label x" x="{cx:.1}" y="{ly:.1}" text-anchor="middle">{RETENTION_AXIS}</text><text class="axis-label y" x="{yx}" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 {yx} {cy:.1})">{COST_AXIS}</text></g>"#,
        cx = (plot_left + WIDTH - RIGHT) / 2.0,
        ly = HEIGHT - 10.0,
        yx = 16.0,
        cy = (TOP + bottom) / 2.0,
    );
}

/// Each point with the baseline of its label: points are labelled beside
/// themselves, and a label that would overlap one already placed near it is
/// moved down below that one. Overlap is judged with half a pixel to spare,
/// so a label moved to exactly one line below another (give or take the
/// rounding of `y + LABEL_HEIGHT`) is not moved again, and every move goes
/// down by at least that half pixel: the loop ends.
fn label_positions(points: Vec<(f64, f64)>) -> Vec<((f64, f64), f64)> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].1.total_cmp(&points[b].1));
    let mut label_y = vec![0.0; points.len()];
    let mut placed: Vec<(f64, f64)> = Vec::new();
    for index in order {
        let (px, py) = points[index];
        let mut at = py + 4.0;
        while let Some(&(_, clash)) = placed.iter().find(|&&(other_x, other_y)| (other_x - px).abs() < 160.0 && (other_y - at).abs() < LABEL_HEIGHT - 0.5) {
            at = clash + LABEL_HEIGHT;
        }
        placed.push((px, at));
        label_y[index] = at;
    }
    points.into_iter().zip(label_y).collect()
}

/// `context_exceeded, llm_error`: each outcome once, in order.
fn distinct(outcomes: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for outcome in outcomes {
        if !seen.contains(&outcome.as_str()) {
            seen.push(outcome);
        }
    }
    seen.join(", ")
}

/// What hovering a point says.
fn tooltip(point: &Point<'_>) -> String {
    let totals = point.totals;
    let retention = totals.retention().map_or_else(|| "-".to_owned(), |r| format!("{:.1}%", r * 100.0));
    let mut text =
        format!("{}: cost ${:.4}, retention {retention}, {} simulated cache breaks", totals.variant, totals.cost_usd, number(totals.cache_breaks_simulated));
    if point.optimal {
        text.push_str("; on the frontier");
    }
    if !totals.completed() {
        let _ = write!(text, "; {} of {} runs did not complete", totals.incomplete.len(), totals.runs);
    }
    text
}

/// The chart's own styles.
pub(super) const STYLE: &str = ".frontier svg text{font-size:12px}.axis-label{fill:#222}polyline.frontier{fill:none;stroke:#555;stroke-width:1.5;stroke-dasharray:5 4}circle.ring{fill:none;stroke-width:2}.unmeasured line{stroke:#bbb;stroke-dasharray:3 3}.point.incomplete text{fill:#888}";

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(variant: &str, cost_usd: f64, references: Option<(f64, f64)>) -> StrategyTotals {
        StrategyTotals { variant: variant.to_owned(), runs: 1, cost_usd, cache_breaks_simulated: 3.0, references, ..StrategyTotals::default() }
    }

    /// The whole SVG for planted figures: the measured points placed by
    /// retention and cost, the unmeasured one in its lane, the optimal ones
    /// ringed and joined, the stopped one hollow with its outcome.
    #[test]
    fn the_chart_places_labels_and_rings_every_strategy() {
        let none = totals("none", 12.5, Some((20.0, 0.0)));
        let masking = totals("masking", 59.6, Some((20.0, 4.0)));
        let lossy = totals("lossy", 6.0, Some((20.0, 10.0)));
        let older = totals("older", 30.0, None);
        let mut stopped = totals("stopped", 2.0, Some((5.0, 0.0)));
        stopped.runs = 2;
        stopped.incomplete = vec!["context_exceeded".to_owned(), "context_exceeded".to_owned()];
        let all = [none, masking, lossy, older, stopped];
        let optimal = crate::strategy_totals::pareto_optimal(&all);
        let points: Vec<Point<'_>> = all.iter().zip(optimal).enumerate().map(|(colour, (totals, optimal))| Point { totals, colour, optimal }).collect();
        let svg = chart(&points, "cost against retention");
        assert_eq!(svg.matches(r#"<g class="point"#).count(), 5);
        assert_eq!(svg.matches(r#"class="point optimal""#).count(), 2, "none and lossy: {svg}");
        assert!(svg.contains(">stopped (context_exceeded)<"), "{svg}");
        assert!(svg.contains(RETENTION_AXIS) && svg.contains(COST_AXIS));
        insta::assert_snapshot!(svg);
    }

    #[test]
    fn the_cost_axis_ticks_at_round_prices() {
        assert_eq!(cost_scale(13.99), (15.0, 5.0));
        assert_eq!(cost_scale(2.45), (3.0, 1.0));
        assert_eq!(cost_scale(0.0123), (0.015, 0.005));
        assert_eq!(cost_scale(0.0), (1.0, 0.5));
        for highest in [0.07, 0.9, 1.0, 3.3, 9.6, 41.0, 180.0] {
            let (top, step) = cost_scale(highest);
            let ticks = (top / step).round();
            assert!(top >= highest && (1.0..=5.0).contains(&ticks), "{highest}: top {top}, step {step}");
        }
    }

    #[test]
    fn labels_of_nearby_points_do_not_overlap() {
        let placed = label_positions(vec![(100.0, 50.0), (110.0, 52.0), (500.0, 51.0)]);
        assert_eq!(placed.iter().map(|p| p.1).collect::<Vec<_>>(), [54.0, 66.0, 55.0]);
    }

    /// Regression: with `y + 12 − y` rounding to just under 12, a label one
    /// line below another clashed with it again, and the page never ended.
    #[test]
    fn labels_stacked_at_fractional_heights_are_placed() {
        let points: Vec<(f64, f64)> = (0..40).map(|i| (300.0, 207.04 + f64::from(i) * 0.1)).collect();
        let placed = label_positions(points);
        let mut heights: Vec<f64> = placed.iter().map(|p| p.1).collect();
        heights.sort_by(f64::total_cmp);
        assert!(heights.windows(2).all(|pair| pair[1] - pair[0] >= LABEL_HEIGHT - 0.5), "{heights:?}");
    }
}
