"""`reloop.strategy`, the helper for plug-in strategies (docs/strategies.md),
speaking the protocol over in-memory pipes: the hello, the transcript kept
across plans from the messages each one adds, the edit written back, and a
refusal of another protocol version.

    pytest python/tests
"""

import io
import json

import pytest

from reloop.strategy import Strategy, mask, run


class MaskAllButLast(Strategy):
    name = "all-but-last"

    def __init__(self):
        self.seen = []

    def plan(self, context):
        self.seen.append((context.step, [m.id for m in context.transcript], context.settings))
        old = context.live_tool_results()[:-1]
        return mask([(m.id, f"[{m.tool_name}: {m.lines} lines]") for m in old]) if old else None


def message(id, role, **fields):
    return {"id": id, "role": role, "text": fields.pop("text", ""), "tokens": 5, **fields}


def tool(id):
    return message(id, "tool", tool_name="read_file", is_error=False, lines=3)


def plan(step, messages, view):
    line = {"type": "plan", "step": step, "reactive": False, "window": 1000, "estimated_tokens": 100, "max_output_tokens": 10}
    return json.dumps({**line, "messages": messages, "view": view})


def test_the_helper_greets_keeps_the_transcript_and_answers_each_plan():
    hello = json.dumps({"type": "hello", "protocol": 1, "settings": {"keep": 1}, "strategies": {}})
    first = plan(0, [message(0, "user", text="task"), tool(1)], [{"id": 0, "tokens": 5}, {"id": 1, "tokens": 5}])
    second = plan(1, [tool(2)], [{"id": 0, "tokens": 5}, {"id": 1, "tokens": 5}, {"id": 2, "tokens": 5}])
    stdout = io.StringIO()
    strategy = MaskAllButLast()
    run(strategy, io.StringIO("\n".join([hello, first, second]) + "\n"), stdout)
    lines = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert lines[0] == {"type": "hello", "protocol": 1, "name": "all-but-last"}
    assert lines[1] == {"type": "edit", "edit": None}
    assert lines[2] == {"type": "edit", "edit": {"kind": "mask", "results": [{"id": 1, "placeholder": "[read_file: 3 lines]"}]}}
    assert strategy.seen == [(0, [0, 1], {"keep": 1}), (1, [0, 1, 2], {"keep": 1})]


def test_another_protocol_version_is_refused_before_any_answer():
    stdout = io.StringIO()
    with pytest.raises(SystemExit, match="reloop speaks protocol 2"):
        run(MaskAllButLast(), io.StringIO(json.dumps({"type": "hello", "protocol": 2}) + "\n"), stdout)
    assert stdout.getvalue() == ""
