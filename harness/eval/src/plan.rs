//! A batch's plan. Every scenario file is read and validated before the
//! first run starts, so bad input stops the batch with every error at once;
//! the plan then keeps only each file's path and run names. The files are
//! loaded again when their runs start, and dropped when those runs end, so
//! a batch holds a few scenarios at a time, however many it runs. The
//! files are read on as many threads as the batch has jobs: no run starts
//! before the last is checked, so reading them one at a time was start-up
//! that did not get shorter with a second core.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use reloop_agent::WireFormat;

use reloop_files::kind::Skipped;

use crate::report::RunKey;
use crate::scenario::{Discovered, LastRecording, ScenarioFile, discover};
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
    /// The recordings found below the directories given, and left out.
    pub skipped: Vec<Skipped>,
    /// How many times each run is made (`--repeat`, at least 1): each
    /// trial its own run, with its own mock session and workspace.
    pub trials: u64,
    /// The runs a cut-short batch finished already (`--resume`), which
    /// this one leaves out.
    pub finished: BTreeSet<RunKey>,
}

impl Plan {
    /// Validates every scenario under `paths` (and the recordings they name),
    /// reporting every error rather than stopping at the first.
    pub fn validate(paths: &[PathBuf], variants: Vec<RunVariant>) -> Result<Self, Vec<InputError>> {
        Self::validate_over(paths, variants, None, 1)
    }

