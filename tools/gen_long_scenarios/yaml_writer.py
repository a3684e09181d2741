"""YAML emission: a small subset, enough for scenarios and recordings."""

from __future__ import annotations

import json



def q(value: str) -> str:
    """A double-quoted YAML scalar (JSON escapes are valid YAML escapes)."""
    return json.dumps(value, ensure_ascii=False)


def flow(value) -> str:
    """A JSON value written as a YAML flow node."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def clean(text: str) -> str:
    """Trailing whitespace removed from every line (block scalars would lose it)."""
    return "\n".join(line.rstrip() for line in text.split("\n"))


def block(text: str, indent: int) -> str:
    """A literal block scalar holding exactly `text`, its lines indented by `indent`."""
    text = clean(text)
    if text == "":
        return q("")
    if text.endswith("\n\n"):
        chomp = "+"
    elif text.endswith("\n"):
        chomp = ""
    else:
        chomp = "-"
    body = text[:-1] if text.endswith("\n") else text
    first = next((line for line in body.split("\n") if line.strip()), "")
    # The indentation indicator counts from the parent node: every block
    # here is indented two columns deeper than the key that holds it.
    indicator = "2" if first.startswith(" ") else ""
    pad = " " * indent
    lines = [pad + line if line else "" for line in body.split("\n")]
    return "|" + indicator + chomp + "\n" + "\n".join(lines)


def scalar(text: str, indent: int) -> str:
    """A short string inline, a long or multi-line one as a block scalar."""
    if "\n" in text or len(text) > 100:
        return block(text, indent)
    return q(text)
