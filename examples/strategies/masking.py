"""reloop's built-in `masking` strategy (harness/agent/src/context/masking.rs)
as a plug-in, with the `reloop.strategy` helper: observation masking
(Lindenbauer et al., "The Complexity Trap", 2025) keeps the last `keep`
tool results whole and shows older ones as a one-line placeholder. With
`batch` above 1 it waits until that many more results have aged out, so the
cached prefix changes once per batch. After a context-window error it masks
all but the newest result.

`keep` and `batch` are the scenario's `loop.strategies.masking` (10 and 1
by default), unless `loop.strategy.settings` gives them. Swept beside the
built-in, it gives the same figures (`.ci/check_plugin_sweep.py`):

    reloop sweep scenarios/long/ --strategies masking,examples/strategies/masking.py
"""

import sys
from pathlib import Path

try:
    from reloop.strategy import Strategy, mask, run
except ImportError:  # run from a clone, without the wheel installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from reloop.strategy import Strategy, mask, run


class Masking(Strategy):
    name = "masking-py"

    def plan(self, context):
        tuned = {**context.strategies.get("masking", {}), **(context.settings or {})}
        keep, batch = tuned.get("keep", 10), tuned.get("batch", 1)
        live = context.live_tool_results()
        if context.reactive:
            keep = 1
        elif len(live) < keep + max(batch, 1):
            return None
        old = live[: max(len(live) - keep, 0)]
        return mask([(result.id, placeholder(result)) for result in old]) if old else None


def placeholder(result):
    """ "[Observation omitted: read_file returned 120 lines]", as masking.rs writes it."""
    verb = "failed with" if result.is_error else "returned"
    return f"[Observation omitted: {result.tool_name} {verb} {result.lines} lines]"


if __name__ == "__main__":
    run(Masking())
