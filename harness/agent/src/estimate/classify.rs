//! The class of a chunk of text, from the counts of one pass over it: the
//! share of CJK characters, of punctuation, of indented lines, and which
//! punctuation dominates, against the thresholds of `ratios`.

use super::class::TextClass;
use super::features::Features;
use super::ratios::{CJK_MIN_SHARE, CODE_MIN_CALL_PUNCT, PROSE_MAX_INDENTED, PROSE_MAX_PUNCT};

/// The class of one chunk.
pub(super) fn classify(f: &Features) -> TextClass {
    let non_blank = f.non_blank() as f64;
    let lines = f.line_ends.max(1) as f64;
    if f.cjk_bytes as f64 >= CJK_MIN_SHARE * f.bytes as f64 {
        TextClass::Cjk
    } else if (f.punct as f64) < PROSE_MAX_PUNCT * non_blank && (f.indented_lines as f64) < PROSE_MAX_INDENTED * lines {
        TextClass::Prose
    } else if f.call_punct as f64 >= CODE_MIN_CALL_PUNCT * non_blank {
        TextClass::Code
    } else {
        TextClass::Json
    }
}

#[cfg(test)]
mod tests {
    use super::super::features::scan;
    use super::*;

    fn class(text: &str) -> TextClass {
        let mut classes = Vec::new();
        scan(text, |f| classes.push(classify(f)));
        classes[0]
    }

    #[test]
    fn tells_the_four_classes_apart() {
        assert_eq!(class("fn main() {\n    let x = parse(&args);\n    run(x);\n}\n"), TextClass::Code);
        assert_eq!(class("The scheduler starts a job only after it holds the lease, so two instances never run it twice.\n"), TextClass::Prose);
        assert_eq!(class("{\"id\": 17, \"tags\": [\"a\", \"b\"], \"ok\": true}\n"), TextClass::Json);
        assert_eq!(class("metadata:\n  name: api\n  labels:\n    app: api\n"), TextClass::Json);
        assert_eq!(class("<ul><li class=\"x\">one</li><li>two</li></ul>\n"), TextClass::Json);
        assert_eq!(class("备份文件应当保存在与生产服务器不同的位置。\n"), TextClass::Cjk);
        assert_eq!(class("キャッシュを入れたら遅くなった話\n"), TextClass::Cjk);
    }

    #[test]
    fn names_round_trip_through_all() {
        let names: Vec<&str> = TextClass::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names, ["code", "prose", "json", "cjk"]);
        assert!(TextClass::ALL.iter().enumerate().all(|(i, c)| c.index() == i));
    }
}
