"""The README's examples, run as written: every ```sh block, in order, in a
scratch copy of the repository (so the commands' outputs do not land in the
checkout), with `reloop` from PATH; then every ```sql block with DuckDB in
the same folder. A ```console block shows the output of the ```sh block
before it: each of its lines must appear in that output. The files shown
for "test your own agent" must be the bundled ones (examples/my-agent/),
byte for byte, so the page can be copied from.

The first block is not run here: its three commands are CI's own steps
(the bundled suite in release, the tests, the wheel's install), which
.ci/run runs as they are written.

    python .ci/check_readme.py [README.md]     # reloop and python3 (with openai, duckdb) on PATH
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
EXAMPLE = REPO / "examples" / "my-agent"


def blocks(readme: str) -> list[tuple[str, str]]:
    return [(match.group(1), match.group(2)) for match in BLOCK.finditer(readme)]


def scratch_copy(scratch: Path) -> None:
    """The repository's files (tracked and new, not ignored) copied into `scratch`."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (scratch / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, scratch / name)


def run_shell(block: str, cwd: Path) -> str:
    started = time.monotonic()
    print(f"$ {block.strip()}", flush=True)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=cwd, capture_output=True, text=True, timeout=900)
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        sys.exit(f"README block failed (exit {done.returncode}):\n{block}\n--- stderr ---\n{done.stderr}")
    print(f"  ({time.monotonic() - started:.1f} s)")
    return done.stdout


def check_console(expected: str, output: str) -> None:
    actual = {line.rstrip() for line in output.splitlines()}
    missing = [line.rstrip() for line in expected.splitlines() if line.strip() and line.rstrip() not in actual]
    if missing:
        sys.exit("README console block does not match the output; missing lines:\n" + "\n".join(missing) + "\n--- output ---\n" + output)


def check_examples(readme_blocks: list[tuple[str, str]]) -> None:
    shown = {body for _, body in readme_blocks}
    for file in sorted(EXAMPLE.iterdir()):
        if file.read_text() not in shown:
            sys.exit(f"README does not show {file.relative_to(REPO)} as it is bundled")
    print(f"the README shows {', '.join(sorted(f.name for f in EXAMPLE.iterdir()))} as bundled")


def main(readme_path: Path) -> None:
    readme_blocks = blocks(readme_path.read_text())
    check_examples(readme_blocks)
    sh_count = sql_count = 0
    with tempfile.TemporaryDirectory(prefix="reloop-readme-") as name:
        scratch = Path(name)
        scratch_copy(scratch)
        output = ""
        sql = []
        for index, (kind, body) in enumerate(readme_blocks):
            if kind == "sh" and index == 0:
                continue
            if kind == "sh":
                output = run_shell(body, scratch)
                sh_count += 1
            elif kind == "console":
                check_console(body, output)
            elif kind == "sql":
                sql.append(body)
        import duckdb

        connection = duckdb.connect()
        connection.execute(f"set file_search_path = '{scratch}'")
        for query in sql:
            print(connection.sql(query))
            sql_count += 1
    if sh_count == 0:
        sys.exit("README: no shell block found to run")
    print(f"README: {sh_count} shell blocks and {sql_count} SQL blocks ran, every console block matched")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "README.md")
