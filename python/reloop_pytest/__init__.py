"""reloop's pytest plugin: tests replay recorded provider sessions through
`reloop serve`, or record them with `--reloop-record` (see plugin.py)."""

from reloop_pytest.plugin import Replay

__all__ = ["Replay"]
