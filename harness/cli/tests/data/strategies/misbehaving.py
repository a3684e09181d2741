"""A plug-in strategy that fails on purpose, as `loop.strategy.settings.fault`
says, at the step `settings.at_step` (0 by default); until then it answers
no edit. Written against the raw protocol (docs/strategies.md), without the
`reloop.strategy` helper, so each failure is exactly what reaches reloop.

Faults: crash (an exception: a traceback on stderr, exit 1), garbage (a line
that is not JSON), wrong_shape (an edit of an unknown kind), wrong_version
(a hello speaking protocol 2), silent (no answer: it sleeps), missing (masks
message 999, which does not exist)."""

import json
import sys
import time

hello = json.loads(sys.stdin.readline())
fault = hello["settings"]["fault"]
at_step = hello["settings"].get("at_step", 0)


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


say(json.dumps({"type": "hello", "protocol": 2 if fault == "wrong_version" else 1, "name": "misbehaving"}))
for raw in sys.stdin:
    plan = json.loads(raw)
    if plan["step"] < at_step:
        say(json.dumps({"type": "edit", "edit": None}))
    elif fault == "crash":
        print("about to fail on purpose", file=sys.stderr)
        raise RuntimeError(f"planted crash at step {plan['step']}")
    elif fault == "garbage":
        say("certainly! here is the edit you asked for")
    elif fault == "wrong_shape":
        say(json.dumps({"type": "edit", "edit": {"kind": "fold", "range": [0, 1]}}))
    elif fault == "silent":
        time.sleep(60)
    elif fault == "missing":
        say(json.dumps({"type": "edit", "edit": {"kind": "mask", "results": [{"id": 999, "placeholder": "[gone]"}]}}))
