//! The class of a chunk of text, from the counts of one pass over it: the
//! share of CJK characters, of punctuation, of indented lines, and which
//! punctuation dominates. Each class has its own cost per plain byte.

use std::fmt;

use super::features::Features;
use super::ratios::{CJK_MIN_SHARE, CODE_MIN_CALL_PUNCT, PROSE_MAX_INDENTED, PROSE_MAX_PUNCT};

/// The kinds of text the estimator tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TextClass {
    /// Source code: calls, statements, indentation.
    Code,
    /// Natural-language text in Latin script: docs, READMEs, commit messages.
    Prose,
    /// JSON, YAML, XML, HTML: structured data and markup.
    Json,
    /// Chinese, Japanese or Korean text.
    Cjk,
}

impl TextClass {
    /// Every class, in a fixed order (the order of [`TextClass::index`]).
    pub const ALL: [Self; 4] = [Self::Code, Self::Prose, Self::Json, Self::Cjk];

    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Prose => "prose",
            Self::Json => "json",
            Self::Cjk => "cjk",
        }
    }

    /// Position in [`TextClass::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for TextClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
