"""reloop's Python side: the pytest plugin (tests replay recorded provider
sessions through `reloop serve`, or record them with `--reloop-record`; see
pytest_plugin.py) and `reloop.strategy`, the helper for context strategies
written as plug-ins (docs/strategies.md).

`Replay` is imported when first used, so that `reloop.strategy` needs only
the standard library (no pytest)."""

__all__ = ["Replay"]


def __getattr__(name):
    if name == "Replay":
        from reloop.pytest_plugin import Replay

        return Replay
    raise AttributeError(f"module 'reloop' has no attribute {name!r}")
