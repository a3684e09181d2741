"""Context strategies for reloop written in Python: a class with one method.

reloop runs a plug-in strategy as a separate process and speaks JSON lines
with it over stdin and stdout (docs/strategies.md; the schema of every line
is docs/schema/strategy.schema.json). This module speaks that protocol, so
that a strategy is only its decision::

    from reloop.strategy import Strategy, mask, run

    class KeepFive(Strategy):
        name = "keep-five"

        def plan(self, context):
            old = context.live_tool_results()[:-5]
            return mask([(m.id, "[omitted]") for m in old]) if old else None

    if __name__ == "__main__":
        run(KeepFive())

`plan` is called before each model call, again after each edit it returns
until it returns None, and once with `context.reactive` set after the
provider rejected the context as too long. Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

PROTOCOL_VERSION = 1
"""The protocol version this helper speaks; reloop's hello must name it."""

Edit = Dict[str, Any]
"""An edit, as `mask`, `collapse`, `memory` and `summarize` build it."""


class Message:
    """A transcript message. `id` is its index in the transcript, which
    `mask` and `keep_users` name; `tokens` is reloop's estimate of it shown
    whole. Tool results have `tool_name`, `is_error` and `lines` (the line
    count as reloop's `masking` counts it); assistant messages `tool_calls`
    (each a dict with `name` and `arguments`)."""

    __slots__ = ("id", "role", "text", "tool_name", "is_error", "lines", "tool_calls", "tokens")

    def __init__(self, line: Dict[str, Any]):
        self.id: int = line["id"]
        self.role: str = line["role"]
        self.text: str = line["text"]
        self.tool_name: Optional[str] = line.get("tool_name")
        self.is_error: Optional[bool] = line.get("is_error")
        self.lines: Optional[int] = line.get("lines")
        self.tool_calls: List[Dict[str, str]] = line.get("tool_calls", [])
        self.tokens: int = line["tokens"]


class ViewItem:
    """What the provider would be sent at one position of the view: the
    transcript message `id` (a tool result maybe `masked`, shown as its
    placeholder) or a `note` standing for messages no longer shown."""

    __slots__ = ("id", "masked", "note", "tokens")

    def __init__(self, line: Dict[str, Any]):
        self.id: Optional[int] = line.get("id")
        self.masked: bool = line.get("masked", False)
        self.note: Optional[str] = line.get("note")
        self.tokens: int = line["tokens"]


class Context:
    """What a strategy sees when it plans."""

    def __init__(self, line: Dict[str, Any], transcript: List[Message], settings: Any, strategies: Dict[str, Any]):
        self.step: int = line["step"]
        self.reactive: bool = line["reactive"]
        self.window: int = line["window"]
        self.estimated_tokens: int = line["estimated_tokens"]
        self.max_output_tokens: int = line["max_output_tokens"]
        self.transcript = transcript
        self.view = [ViewItem(item) for item in line["view"]]
        self.settings = settings
        """`loop.strategy.settings` as the scenario wrote it (None when absent)."""
        self.strategies = strategies
        """`loop.strategies`: the built-in strategies' constants."""

    def live_tool_results(self) -> List[Message]:
        """The tool results the view shows whole, oldest first."""
        return [
            self.transcript[item.id]
            for item in self.view
            if item.id is not None and not item.masked and self.transcript[item.id].role == "tool"
        ]


class Strategy:
    """A strategy: override `plan`. `name` is reported with its compactions
    (and names its variant in a sweep); by default the script's file stem."""

    name: Optional[str] = None

    def plan(self, context: Context) -> Optional[Edit]:
        """The next edit, or None when the view is ready."""
        raise NotImplementedError


def mask(results: Sequence[Tuple[int, str]]) -> Edit:
    """Show these tool results (by id) as their placeholders."""
    return {"kind": "mask", "results": [{"id": id, "placeholder": text} for id, text in results]}


def collapse(rounds: Sequence[Tuple[int, int]]) -> Edit:
    """Replace each view range [start, end) (a tool round) by a one-line note per call."""
    return {"kind": "collapse", "rounds": [[start, end] for start, end in rounds]}


def memory(start: int, end: int) -> Edit:
    """Replace the view range [start, end) by reloop's mechanical session memory."""
    return {"kind": "memory", "range": [start, end]}


def summarize(start: int, end: int, keep_users: Sequence[int] = ()) -> Edit:
    """Replace the view range [start, end) by a summary the model writes,
    keeping the user messages `keep_users` (ids, within the range) whole."""
    return {"kind": "summarize", "range": [start, end], "keep_users": list(keep_users)}


def run(strategy: Strategy, stdin=None, stdout=None) -> None:
    """Serves `strategy` until reloop closes stdin."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    hello = json.loads(stdin.readline() or "null")
    if not isinstance(hello, dict) or hello.get("type") != "hello":
        sys.exit(f"reloop.strategy: expected reloop's hello, got {hello!r}")
    if hello.get("protocol") != PROTOCOL_VERSION:
        sys.exit(f"reloop.strategy: reloop speaks protocol {hello.get('protocol')}, this helper {PROTOCOL_VERSION}")
    settings, strategies = hello.get("settings"), hello.get("strategies", {})
    name = strategy.name or os.path.splitext(os.path.basename(sys.argv[0]))[0]
    _write(stdout, {"type": "hello", "protocol": PROTOCOL_VERSION, "name": name})
    transcript: List[Message] = []
    for raw in stdin:
        line = json.loads(raw)
        transcript.extend(Message(message) for message in line["messages"])
        _write(stdout, {"type": "edit", "edit": strategy.plan(Context(line, transcript, settings, strategies))})


def _write(stdout, line: Dict[str, Any]) -> None:
    stdout.write(json.dumps(line) + "\n")
    stdout.flush()
