//! Reading report tables back as rows of text cells, so tests can compare
//! reports across runs, layouts and row orders without knowing the schema.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// One row: column name to the cell as text (`null` for a null cell).
pub type Row = BTreeMap<String, String>;

/// Every row of a table. `path` is a Parquet file or a folder of Parquet
/// parts (any `*.parquet` below it), so either report layout reads.
pub fn read_rows(path: &Path) -> Vec<Row> {
    parquet_files(path).iter().flat_map(|file| read_file(file)).collect()
}

fn parquet_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_owned()];
    }
    let entries = std::fs::read_dir(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("readable folder").path())
        .flat_map(|p| if p.is_dir() { parquet_files(&p) } else { vec![p] })
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    files
}

fn read_file(path: &Path) -> Vec<Row> {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).and_then(|builder| builder.build()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    reader.flat_map(|batch| rows_of(&batch.unwrap_or_else(|e| panic!("{}: {e}", path.display())))).collect()
}

fn rows_of(batch: &RecordBatch) -> Vec<Row> {
    let schema = batch.schema();
    (0..batch.num_rows())
        .map(|row| schema.fields().iter().zip(batch.columns()).map(|(field, column)| (field.name().clone(), cell(column.as_ref(), row))).collect())
        .collect()
}

/// A cell as text; floats keep every bit (`{:?}` round-trips).
fn cell(column: &dyn Array, row: usize) -> String {
    if column.is_null(row) {
        return "null".to_owned();
    }
    match column.data_type() {
        DataType::Utf8 => column.as_string::<i32>().value(row).to_owned(),
        DataType::Boolean => column.as_boolean().value(row).to_string(),
        DataType::Int64 => column.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Float64 => format!("{:?}", column.as_primitive::<Float64Type>().value(row)),
        DataType::List(_) => {
            let items = column.as_list::<i32>().value(row);
            let cells: Vec<String> = (0..items.len()).map(|i| cell(items.as_ref(), i)).collect();
            format!("[{}]", cells.join(", "))
        }
        other => panic!("a report column of type {other} has no reader in the tests yet"),
    }
}
