"""The GitHub Action's shell steps (action/*.sh), run here as the runner
would run them: the install step with the local wheel into a fresh venv,
the run step on the bundled suite against reports/baseline, and the comment
step twice with a fake `gh` on PATH (.ci/fake_gh). Checked: `reloop` comes
from the venv the install step put on GITHUB_PATH, the outputs name
files that exist, exactly one comment is posted and then updated in place,
and its body is the marker line and `reloop compare BASE NEW --markdown`'s
output, byte for byte.

    python .ci/check_action.py WHEEL
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MARKER = "<!-- reloop-action -->\n"


def step(script: str, env: dict) -> None:
    print(f"-- action/{script}", flush=True)
    subprocess.run(["bash", str(REPO / "action" / script)], env=env, cwd=REPO, check=True, timeout=900)


def outputs(path: Path) -> dict:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def main(wheel: str) -> None:
    with tempfile.TemporaryDirectory(prefix="reloop-action-") as work:
        check(wheel, Path(work))


def check(wheel: str, work: Path) -> None:
    github_path, github_output, gh_state = work / "path", work / "output", work / "gh.json"
    for file in (github_path, github_output):
        file.touch()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(work)),
        "RUNNER_TEMP": str(work),
        "GITHUB_PATH": str(github_path),
        "GITHUB_OUTPUT": str(github_output),
        "GITHUB_REPOSITORY": "example/reloop",
    }
    step("install.sh", {**env, "INPUT_PACKAGE": wheel})
    venv_bin = github_path.read_text().split()[0]
    assert venv_bin == str(work / "reloop-venv" / "bin"), venv_bin
    # The later steps see the runner's PATH with what GITHUB_PATH added.
    env["PATH"] = f"{venv_bin}:{REPO / '.ci' / 'fake_gh'}:{env['PATH']}"
    out = work / "reports" / "latest"
    step("run.sh", {**env, "INPUT_SCENARIOS": "scenarios/", "INPUT_BASELINE": "reports/baseline", "INPUT_OUT": str(out)})
    result = outputs(github_output)
    print(f"outputs: {result}")
    assert result["exit-code"] == "0", f"the bundled suite holds the baseline's gates: {result}"
    for key in ("report-dir", "junit", "markdown"):
        assert Path(result[key]).exists(), f"{key} names a file: {result[key]}"
    assert (out / "runs.parquet").exists()

    comment_env = {**env, "FAKE_GH_STATE": str(gh_state), "PR_NUMBER": "7", "MARKDOWN": result["markdown"], "GH_TOKEN": "unused"}
    step("comment.sh", comment_env)
    step("comment.sh", comment_env)
    state = json.loads(gh_state.read_text())
    assert len(state["comments"]) == 1, f"one comment, updated in place: {state['comments']}"
    methods = [call[call.index("--method") + 1] if "--method" in call else "GET" for call in state["calls"]]
    assert methods == ["GET", "POST", "GET", "PATCH"], methods

    expected = work / "compare.md"
    subprocess.run([f"{venv_bin}/reloop", "compare", "reports/baseline", str(out), "--markdown", str(expected)], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    body = state["comments"][0]["body"]
    assert body == MARKER + expected.read_text(), f"the comment is the compare --markdown output:\n{body}"
    print(f"the action's steps ran: one comment on #7 ({len(body.splitlines())} lines), the `compare --markdown` output")


if __name__ == "__main__":
    main(sys.argv[1])
