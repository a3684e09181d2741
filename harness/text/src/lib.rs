//! Text as reloop writes it for others to read, each rule in one place
//! because a writer and a reader (or two writers) in different crates must
//! agree on it: the eval crate writes the report's text columns and the
//! report crate reads them back ([`ranges`], [`cut`]); the mock's log lines
//! and the report's terminal output escape the same characters
//! ([`escape_control`]); the agent's and the mock's compaction notes quote
//! the same way ([`excerpt`]). No dependencies, so any crate may use it.

mod cut;
mod escape;
pub mod ranges;

pub use cut::{cut, excerpt};
pub use escape::escape_control;
