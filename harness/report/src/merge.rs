//! Joining shard reports into one: each table's rows concatenated, runs in
//! scenario-file order (the order of a single run over one directory),
//! steps and events following their run. A run found in two shards is an
//! error, as are shards whose columns differ.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use arrow_array::{RecordBatch, UInt32Array};

use crate::error::ReportError;
use crate::table::Table;

/// The tables of a report directory, in the order they are written.
pub const TABLES: [&str; 3] = ["runs", "steps", "events"];

/// The merged tables, by name, ready to write as `NAME.parquet`.
pub fn merge(shards: &[PathBuf]) -> Result<[(&'static str, RecordBatch); 3], ReportError> {
    if shards.is_empty() {
        return Err(ReportError::Merge("no shard directories given".to_owned()));
    }
    let runs = concat(shards, "runs")?;
    let scenario_file = runs.text("scenario_file")?;
    let keys = keys_of(&runs)?;
    let mut seen: HashSet<&(String, String)> = HashSet::new();
    for key in &keys {
        if !seen.insert(key) {
            return Err(ReportError::Merge(format!("run `{}` (variant `{}`) appears in more than one shard", key.0, key.1)));
        }
    }
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| scenario_file[a].cmp(&scenario_file[b]));
    let rank: HashMap<&(String, String), usize> = order.iter().enumerate().map(|(rank, &row)| (&keys[row], rank)).collect();
    let follow_runs = |name: &'static str| -> Result<(&'static str, RecordBatch), ReportError> {
        let table = concat(shards, name)?;
        let table_keys = keys_of(&table)?;
        let mut rows: Vec<usize> = (0..table.len()).collect();
        rows.sort_by_key(|&row| rank.get(&table_keys[row]).copied().unwrap_or(usize::MAX));
        Ok((name, take(&table, &rows)?))
    };
    Ok([("runs", take(&runs, &order)?), follow_runs(TABLES[1])?, follow_runs(TABLES[2])?])
}

fn keys_of(table: &Table) -> Result<Vec<(String, String)>, ReportError> {
    Ok(table.text("scenario")?.into_iter().zip(table.text("variant")?).collect())
}

/// Table `name` of every shard, one after the other.
fn concat(shards: &[PathBuf], name: &str) -> Result<Table, ReportError> {
    let tables = shards.iter().map(|shard| Table::load(&shard_dir(shard)?, name)).collect::<Result<Vec<_>, _>>()?;
    let schema = tables[0].batch.schema();
    for table in &tables[1..] {
        if table.batch.schema().fields() != schema.fields() {
            return Err(ReportError::Merge(format!(
                "{} has other columns than {}: shards must come from the same reloop version",
                table.path.display(),
                tables[0].path.display()
            )));
        }
    }
    let batches: Vec<RecordBatch> = tables.iter().map(|t| t.batch.clone()).collect();
    let batch = arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| ReportError::Merge(format!("cannot concatenate `{name}`: {e}")))?;
    Ok(Table { path: PathBuf::from(format!("{name}.parquet")), batch })
}

fn shard_dir(shard: &Path) -> Result<PathBuf, ReportError> {
    if shard.is_dir() { Ok(shard.to_owned()) } else { Err(ReportError::Merge(format!("{}: not a report directory", shard.display()))) }
}

fn take(table: &Table, rows: &[usize]) -> Result<RecordBatch, ReportError> {
    let indices = UInt32Array::from_iter_values(rows.iter().map(|&row| u32::try_from(row).unwrap_or(u32::MAX)));
    arrow_select::take::take_record_batch(&table.batch, &indices).map_err(|e| ReportError::Merge(format!("cannot reorder rows: {e}")))
}
