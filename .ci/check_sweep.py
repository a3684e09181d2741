"""Checks a strategy sweep: two runs of it give the same rows except
wall-clock time, and the strategies really differ in what they save and how
they compact."""

import sys

import duckdb

first, second = sys.argv[1], sys.argv[2]
con = duckdb.connect()

for table in ("runs", "steps", "events"):
    columns = [c[0] for c in con.execute(f"describe select * from '{first}/{table}.parquet'").fetchall()]
    kept = ", ".join(f'"{c}"' for c in columns if c != "wall_ms")
    differing = con.execute(
        f"""select count(*) from (
              (select {kept} from '{first}/{table}.parquet' except all select {kept} from '{second}/{table}.parquet')
              union all
              (select {kept} from '{second}/{table}.parquet' except all select {kept} from '{first}/{table}.parquet'))"""
    ).fetchone()[0]
    assert differing == 0, f"{table}: {differing} rows differ between two sweeps"

per_variant = con.execute(
    f"""select variant,
               round(1 - sum(input_tokens_total) / sum(input_tokens_uncompacted_total), 3) as savings,
               sum(compactions_layer0), sum(compactions_layer3), sum(compaction_calls)
        from '{first}/runs.parquet' group by variant order by variant"""
).fetchall()
print("variant, savings, layer0, layer3, summary calls:")
for row in per_variant:
    print("  ", row)
assert len(per_variant) == 5, per_variant
assert len({row[1] for row in per_variant}) == 5, "the five strategies save different amounts"
print("sweep reproducible: runs, steps and events identical but for wall_ms")
