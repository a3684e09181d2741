//! Reading one report table: a Parquet file, or the file of that name in a
//! report directory, as one Arrow batch; columns are looked up by name and
//! read as text, numbers or flags whatever integer or float type they have.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader as _};
use arrow_schema::DataType;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::ReportError;

/// The file holding table `name` (`runs`, `steps`, `events`) for `path`: the
/// path itself when it is a file, else `path/name.parquet`.
pub fn table_file(path: &Path, name: &str) -> PathBuf {
    if path.is_dir() { path.join(format!("{name}.parquet")) } else { path.to_owned() }
}

/// Reads a whole Parquet file as one batch.
pub fn read_batch(path: &Path) -> Result<RecordBatch, ReportError> {
    read_columns(path, |_| true)
}

/// Reads the columns of a Parquet file that `keep` names, as one batch: the
/// others are never decoded, so a reader that needs a few columns of a
/// large table holds only those (the sweep's paired table reads six of the
/// runs table's hundred-odd).
pub fn read_columns(path: &Path, keep: impl Fn(&str) -> bool) -> Result<RecordBatch, ReportError> {
    let parquet_error = |e: &dyn std::fmt::Display| ReportError::Parquet { path: path.to_owned(), message: e.to_string() };
    let io_error = |source| ReportError::Io { path: path.to_owned(), source };
    // Checked before opening: opening a FIFO blocks until a writer comes,
    // and a device (/dev/zero) never ends.
    if !std::fs::metadata(path).map_err(io_error)?.is_file() {
        return Err(io_error(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file")));
    }
    let file = File::open(path).map_err(io_error)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| parquet_error(&e))?;
    let kept = builder.schema().fields().iter().enumerate().filter(|(_, field)| keep(field.name())).map(|(i, _)| i);
    let projection = ProjectionMask::roots(builder.parquet_schema(), kept);
    let reader = builder.with_projection(projection).build().map_err(|e| parquet_error(&e))?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(|e| parquet_error(&e))?;
    arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| parquet_error(&e))
}

/// A batch with the file it came from, for errors that name it.
pub struct Table {
    /// Where it was read.
    pub path: PathBuf,
    /// Its rows.
    pub batch: RecordBatch,
}

impl Table {
    /// Reads table `name` for `path` (a report directory or a file).
    pub fn load(path: &Path, name: &str) -> Result<Self, ReportError> {
        let path = table_file(path, name);
        Ok(Self { batch: read_batch(&path)?, path })
    }

