//! The `runs` table as the comparison needs it: each run's key (scenario,
//! variant), its file and outcome, and every numeric column as a metric.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::ReportError;
use crate::table::Table;

/// Columns that measure the machine, not the loop: never compared.
pub const TIMING_COLUMNS: [&str; 1] = ["wall_ms"];

/// Numeric columns that key a row rather than measure it (`trial` numbers
/// a run's repeats): never compared.
pub const KEY_COLUMNS: [&str; 1] = ["trial"];

/// One numeric column of the runs table.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// The column name (`docs/metrics.md`).
    pub name: String,
    /// One value per run; null cells are `None`.
    pub values: Vec<Option<f64>>,
}

/// A runs table.
#[derive(Debug, Clone, PartialEq)]
pub struct Runs {
    /// Where it came from.
    pub path: PathBuf,
    /// `scenario` column.
    pub scenario: Vec<String>,
    /// `variant` column.
    pub variant: Vec<String>,
    /// `scenario_file` column (empty when absent).
    pub scenario_file: Vec<String>,
    /// `outcome` column (empty when absent).
    pub outcome: Vec<String>,
    /// Every numeric or boolean column but the timing and key ones, in table order.
    pub metrics: Vec<Metric>,
    /// Every column's name and type, as read (what the gates' columns are
    /// checked against).
    pub schema: arrow_schema::SchemaRef,
}

impl Runs {
    /// Reads `runs.parquet` from a report directory, or the given file.
    pub fn load(path: &Path) -> Result<Self, ReportError> {
        Self::from_table(&Table::load(path, "runs")?)
    }

    /// As [`Runs::load`], reading only the `columns` named (those the table
    /// has): a reader of a few figures does not hold every column of every run.
    pub fn load_columns(path: &Path, columns: &[&str]) -> Result<Self, ReportError> {
        Self::from_table(&Table::load_columns(path, "runs", columns)?)
    }

    /// As [`Runs::load`], with every column `expected` has checked against
    /// its type there ([`Table::check_types`]).
    pub fn load_checked(path: &Path, expected: &arrow_schema::Schema) -> Result<Self, ReportError> {
        let table = Table::load(path, "runs")?;
        table.check_types(expected)?;
        Self::from_table(&table)
    }

    /// The runs of a table already read.
    pub fn from_table(table: &Table) -> Result<Self, ReportError> {
        let optional_text = |name| -> Result<Vec<String>, ReportError> {
            Ok(table
                .text_opt(name)?
                .map(|values| values.into_iter().map(Option::unwrap_or_default).collect())
                .unwrap_or_else(|| vec![String::new(); table.len()]))
        };
        let metrics = table
            .number_columns()
            .into_iter()
            .filter(|name| !TIMING_COLUMNS.contains(&name.as_str()) && !KEY_COLUMNS.contains(&name.as_str()))
            .filter_map(|name| table.number(&name).map(|values| Metric { name, values }))
            .collect();
        Ok(Self {
            path: table.path.clone(),
            scenario: table.text("scenario")?,
            variant: table.text("variant")?,
            scenario_file: optional_text("scenario_file")?,
            outcome: optional_text("outcome")?,
            metrics,
            schema: table.batch.schema(),
        })
    }

    /// Number of runs.
    pub fn len(&self) -> usize {
        self.scenario.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.scenario.is_empty()
    }

    /// The metric named `name`, if the table has it.
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// The row indices of each (scenario, variant), in first-seen order; a
    /// key has several rows when runs were repeated.
    pub fn rows_by_key(&self) -> (Vec<RunKey>, HashMap<RunKey, Vec<usize>>) {
        use std::collections::hash_map::Entry;
        let mut order = Vec::new();
        let mut rows: HashMap<RunKey, Vec<usize>> = HashMap::with_capacity(self.len());
        for row in 0..self.len() {
            let key = RunKey { scenario: self.scenario[row].clone(), variant: self.variant[row].clone() };
            match rows.entry(key) {
                Entry::Occupied(entry) => entry.into_mut().push(row),
                Entry::Vacant(entry) => {
                    order.push(entry.key().clone());
                    entry.insert(vec![row]);
                }
            }
        }
        (order, rows)
    }
}

/// What runs are joined on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct RunKey {
    /// The scenario name.
    pub scenario: String,
    /// The variant label.
    pub variant: String,
}

impl std::fmt::Display for RunKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.variant == "default" { f.write_str(&self.scenario) } else { write!(f, "{} [{}]", self.scenario, self.variant) }
    }
}
