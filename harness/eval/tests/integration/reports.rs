//! The Parquet reports read back with the parquet crate's own reader (the
//! CI script checks pyarrow and DuckDB too), with the documented columns.

use std::fs::File;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use reloop_eval::report::write_reports;
use reloop_eval::{Scenario, run_scenario};

fn read(path: &std::path::Path) -> (arrow_array::RecordBatch, std::collections::HashMap<String, String>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let metadata: std::collections::HashMap<String, String> =
        builder.metadata().file_metadata().key_value_metadata().into_iter().flatten().filter_map(|kv| kv.value.clone().map(|v| (kv.key.clone(), v))).collect();
    let mut batches: Vec<_> = builder.build().unwrap().map(Result::unwrap).collect();
    assert_eq!(batches.len(), 1, "small reports fit one batch");
    (batches.remove(0), metadata)
}

#[test]
fn reports_read_back_with_schema_and_versions() {
    let scenario = Scenario::load(&crate::bundled("read-and-edit")).unwrap();
    let report = run_scenario(&scenario);
    let dir = tempfile::tempdir().unwrap();
    write_reports(dir.path(), std::slice::from_ref(&report)).unwrap();

    let (runs, metadata) = read(&dir.path().join("runs.parquet"));
    assert_eq!(runs.num_rows(), 1);
    assert_eq!(metadata.get("reloop.schema_version").map(String::as_str), Some("1"));
    assert_eq!(metadata.get("reloop.version").map(String::as_str), Some(env!("CARGO_PKG_VERSION")));
    let columns: Vec<String> = runs.schema().fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect();
    insta::assert_snapshot!("runs_schema", columns.join("\n"));

    let (steps, _) = read(&dir.path().join("steps.parquet"));
    assert_eq!(steps.num_rows(), report.steps.len());
    assert_eq!(steps.num_rows(), 5);
    let (events, _) = read(&dir.path().join("events.parquet"));
    assert_eq!(events.num_rows(), report.events.len());
}
