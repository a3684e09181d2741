//! `reloop report DIR --html FILE`: one self-contained page (inline CSS,
//! inline SVG, inline script; no network): the diff against a baseline; for
//! a sweep, savings, cost, cache breaks and retention by strategy with the
//! cost–retention frontier ([`strategies`], [`frontier`]) and the strategies
//! of each scenario overlaid; the runs table grouped by scenario with filters; a step-by-step
//! viewer of any run ([`viewer`]), with the messages each call sent
//! ([`sent`]); and per run a timeline of prompt tokens
//! with compaction, cache and doom-loop marks.

pub mod frontier;
mod page;
mod paired;
mod sent;
mod strategies;
pub mod svg;
mod viewer;

pub use page::render;

/// Text safe in HTML and SVG.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
