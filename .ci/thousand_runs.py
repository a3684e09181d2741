"""Builds a report of at least N runs (default 1,000) from a real one, for
timing the HTML report's load in a browser: each copy of the source's runs,
steps and events gets its own variant label (`default~7`), so every run is
its own row and its own viewer data.

usage: python .ci/thousand_runs.py SOURCE_DIR OUT_DIR [N]
"""
import math
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    wanted = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000
    runs = pq.read_table(source / "runs.parquet")
    copies = math.ceil(wanted / runs.num_rows)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("runs", "steps", "events"):
        table = pq.read_table(source / f"{name}.parquet")
        variant = table.schema.get_field_index("variant")
        parts = []
        for copy in range(copies):
            labels = pa.array([f"{v}~{copy}" for v in table.column(variant).to_pylist()], pa.string())
            parts.append(table.set_column(variant, table.schema.field(variant), labels))
        pq.write_table(pa.concat_tables(parts), out / f"{name}.parquet")
    print(f"{out}: {copies * runs.num_rows} runs ({copies} copies of {runs.num_rows})")


if __name__ == "__main__":
    main()