    /// As [`Table::load`], reading only the columns named in `columns`
    /// (those the table has).
    pub fn load_columns(path: &Path, name: &str, columns: &[&str]) -> Result<Self, ReportError> {
        let path = table_file(path, name);
        Ok(Self { batch: read_columns(&path, |column| columns.contains(&column))?, path })
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.batch.num_rows()
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn column(&self, name: &str) -> Option<&ArrayRef> {
        self.batch.column_by_name(name)
    }

    fn problem(&self, column: &str, problem: &str) -> ReportError {
        ReportError::Column { path: self.path.clone(), column: column.to_owned(), problem: problem.to_owned() }
    }

    /// A text column every report has; null cells read as empty.
    pub fn text(&self, name: &str) -> Result<Vec<String>, ReportError> {
        self.text_opt(name)?.map(|values| values.into_iter().map(Option::unwrap_or_default).collect()).ok_or_else(|| self.problem(name, "is missing"))
    }

    /// A text column that may be absent (then `None`).
    pub fn text_opt(&self, name: &str) -> Result<Option<Vec<Option<String>>>, ReportError> {
        let Some(column) = self.column(name) else { return Ok(None) };
        match column.data_type() {
            DataType::Utf8 => Ok(Some(column.as_string::<i32>().iter().map(|v| v.map(str::to_owned)).collect())),
            DataType::LargeUtf8 => Ok(Some(column.as_string::<i64>().iter().map(|v| v.map(str::to_owned)).collect())),
            _ => Err(self.problem(name, "is not text")),
        }
    }

    /// A numeric or boolean column as numbers (true = 1), `None` when absent
    /// or of another type (text, lists).
    pub fn number(&self, name: &str) -> Option<Vec<Option<f64>>> {
        numbers(self.column(name)?)
    }

    /// Each row's run: (scenario, variant, trial), the key steps and events
    /// join runs on; trial 0 in a report written before `trial` was a column.
    pub fn run_keys(&self) -> Result<Vec<(String, String, u64)>, ReportError> {
        let trials = self.number("trial").unwrap_or_else(|| vec![None; self.len()]);
        let keys = self.text("scenario")?.into_iter().zip(self.text("variant")?).zip(trials);
        Ok(keys.map(|((scenario, variant), trial)| (scenario, variant, trial.unwrap_or(0.0) as u64)).collect())
    }

    /// The names of every column that reads as numbers, in table order.
    pub fn number_columns(&self) -> Vec<String> {
        self.batch.schema().fields().iter().filter(|field| numeric_type(field.data_type())).map(|field| field.name().clone()).collect()
    }

    /// Checks every column of `expected` this table has against its type
    /// there, by kind: text, number (any integer or float width), flag,
    /// list of the same kind; other types exactly. Extra and missing
    /// columns are left to the readers. A column of the right name and the
    /// wrong type would otherwise be read as absent (a metric) or refused
    /// late; this names it with both types.
    pub fn check_types(&self, expected: &arrow_schema::Schema) -> Result<(), ReportError> {
        for field in self.batch.schema().fields() {
            let Ok(want) = expected.field_with_name(field.name()) else { continue };
            if !same_kind(field.data_type(), want.data_type()) {
                return Err(self.problem(field.name(), &format!("has type {}, expected {} (docs/metrics.md)", field.data_type(), want.data_type())));
            }
        }
        Ok(())
    }

    /// A list-of-text column, `None` when absent.
    pub fn text_lists(&self, name: &str) -> Option<Vec<Vec<String>>> {
        let list = self.column(name)?.as_list_opt::<i32>()?;
        Some(
            (0..list.len())
                .map(|row| {
                    if list.is_null(row) {
                        return Vec::new();
                    }
                    let values = list.value(row);
                    values.as_string_opt::<i32>().map(|s| s.iter().flatten().map(str::to_owned).collect()).unwrap_or_default()
                })
                .collect(),
        )
    }
}

/// Whether a column reads as numbers: integers, floats and flags.
pub(crate) fn numeric_type(data_type: &DataType) -> bool {
    data_type.is_integer() || data_type.is_floating() || *data_type == DataType::Boolean
}

/// Whether two column types read the same way (see [`Table::check_types`]).
fn same_kind(actual: &DataType, expected: &DataType) -> bool {
    let text = |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8);
    let number = |t: &DataType| t.is_integer() || t.is_floating();
    match (actual, expected) {
        (a, e) if text(a) || text(e) => text(a) && text(e),
        (a, e) if number(a) || number(e) => number(a) && number(e),
        (DataType::List(a) | DataType::LargeList(a), DataType::List(e) | DataType::LargeList(e)) => same_kind(a.data_type(), e.data_type()),
        (a, e) => a == e,
    }
}

/// A column's values as `f64`, whatever its numeric type.
fn numbers(column: &ArrayRef) -> Option<Vec<Option<f64>>> {
    match column.data_type() {
        DataType::Boolean => Some(column.as_boolean().iter().map(|v| v.map(|b| f64::from(u8::from(b)))).collect()),
        DataType::Int64 => Some(column.as_primitive::<Int64Type>().iter().map(|v| v.map(|v| v as f64)).collect()),
        DataType::Float64 => Some(column.as_primitive::<Float64Type>().iter().collect()),
        other if numeric_type(other) => {
            let cast = widen_to_f64(column)?;
            Some(cast.as_primitive::<Float64Type>().iter().collect())
        }
        _ => None,
    }
}

/// Other integer and float widths, widened through `Float64` by hand (no
/// `arrow-cast` dependency for a case reloop's own files never produce).
fn widen_to_f64(column: &ArrayRef) -> Option<ArrayRef> {
    use arrow_array::types::*;
    macro_rules! widen {
        ($($t:ty),*) => {
            $(if let Some(values) = column.as_primitive_opt::<$t>() {
                let values: arrow_array::Float64Array = values.iter().map(|v| v.map(|v| v as f64)).collect();
                return Some(std::sync::Arc::new(values));
            })*
        };
    }
    widen!(Int8Type, Int16Type, Int32Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type, Float32Type);
    None
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Regression (issue 28): `compare` and `report` opened a FIFO given as
    /// a report and waited for a writer forever.
    #[cfg(unix)]
    #[test]
    fn a_report_that_is_not_a_regular_file_is_refused_without_opening_it() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("runs.parquet");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let error = super::read_batch(&fifo).unwrap_err().to_string();
        assert!(error.contains("runs.parquet") && error.contains("not a regular file"), "{error}");
        let error = super::read_batch(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }
}
