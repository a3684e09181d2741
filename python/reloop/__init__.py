"""reloop's pytest plugin: tests replay recorded provider sessions through
`reloop serve`, or record them with `--reloop-record` (see pytest_plugin.py)."""

from reloop.pytest_plugin import Replay

__all__ = ["Replay"]
