"""Checks the report of `reloop run scenarios/agents/` (real agents as
black boxes): every run of the agents named after the report folder
(programs: codex pi opencode claude gemini mini) ran (none skipped) and
passed, each ran at least twice, their wires were all spoken, every
doom-loop scenario's loop was detected from the server side, every
compaction scenario's agent compacted mid-task (Codex's remote path as
compaction rows, its local path and pi as their own summary turns, auxiliary
rows; pi's after the window refused a call and its retry answered),
every context-overflow scenario's last call was refused for the window,
every tool-replay scenario answered a shell command from the recording
(its details are .ci/check_tool_replay.py's), every mcp-replay scenario's
agent made an MCP call (answered from the recording, the same script says),
every fault scenario saw its retry, and the steps table holds the server's view
of each run. Runs of agents not named (not installed here) may be skipped.
Prints each agent's runs' wall time."""

import collections
import pathlib
import sys

import pyarrow.parquet as pq

reports = pathlib.Path(sys.argv[1])
agents = sys.argv[2:] or ["codex", "pi", "opencode"]
WIRES = {"codex": "openai-responses", "pi": "anthropic", "opencode": "openai-chat", "claude": "anthropic", "gemini": "gemini", "mini": "openai-chat"}
runs = pq.read_table(reports / "runs.parquet").to_pylist()
steps = pq.read_table(reports / "steps.parquet").to_pylist()

skipped = [r["scenario"] for r in runs if r["outcome"] == "skipped" and r["system_under_test"] in agents]
assert not skipped, f"agents not installed, runs skipped: {skipped}"
runs = [r for r in runs if r["outcome"] != "skipped"]
failed = [(r["scenario"], r["outcome"], r["failed_expectations"], r["error"]) for r in runs if not r["passed"]]
assert not failed, f"failed runs: {failed}"

per_agent = collections.Counter(r["system_under_test"] for r in runs)
for agent in agents:
    assert per_agent[agent] >= 2, f"{agent} ran {per_agent[agent]} times: {dict(per_agent)}"
wires = {r["wire"] for r in runs}
assert wires == {WIRES[agent] for agent in agents}, wires

for r in runs:
    assert r["input_tokens_total"] > 0 and r["steps_used"] > 0, r["scenario"]
    if "doom-loop" in r["scenario"]:
        assert r["doom_loop_detected"] and r["tool_calls"] >= 3, (r["scenario"], r["doom_loop_kind"], r["tool_calls"])
    elif "compaction" in r["scenario"]:
        purposes = [s["purpose"] for s in steps if s["scenario"] == r["scenario"]]
        # Codex's remote path compacts through /responses/compact; every other
        # agent by a summary turn of its own.
        side = "compaction" if r["scenario"] == "codex-compaction" else "auxiliary"
        assert purposes.count(side) >= 1 and purposes.count("main") >= 2, (r["scenario"], purposes)
        if "overflow" in r["scenario"]:
            results = [s["server_result"] for s in sorted(steps, key=lambda s: s["call_index"]) if s["scenario"] == r["scenario"]]
            assert "context_length_exceeded" in results and results[-1] == "ok", (r["scenario"], results)
    elif "context-overflow" in r["scenario"]:
        results = [s["server_result"] for s in sorted(steps, key=lambda s: s["call_index"]) if s["scenario"] == r["scenario"]]
        assert results[-1] == "context_length_exceeded" and "ok" in results, (r["scenario"], results)
    elif "tool-replay" in r["scenario"] or "mcp-replay" in r["scenario"]:
        assert r["tool_calls"] >= 1, (r["scenario"], r["tool_calls"])
    else:
        assert r["llm_retries"] >= 1, (r["scenario"], r["llm_retries"])
    served = [s for s in steps if s["scenario"] == r["scenario"]]
    assert len(served) == r["llm_calls"], (r["scenario"], len(served), r["llm_calls"])

print("real agents as black boxes: %d runs, all passed; per agent %s; wires %s" % (len(runs), dict(per_agent), sorted(wires)))
for agent in sorted(per_agent):
    print(f"  {agent}: {sum(r['wall_ms'] for r in runs if r['system_under_test'] == agent) / 1000:.1f} s over {per_agent[agent]} runs")
for r in sorted(runs, key=lambda r: r["scenario"]):
    print(
        f"  {r['scenario']:<29} {r['system_under_test']:<9} {r['wire']:<17} steps={r['steps_used']} calls={r['llm_calls']} "
        f"retries={r['llm_retries']} tool_calls={r['tool_calls']} doom_loop={r['doom_loop_kind'] or '-'} "
        f"input_tokens={r['input_tokens_total']} cache_read={r['cache_read_tokens']} wall_ms={r['wall_ms']}"
    )
