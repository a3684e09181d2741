"""The plugin's own tests: `pytester` runs inner pytest sessions, which load
the plugin through its `pytest11` entry point as a user's would."""

pytest_plugins = ["pytester"]
