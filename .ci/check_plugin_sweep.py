"""Checks that a plug-in strategy is indistinguishable from the built-in it
re-implements: in a sweep of `masking` and examples/strategies/masking.py
(variant `masking-py`), every runs, steps and events row of the plug-in
equals the built-in's, but for the variant, the strategy's name (also where
a text quotes it: a cache break's cause, an event's payload) and wall-clock
time. Usage: check_plugin_sweep.py REPORT_DIR"""

import sys

import pyarrow.parquet as pq

report = sys.argv[1]
BUILTIN, PLUGIN = "masking", "masking-py"
IGNORED = {"variant", "strategy", "wall_ms"}


def comparable(rows, variant):
    """The variant's rows, ignored columns left out, the plug-in's name read
    as the built-in's, in a stable order."""
    kept = []
    for row in rows:
        if row["variant"] != variant:
            continue
        cells = tuple(
            (column, value.replace(PLUGIN, BUILTIN) if isinstance(value, str) else value)
            for column, value in row.items()
            if column not in IGNORED
        )
        kept.append(cells)
    return sorted(kept, key=repr)


for table in ("runs", "steps", "events"):
    rows = pq.read_table(f"{report}/{table}.parquet").to_pylist()
    builtin, plugin = comparable(rows, BUILTIN), comparable(rows, PLUGIN)
    assert builtin, f"{table}: no rows of {BUILTIN}"
    assert len(builtin) == len(plugin), f"{table}: {len(builtin)} rows of {BUILTIN}, {len(plugin)} of {PLUGIN}"
    differing = [(a, b) for a, b in zip(builtin, plugin) if a != b]
    if differing:
        a, b = differing[0]
        diff = [(column, x, y) for (column, x), (_, y) in zip(a, b) if x != y]
        sys.exit(f"{table}: {len(differing)} of {len(builtin)} rows differ; first: {diff[:5]}")
    print(f"{table}: {len(builtin)} rows of each variant, all equal")

runs = pq.read_table(f"{report}/runs.parquet").to_pylist()
print(f"runs compared: {sum(r['variant'] == BUILTIN for r in runs)} scenarios; "
      f"layer-0 compactions of each: {sum(r['compactions_layer0'] for r in runs if r['variant'] == BUILTIN)}")
