"""Checks the real agents' `agent.tools: replay` runs (issue 42): usage
`check_tool_replay.py RELOOP REPORT SCENARIOS PROGRAM...`.

1. In REPORT (`reloop run scenarios/agents/`), every `*-tool-replay` run of
   the agents named (programs: codex pi opencode claude gemini mini) passed
   (its expectations hold that the recorded output reached the agent's next
   request), each model command was answered from the recording (a
   `tool_side_command` event with an entry, not run), whatever ran for real
   was a passthrough line of the agent's runtime, and the command's canary
   file outside the workspace does not exist.
2. Each such scenario again, the model asking for a changed command (the
   recording's `tool_side:` as it was): every run fails as a `tool_side`
   divergence naming the changed command, and its canary is not made either.
3. Every `*-mcp-replay` run of those agents (the agents with such a
   scenario) passed, each request of its MCP client was answered from the
   recording's `mcp:` (a `tool_side_mcp` event with an entry, neither
   diverged nor live), a `tools/call` among them, and the server program
   its scenario names does not exist: nothing but the recording answered.

Prints each agent's shell and MCP events."""

import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pyarrow.parquet as pq
import yaml

reloop, report, scenarios = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
programs = sys.argv[4:]
PRESETS = {"codex": "codex", "pi": "pi", "opencode": "opencode", "claude": "claude-code", "gemini": "gemini-cli", "mini": "mini-swe-agent"}
CANARY = re.compile(r"touch (/tmp/reloop-canary-[a-z-]+-tool-replay)")
wanted = {f"{PRESETS[program]}-tool-replay" for program in programs}


def recording_of(name):
    """The recording file the scenario NAME names (relative to it)."""
    scenario = (scenarios / f"{name}.yaml").read_text()
    return scenarios / re.search(r"^recording: (\S+)$", scenario, re.M).group(1)


def shell_events(report_dir, kind="tool_side_command"):
    events = pq.read_table(report_dir / "events.parquet").to_pylist()
    found = {}
    for event in events:
        if event["kind"] == kind:
            found.setdefault(event["scenario"], []).append(json.loads(event["payload"]))
    return found


mcp_wanted = {f"{PRESETS[p]}-mcp-replay" for p in programs if (scenarios / f"{PRESETS[p]}-mcp-replay.yaml").exists()}
mcp_runs = {r["scenario"]: r for r in pq.read_table(report / "runs.parquet").to_pylist() if r["scenario"] in mcp_wanted}
assert set(mcp_runs) == mcp_wanted, f"mcp-replay runs missing from {report}: {sorted(mcp_wanted - set(mcp_runs))}"
mcp_events = shell_events(report, "tool_side_mcp")
for name, run in sorted(mcp_runs.items()):
    assert run["outcome"] == "final_answer" and run["passed"], (name, run["outcome"], run["failed_expectations"], run["error"])
    requests = mcp_events.get(name, [])
    assert requests and all(e["entry"] is not None and not e["diverged"] and not e.get("live") for e in requests), (name, requests)
    assert any(e["method"] == "tools/call" for e in requests), (name, requests)
    servers = yaml.safe_load((scenarios / f"{name}.yaml").read_text())["agent"]["mcp"]
    for server in servers:
        assert shutil.which(server["command"]) is None, f"{name}: the server program {server['command']} exists, so replay proves nothing"
    print(f"  {name}: {len(requests)} MCP request(s) answered from the recording: {[e['method'] for e in requests]}")


runs = {r["scenario"]: r for r in pq.read_table(report / "runs.parquet").to_pylist() if r["scenario"] in wanted}
assert set(runs) == wanted, f"tool-replay runs missing from {report}: {sorted(wanted - set(runs))}"
shells = shell_events(report)
for name, run in sorted(runs.items()):
    assert run["outcome"] == "final_answer" and run["passed"], (name, run["outcome"], run["failed_expectations"], run["error"])
    events = shells.get(name, [])
    model = [e for e in events if not e.get("passthrough")]
    assert model and all(e["entry"] is not None and not e["ran"] and not e["diverged"] for e in model), (name, events)
    passthrough = [e for e in events if e.get("passthrough")]
    assert all(e["ran"] for e in passthrough), (name, passthrough)
    recording = recording_of(name).read_text()
    canary = pathlib.Path(CANARY.search(recording).group(1))
    assert not canary.exists(), f"{name}: {canary} exists: a replayed command ran"
    print(f"  {name}: {len(model)} command(s) answered from the recording, {len(passthrough)} passthrough line(s) run; invoked as {sorted({e['invoked'] for e in events})}")

# The same scenarios, the model asking for a changed command.
with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    (tmp / "scenarios/agents").mkdir(parents=True)
    (tmp / "recordings/agents").mkdir(parents=True)  # the scenarios name ../../recordings/agents/
    changed = {}
    for name in sorted(wanted):
        shutil.copy(scenarios / f"{name}.yaml", tmp / "scenarios/agents")
        text = recording_of(name).read_text()
        asked = CANARY.search(text).group(0) + " && echo built"
        changed[name] = asked + " -j8"
        exchanges, tool_side = text.split("\ntool_side:\n")
        (tmp / "recordings/agents" / f"{name}.yaml").write_text(exchanges.replace(asked, changed[name], 1) + "\ntool_side:\n" + tool_side)
    out = tmp / "out"
    done = subprocess.run([reloop, "run", str(tmp / "scenarios/agents"), "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, (done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    for run in pq.read_table(out / "runs.parquet").to_pylist():
        name = run["scenario"]
        assert run["outcome"] == "divergence", (name, run["outcome"], run["error"])
        assert run["error"].startswith(f"tool_side divergence: the agent's shell ran `{changed[name]}`"), (name, run["error"][:400])
        canary = pathlib.Path(CANARY.search(changed[name]).group(1))
        assert not canary.exists(), f"{name}: {canary} exists: a changed command ran"
    print(f"tool replay: {len(runs)} agents answered from the recording; a changed command is a tool_side divergence for each, never run")
