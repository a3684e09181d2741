//! The kinds of text the estimator tells apart. Their own module, so that
//! the figures per class (`ratios`) and the rule choosing one (`classify`)
//! both depend on it and not on each other.

use std::fmt;

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
