//! A batch's plan. Every scenario file is read and validated before the
//! first run starts, so bad input stops the batch with every error at once;
//! the plan then keeps only each file's path and run names. The files are
//! loaded again when their runs start, and dropped when those runs end, so
//! a batch holds a few scenarios at a time, however many it runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use reloop_agent::WireFormat;

use crate::scenario::{ScenarioFile, discover};
use crate::sweep::RunVariant;
use crate::yaml::InputError;

/// One scenario file of a batch, validated: where it is and what it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFile {
    /// The scenario file.
    pub path: PathBuf,
    /// Its runs' names (`name@format` for several formats) and formats.
    pub runs: Vec<(String, WireFormat)>,
}

/// Every file of a batch, each run under every variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The scenario files, in discovery order.
    pub files: Vec<PlannedFile>,
    /// The variants each scenario runs under.
    pub variants: Vec<RunVariant>,
}

impl Plan {
    /// Validates every scenario under `paths` (and the recordings they name),
    /// reporting every error rather than stopping at the first.
    pub fn validate(paths: &[PathBuf], variants: Vec<RunVariant>) -> Result<Self, Vec<InputError>> {
        let files = discover(paths).map_err(|error| vec![error])?;
        if files.is_empty() {
            let path = paths.first().map_or(Path::new("."), PathBuf::as_path);
            return Err(vec![InputError::file(path, "no scenario files (*.yaml) found")]);
        }
        let mut planned = Vec::with_capacity(files.len());
        let mut errors = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for path in files {
            match ScenarioFile::load(&path) {
                Ok(file) => {
                    let runs = file.run_names();
                    for (name, _) in &runs {
                        if let Some(first) = seen.insert(name.clone(), planned.len()) {
                            let message = format!("scenario name `{name}` is already used by {}", planned_path(&planned, first, &path).display());
                            errors.push(InputError::field(&path, "name", message));
                        }
                    }
                    planned.push(PlannedFile { path, runs });
                }
                Err(error) => errors.push(error),
            }
        }
        if errors.is_empty() { Ok(Self { files: planned, variants }) } else { Err(errors) }
    }

    /// How many runs the batch makes.
    pub fn runs(&self) -> usize {
        self.files.iter().map(|file| file.runs.len()).sum::<usize>() * self.variants.len()
    }
}

/// The path of planned file `index`, or `current` when the name repeats
/// within the file being planned.
fn planned_path<'a>(planned: &'a [PlannedFile], index: usize, current: &'a Path) -> &'a Path {
    planned.get(index).map_or(current, |file| &file.path)
}
