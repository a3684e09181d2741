//! The shell policy for tools that run commands (`bash`, `shell`,
//! `run_command`): [`parse`] splits a line as bash would, [`policy`] judges
//! every command found. `docs/shell-policy.md` lists what runs, what needs
//! approval, what is denied, and what the policy still lets through.

pub mod parse;
pub mod policy;
#[cfg(test)]
mod tricks;

pub use policy::{Assessment, assess};
