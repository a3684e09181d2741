//! How a scenario, a variants file or the command line names a strategy: a
//! built-in's name, a plug-in's file, or a plug-in's command
//! (`docs/strategies.md`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::StrategyName;
use super::plugin::PluginCommand;

/// A strategy as written: `masking`, `my_strategy.py`, or
/// `{ command: [python3, my_strategy.py] }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "a strategy name (roku, opencode, codex, masking, none, native), a plug-in's file, or { command: [program, args...] }")]
pub enum StrategySpec {
    /// A built-in strategy.
    Builtin(StrategyName),
    /// A plug-in by its file: `.py` runs with `python3`, anything else is
    /// run itself (an executable, a script with a `#!` line).
    File(PathBuf),
    /// A plug-in by its command (boxed: a variant stays small).
    Command(Box<PluginCommand>),
}

impl Default for StrategySpec {
    fn default() -> Self {
        Self::Builtin(StrategyName::default())
    }
}

impl From<StrategyName> for StrategySpec {
    fn from(name: StrategyName) -> Self {
        Self::Builtin(name)
    }
}

impl StrategySpec {
    /// Whether this is the built-in `name`.
    pub fn is(&self, name: StrategyName) -> bool {
        matches!(self, Self::Builtin(builtin) if *builtin == name)
    }

    /// The name reports give it before a plug-in has declared its own: a
    /// built-in's name, or the file stem of the plug-in's file (of the
    /// command's last word).
    pub fn label(&self) -> Cow<'_, str> {
        fn stem(path: &Path) -> Cow<'_, str> {
            path.file_stem().map_or_else(|| path.to_string_lossy(), |stem| stem.to_string_lossy())
        }
        match self {
            Self::Builtin(name) => Cow::Borrowed(name.as_str()),
            Self::File(file) => stem(file),
            Self::Command(command) => command.command.last().map_or(Cow::Borrowed("plugin"), |last| stem(Path::new(last))),
        }
    }

    /// The same with a relative plug-in file taken relative to `dir` (the
    /// folder of the file that named it).
    pub fn relative_to(self, dir: &Path) -> Self {
        match self {
            Self::File(file) if file.is_relative() => Self::File(dir.join(file)),
            other => other,
        }
    }
}

/// What the command line reads: a built-in's name, or the path of a
/// plug-in's file, which must exist (made absolute, so the plug-in starts
/// from any scenario's folder).
impl FromStr for StrategySpec {
    type Err = String;

    fn from_str(written: &str) -> Result<Self, Self::Err> {
        if let Some(name) = StrategyName::parse(written) {
            return Ok(Self::Builtin(name));
        }
        let names: Vec<&str> = StrategyName::ALL.iter().map(|name| name.as_str()).collect();
        std::path::absolute(written)
            .ok()
            .filter(|path| path.is_file())
            .map(Self::File)
            .ok_or_else(|| format!("`{written}` is neither a strategy ({}) nor a plug-in's file", names.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_builtin_and_an_existing_file_a_plugin_by_its_stem() {
        assert_eq!("masking".parse::<StrategySpec>(), Ok(StrategySpec::Builtin(StrategyName::Masking)));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("keep_two.py");
        std::fs::write(&file, "").unwrap();
        let spec: StrategySpec = file.to_str().unwrap().parse().unwrap();
        assert_eq!(spec, StrategySpec::File(file));
        assert_eq!(spec.label(), "keep_two");
        let error = "maskng".parse::<StrategySpec>().unwrap_err();
        assert_eq!(error, "`maskng` is neither a strategy (roku, opencode, codex, masking, none, native) nor a plug-in's file");
    }

    #[test]
    fn scenarios_write_a_name_a_file_or_a_command() {
        let read = |yaml: &str| serde_saphyr::from_str::<StrategySpec>(yaml).unwrap();
        assert_eq!(read("none"), StrategySpec::Builtin(StrategyName::None));
        assert_eq!(read("strategies/mine.py"), StrategySpec::File("strategies/mine.py".into()));
        let StrategySpec::Command(command) = read("{ command: [python3, mine.py], timeout_secs: 3 }") else { panic!("a command") };
        assert_eq!((command.command.as_slice(), command.timeout_secs), (["python3".to_owned(), "mine.py".to_owned()].as_slice(), 3));
        assert_eq!(StrategySpec::Command(command).label(), "mine");
        assert!(serde_saphyr::from_str::<StrategySpec>("{ comand: [x] }").is_err(), "a misspelt field is refused");
    }
}
