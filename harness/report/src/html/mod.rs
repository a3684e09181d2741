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

/// `value` as the text of a script element: no `<`, since `</script` would
/// end the element early and `<!--` change how it is parsed; `<` only occurs
/// inside JSON strings, where `\u003c` reads back the same.
fn script_json(value: &serde_json::Value) -> String {
    value.to_string().replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    #[test]
    fn run_data_cannot_close_its_script_element() {
        let hostile = "</script><script>alert(1)</script><!--";
        let data = super::script_json(&json!({ "text": hostile }));
        assert!(!data.contains('<'));
        assert_eq!(serde_json::from_str::<Value>(&data).unwrap()["text"], hostile);
    }
}
