//! Layered configuration: built-in defaults, then `/etc/mirrord/config.toml`,
//! then `$XDG_CONFIG_HOME/mirrord/config.toml`, then environment variables
//! prefixed with `MIRRORD_`. Later layers override earlier ones field by
//! field, and every value remembers which layer set it so that
//! `mirrord config --explain` can say why a setting has the value it has.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    File(PathBuf),
    Env(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("built-in default"),
            Source::File(path) => write!(f, "{}", path.display()),
            Source::Env(name) => write!(f, "environment variable {name}"),
        }
    }
}

/// A value with its origin.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Sourced<T> {
    fn default(value: T) -> Self {
        Self { value, source: Source::Default }
    }

    fn set(&mut self, value: T, source: Source) {
        self.value = value;
        self.source = source;
    }
}

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("{name}={value:?} is not a valid {expected}")]
    Env { name: &'static str, value: String, expected: &'static str },
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: Sourced<String>,
    pub workers: Sourced<usize>,
    pub request_timeout: Sourced<Duration>,
    pub log_level: Sourced<String>,
    pub cache_dir: Sourced<PathBuf>,
}

/// One file layer: every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileLayer {
    listen: Option<String>,
    workers: Option<usize>,
    request_timeout_secs: Option<u64>,
    log_level: Option<String>,
    cache_dir: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: Sourced::default("127.0.0.1:7700".to_owned()),
            workers: Sourced::default(std::thread::available_parallelism().map_or(2, |n| n.get())),
            request_timeout: Sourced::default(Duration::from_secs(30)),
            log_level: Sourced::default("info".to_owned()),
            cache_dir: Sourced::default(PathBuf::from(".cache/mirrord")),
        }
    }
}

impl Config {
    /// Loads every layer in order.
    pub fn load() -> Result<Self, ConfigError> {
        let mut config = Config::default();
        for path in Self::file_layers() {
            if path.exists() {
                config.apply_file(&path)?;
            }
        }
        config.apply_env()?;
        Ok(config)
    }

    fn file_layers() -> Vec<PathBuf> {
        let mut layers = vec![PathBuf::from("/etc/mirrord/config.toml")];
        let user = env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|home| Path::new(&home).join(".config")));
        if let Some(dir) = user {
            layers.push(dir.join("mirrord/config.toml"));
        }
        layers
    }

    fn apply_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
        let layer: FileLayer =
            toml::from_str(&text).map_err(|source| ConfigError::Parse { path: path.to_owned(), source })?;
        let source = || Source::File(path.to_owned());
        if let Some(listen) = layer.listen {
            self.listen.set(listen, source());
        }
        if let Some(workers) = layer.workers {
            self.workers.set(workers, source());
        }
        if let Some(secs) = layer.request_timeout_secs {
            self.request_timeout.set(Duration::from_secs(secs), source());
        }
        if let Some(level) = layer.log_level {
            self.log_level.set(level, source());
        }
        if let Some(dir) = layer.cache_dir {
            self.cache_dir.set(dir, source());
        }
        Ok(())
    }

    fn apply_env(&mut self) -> Result<(), ConfigError> {
        if let Ok(listen) = env::var("MIRRORD_LISTEN") {
            self.listen.set(listen, Source::Env("MIRRORD_LISTEN"));
        }
        if let Ok(value) = env::var("MIRRORD_WORKERS") {
            let workers = value.parse().map_err(|_| ConfigError::Env {
                name: "MIRRORD_WORKERS",
                value: value.clone(),
                expected: "positive integer",
            })?;
            self.workers.set(workers, Source::Env("MIRRORD_WORKERS"));
        }
        if let Ok(value) = env::var("MIRRORD_REQUEST_TIMEOUT_SECS") {
            let secs: u64 = value.parse().map_err(|_| ConfigError::Env {
                name: "MIRRORD_REQUEST_TIMEOUT_SECS",
                value: value.clone(),
                expected: "number of seconds",
            })?;
            self.request_timeout.set(Duration::from_secs(secs), Source::Env("MIRRORD_REQUEST_TIMEOUT_SECS"));
        }
        if let Ok(level) = env::var("MIRRORD_LOG") {
            self.log_level.set(level, Source::Env("MIRRORD_LOG"));
        }
        Ok(())
    }

    /// `mirrord config --explain`: one line per setting.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        let mut line = |name: &str, value: &dyn fmt::Debug, source: &Source| {
            out.push_str(&format!("{name:<16} = {value:<24?} # {source}\n"));
        };
        line("listen", &self.listen.value, &self.listen.source);
        line("workers", &self.workers.value, &self.workers.source);
        line("request-timeout", &self.request_timeout.value, &self.request_timeout.source);
        line("log-level", &self.log_level.value, &self.log_level.source);
        line("cache-dir", &self.cache_dir.value, &self.cache_dir.source);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_layer_overrides_defaults_and_remembers_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "workers = 3\nlog-level = \"debug\"\n").unwrap();
        let mut config = Config::default();
        config.apply_file(&path).unwrap();
        assert_eq!(config.workers.value, 3);
        assert_eq!(config.workers.source, Source::File(path.clone()));
        assert_eq!(config.listen.source, Source::Default);
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "wrokers = 3\n").unwrap();
        let error = Config::default().apply_file(&path).unwrap_err();
        assert!(error.to_string().contains("unknown field `wrokers`"), "{error}");
    }
}