    /// [`Plan::validate`], each built-in-loop scenario run over `wires`
    /// (as `name@wire`) instead of its own when given: a sweep compares
    /// `native` on every wire that has it (`sweep --wires`). An `agent:`
    /// scenario keeps the wire its agent speaks. The files are read on
    /// `jobs` threads (each dropped once its runs are named).
    pub fn validate_over(paths: &[PathBuf], variants: Vec<RunVariant>, wires: Option<&[WireFormat]>, jobs: usize) -> Result<Self, Vec<InputError>> {
        let Discovered { files, skipped } = discover(paths).map_err(|error| vec![error])?;
        if files.is_empty() {
            let path = paths.first().map_or(Path::new("."), PathBuf::as_path);
            return Err(vec![InputError::file(path, "no scenario files (*.yaml) found")]);
        }
        let last = LastRecording::default();
        let read = |path: &PathBuf| {
            ScenarioFile::load_sharing(path, &last).map(|file| match wires {
                Some(wires) if file.spec.agent.is_none() => wires.iter().map(|wire| (format!("{}@{}", file.name, wire.as_str()), *wire)).collect(),
                _ => file.run_names(),
            })
        };
        let pool = (jobs > 1).then(|| rayon::ThreadPoolBuilder::new().num_threads(jobs).build().ok()).flatten();
        let read: Vec<_> = match pool {
            Some(pool) => pool.install(|| files.par_iter().map(read).collect()),
            None => files.iter().map(read).collect(),
        };
        let mut planned = Vec::with_capacity(files.len());
        let mut errors = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (path, runs) in files.into_iter().zip(read) {
            match runs {
                Ok(runs) => {
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
        if errors.is_empty() { Ok(Self { files: planned, variants, skipped, trials: 1, finished: BTreeSet::new() }) } else { Err(errors) }
    }

    /// How many runs the batch makes, every trial counted.
    pub fn runs(&self) -> usize {
        let finished = self
            .files
            .iter()
            .flat_map(|file| self.runs_of(file))
            .map(|(run, variant)| (0..self.trials).filter(|&trial| self.is_finished(&run.0, variant, trial)).count());
        self.distinct_runs() * self.trials as usize - finished.sum::<usize>()
    }

    /// The plan without the runs in `finished` (a resumed batch's).
    pub fn resuming(self, finished: impl IntoIterator<Item = RunKey>) -> Self {
        Self { finished: finished.into_iter().collect(), ..self }
    }

    /// Whether trial `trial` of run `name` under `variant` finished in the
    /// batch this one resumes.
    pub fn is_finished(&self, name: &str, variant: &RunVariant, trial: u64) -> bool {
        !self.finished.is_empty() && self.finished.contains(&(name.to_owned(), variant.name().to_owned(), trial))
    }

    /// How many runs the batch makes once each (scenario × wire × variant).
    pub fn distinct_runs(&self) -> usize {
        self.files.iter().map(|file| self.runs_of(file).len()).sum()
    }

    /// The plan with each run made `trials` times (at least once).
    pub fn repeated(self, trials: u64) -> Self {
        Self { trials: trials.max(1), ..self }
    }

    /// The runs of `file`: each of its wires under each variant, but for
    /// `native` on a wire without a provider-side mechanism, which would run
    /// as `none` under another name.
    pub fn runs_of<'a>(&'a self, file: &'a PlannedFile) -> Vec<(&'a (String, WireFormat), &'a RunVariant)> {
        file.runs.iter().flat_map(|run| self.variants.iter().filter(|variant| variant.runs_on(run.1)).map(move |variant| (run, variant))).collect()
    }

    /// How many runs [`Plan::runs_of`] leaves out.
    pub fn skipped_native(&self) -> usize {
        self.files.iter().map(|file| file.runs.len()).sum::<usize>() * self.variants.len() - self.distinct_runs()
    }
}

/// The path of planned file `index`, or `current` when the name repeats
/// within the file being planned.
fn planned_path<'a>(planned: &'a [PlannedFile], index: usize, current: &'a Path) -> &'a Path {
    planned.get(index).map_or(current, |file| &file.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDING: &str = "format: reloop.recording/v1\nexchanges:\n  - text: done\n";

    fn scenario(name: &str, wire: &str) -> String {
        format!("name: {name}\nwire: {wire}\nmodel: gpt-4o\nsystem: s\ntask: t\nrecording: recording.yaml\n")
    }

    fn batch(files: &[(&str, String)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("recording.yaml"), RECORDING).unwrap();
        for (file, text) in files {
            std::fs::write(dir.path().join(file), text).unwrap();
        }
        dir
    }

    #[test]
    fn a_plan_keeps_names_and_paths_and_counts_runs_under_every_variant() {
        let dir = batch(&[("a.yaml", scenario("a", "[openai-chat, anthropic]")), ("b.yaml", scenario("b", "openai-responses"))]);
        let variants = vec![RunVariant::Label("x".into()), RunVariant::Label("y".into())];
        let plan = Plan::validate(&[dir.path().to_owned()], variants).unwrap();
        let names: Vec<&str> = plan.files.iter().flat_map(|f| f.runs.iter().map(|(name, _)| name.as_str())).collect();
        assert_eq!(names, ["a@openai-chat", "a@anthropic", "b"]);
        assert_eq!(plan.files[1].path, dir.path().join("b.yaml"));
        assert_eq!(plan.runs(), 6);
    }

    #[test]
    fn every_bad_file_and_every_repeated_name_is_reported_before_anything_runs() {
        let dir = batch(&[("a.yaml", scenario("same", "openai-chat")), ("b.yaml", scenario("same", "openai-chat")), ("c.yaml", "model: gpt-4o\n".to_owned())]);
        let errors = Plan::validate(&[dir.path().to_owned()], vec![RunVariant::Label("x".into())]).unwrap_err();
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 2, "{messages:?}");
        assert!(messages[0].contains("b.yaml") && messages[0].contains("`same` is already used by") && messages[0].contains("a.yaml"), "{messages:?}");
        assert!(messages[1].contains("c.yaml"), "{messages:?}");
        // Read on three threads, the files are checked and reported in the same order.
        let threaded = Plan::validate_over(&[dir.path().to_owned()], vec![RunVariant::Label("x".into())], None, 3).unwrap_err();
        assert_eq!(threaded.iter().map(ToString::to_string).collect::<Vec<_>>(), messages);
    }

    #[test]
    fn a_file_named_by_overlapping_paths_is_planned_once() {
        let dir = batch(&[("a.yaml", scenario("a", "openai-chat"))]);
        std::fs::create_dir(dir.path().join("long")).unwrap();
        std::fs::write(dir.path().join("long/b.yaml"), scenario("b", "openai-chat").replace("recording.yaml", "../recording.yaml")).unwrap();
        let paths = [dir.path().to_owned(), dir.path().join("long"), dir.path().join("a.yaml")];
        let plan = Plan::validate(&paths, vec![RunVariant::Label("x".into())]).unwrap();
        assert_eq!(plan.runs(), 2, "{plan:?}");
    }

    /// `--wires` runs a built-in-loop scenario over each wire given, and
    /// `native` only where the wire has a mechanism; the count agrees.
    #[test]
    fn wires_override_a_scenarios_own_and_native_skips_wires_without_a_mechanism() {
        use reloop_agent::context::StrategyName;
        let dir = batch(&[("a.yaml", scenario("a", "openai-chat"))]);
        let variants = [StrategyName::Native, StrategyName::None].map(|s| RunVariant::Swept(crate::sweep::Variant::of_strategy(s))).to_vec();
        let wires = [WireFormat::OpenaiChat, WireFormat::Anthropic, WireFormat::OpenaiResponses];
        let plan = Plan::validate_over(&[dir.path().to_owned()], variants.clone(), Some(&wires), 2).unwrap();
        let runs: Vec<String> = plan.runs_of(&plan.files[0]).iter().map(|((name, _), variant)| format!("{name} {}", variant.name())).collect();
        assert_eq!(runs, ["a@openai-chat none", "a@anthropic native", "a@anthropic none", "a@openai-responses native", "a@openai-responses none"]);
        assert_eq!((plan.runs(), plan.skipped_native()), (5, 1));
        let own = Plan::validate(&[dir.path().to_owned()], variants).unwrap();
        assert_eq!((own.runs(), own.skipped_native()), (1, 1), "its own wire, openai-chat, has none");
    }

    #[test]
    fn an_empty_batch_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let errors = Plan::validate(&[dir.path().to_owned()], Vec::new()).unwrap_err();
        assert!(errors[0].to_string().contains("no scenario files"), "{errors:?}");
    }
}
