"""Opens reloop's Parquet reports with pyarrow, DuckDB and Polars and checks
that they agree with each other and with the suite: one runs row per
scenario file, every step and event row belonging to a run, the schema and
reloop versions in the file metadata."""

import pathlib
import sys

import duckdb
import polars as pl
import pyarrow.parquet as pq

reports = pathlib.Path(sys.argv[1])
scenarios = sorted(pathlib.Path(sys.argv[2]).glob("*.yaml"))

runs = pq.read_table(reports / "runs.parquet")
ran = {pathlib.Path(f).name for f in runs.column("scenario_file").to_pylist()}
missing = {s.name for s in scenarios} - ran
assert not missing, f"scenario files with no runs row: {sorted(missing)}"
assert runs.num_rows >= len(scenarios), f"{runs.num_rows} runs rows for {len(scenarios)} scenario files"
for table in ("runs", "steps", "events"):
    metadata = pq.read_metadata(reports / f"{table}.parquet").metadata
    assert metadata[b"reloop.schema_version"] == b"1", metadata
    assert b"reloop.version" in metadata, metadata

con = duckdb.connect()
orphans = con.execute(
    f"""select count(*) from '{reports}/steps.parquet' s
        anti join '{reports}/runs.parquet' r using (scenario, variant)"""
).fetchone()[0]
assert orphans == 0, f"{orphans} steps rows without a run"
duck_steps = con.execute(
    f"select scenario, count(*) as n from '{reports}/steps.parquet' group by 1 order by 1"
).fetchall()
polars_steps = (
    pl.read_parquet(reports / "steps.parquet").group_by("scenario").len().sort("scenario").rows()
)
assert duck_steps == polars_steps, (duck_steps, polars_steps)

summary = con.execute(
    f"""select count(*) as runs, sum(passed::int) as passed, sum(steps_used) as steps,
               sum(input_tokens_total) as input_tokens, sum(tokens_saved_total) as saved
        from '{reports}/runs.parquet'"""
).fetchone()
print("pyarrow, DuckDB and Polars agree: runs=%d passed=%d steps=%d input_tokens=%d saved=%d" % summary)
