"""Checks `reloop import --agent` on real sessions against the real CLIs
(issue 42): usage `check_agent_import.py RELOOP MIN_SERVED SESSION...`.

Each session (a Codex rollout, a Claude Code transcript, a pi session, a
Gemini CLI recording) is
imported with `--agent`, and the black-box scenarios written (`NAME-AGENT.yaml`,
and `NAME-turn-N-AGENT.yaml` for each later user turn, `agent.tools: replay`)
are run with the agent on PATH. The session's shell
calls are their recordings' `tool_side:` entries; one is served when a
`tool_side_command` event of its turn's run names it as its `entry`.
At least MIN_SERVED (a fraction) of each session's calls must be served,
and no command may have run for real (`replay`). Prints the counts per
session and each miss: the recorded commands never asked for, and the
commands the agent's shell got that the recording lacks."""

import json
import pathlib
import subprocess
import sys
import tempfile

import pyarrow.parquet as pq
import yaml

reloop, min_served, rollouts = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
assert rollouts, "name at least one rollout"

with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    for rollout in rollouts:
        out = tmp / pathlib.Path(rollout).stem
        done = subprocess.run([reloop, "import", rollout, "--agent", "--out", str(out)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (rollout, done.stdout[-2000:], done.stderr[-2000:])
        scenarios = sorted(p for p in out.glob("*.yaml") if not p.name.endswith(".recording.yaml") and "agent" in yaml.safe_load(p.read_text()))
        assert scenarios, (rollout, sorted(p.name for p in out.iterdir()))
        recorded_total = served_total = 0
        for scenario in scenarios:
            recording = yaml.safe_load((out / scenario.name.replace(".yaml", ".recording.yaml")).read_text())
            recorded = recording.get("tool_side", [])
            report = out / f"report-{scenario.stem}"
            run = subprocess.run([reloop, "run", str(scenario), "--out", str(report)], capture_output=True, text=True, timeout=1800)
            assert run.returncode in (0, 1), (scenario.name, run.returncode, run.stdout[-3000:], run.stderr[-3000:])
            row = pq.read_table(report / "runs.parquet").to_pylist()[0]
            events = [json.loads(e["payload"]) for e in pq.read_table(report / "events.parquet").to_pylist() if e["kind"] == "tool_side_command"]
            model = [e for e in events if not e.get("passthrough")]
            assert not any(e["ran"] for e in model), f"{scenario.name}: a command ran for real under replay: {[e['command'] for e in model if e['ran']]}"
            served = {e["entry"] for e in model if e["entry"] is not None}
            lacking = [e["command"] for e in model if e["entry"] is None]
            never = [c["command"] for i, c in enumerate(recorded) if i not in served]
            recorded_total += len(recorded)
            served_total += len(served)
            print(
                f"  {scenario.stem}: {len(recorded)} shell calls recorded, {len(served)} served, {len(never)} missed; "
                f"run outcome {row['outcome']}, passed {row['passed']}"
            )
            for command in never:
                print(f"    never asked for: {command[:160]!r}")
            for command in lacking:
                print(f"    lacking from the recording: {command[:160]!r}")
            if row["error"]:
                print(f"    run error: {row['error'][:400]}")
        assert recorded_total, f"{rollout}: the import put no shell command in tool_side"
        share = served_total / recorded_total
        print(f"  {pathlib.Path(rollout).name}: {recorded_total} shell calls, {served_total} served ({share:.0%}), {recorded_total - served_total} missed")
        assert share >= min_served, f"{rollout}: {served_total} of {recorded_total} shell calls served, under {min_served:.0%}"
print(f"agent import: {len(rollouts)} real sessions replayed against their real agents, each with at least {min_served:.0%} of its shell calls served")
