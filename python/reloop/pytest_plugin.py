"""pytest plugin: each marked test replays a recorded provider session.

    @pytest.mark.reloop("recordings/chat.yaml", faults=[{"exchange": 0, "http": {"status": 429}}])
    def test_chat():
        client = openai.OpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY point at the replay

A marked test's environment points the SDKs at its replay, as vcrpy leaves
the code under test unchanged: `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL` and
`GOOGLE_GEMINI_BASE_URL`, with `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` and
`GEMINI_API_KEY` set to placeholders (the real keys never reach a replay),
all restored after the test; `env=False` on the marker turns this off. The
`reloop` fixture gives the same base URLs to a test that wants them.

One `reloop serve` runs for the whole pytest session, on a free loopback
port, serving every marked test's recording (a reloop recording or a vcrpy
cassette, imported by `reloop import --format vcr`) or scenario, with the
marker's faults. Each test gets a fresh replay of its own (`/s/NAME/r/N`), and
fails with the divergence's expected and actual request when the code under
test sends something the recording did not hold: serve answers such a
request with a 400 and logs its reason (`--log-json`), which this plugin
reads after the test.

`--reloop-record-mode` says when a test records instead, as vcrpy's modes
do: `none` (the default) replays only; `once` records the tests whose
recording does not exist yet and replays the others; `new_episodes` does the
same, and a test whose code sends what its recording does not hold goes on
live from that request (serve's `--upstream --record-mode new`): its
recording is rewritten as the exchanges it replayed, then the live ones;
`all` records every test (`--reloop-record` is its short form). A test that
records runs through `reloop record` in front of `--reloop-upstream` (one
proxy per test, the real keys kept in the environment): the recording,
which keeps no API key or Authorization header, is written to the marker's
path for the next run.

Relative paths in a marker are relative to the test file's folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import pytest

MARKER = "reloop"
# The session log's file name: serve percent-encodes every byte outside these.
_LOG_NAME_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_START_TIMEOUT_S = 30
_STOP_TIMEOUT_S = 10
_INTERRUPTED = 130  # reloop's exit code after Ctrl-C
_targets_key = pytest.StashKey[dict]()
_recording_key = pytest.StashKey[set]()
_replay_key = pytest.StashKey["Replay"]()
# What a replay's clients are given for a key: any is accepted.
_PLACEHOLDER_KEY = "sk-reloop-replay"
# vcrpy's record modes.
_RECORD_MODES = ("none", "once", "new_episodes", "all")


@dataclass(frozen=True)
class Target:
    """What one marker names: a recording (reloop's or a vcrpy cassette)
    with faults, or a scenario file with its own."""

    path: Path
    is_scenario: bool
    faults: str  # the faults as JSON, so targets compare and hash
    env: bool = True  # the SDKs' variables point at the replay

    @property
    def is_cassette(self) -> bool:
        return not self.is_scenario and _is_vcr_cassette(self.path)

    @property
    def recording(self) -> Path:
        """The recording file it replays, or records into."""
        return _recording_path_of(self.path) if self.is_scenario else self.path

    def records(self, mode: str) -> bool:
        """Whether the test records under `mode` rather than replays."""
        return mode == "all" or (mode in ("once", "new_episodes") and not self.recording.exists())


@dataclass
class Replay:
    """What a test gets from the `reloop` fixture: the base URLs of its own
    replay (or, with `--reloop-record`, of its recording proxy)."""

    base: str
    session: Optional[str]
    log_file: Optional[Path] = None
    divergences: list = field(default_factory=list)

    @property
    def openai_base_url(self) -> str:
        return f"{self._root}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self._root

    @property
    def gemini_base_url(self) -> str:
        return self._root

    @property
    def _root(self) -> str:
        return self.base if self.session is None else f"{self.base}/s/{self.session}"

    def read_divergences(self) -> list[str]:
        """The reasons of the requests serve refused as divergences."""
        if self.log_file is None or not self.log_file.exists():
            return []
        lines = self.log_file.read_text(encoding="utf-8").splitlines()
        return [entry["divergence_reason"] for entry in map(json.loads, lines) if entry.get("divergence_reason")]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reloop", "replay recorded LLM provider sessions with reloop")
    group.addoption(
        "--reloop-record-mode",
        choices=_RECORD_MODES,
        default=None,
        help="none (default): replay only; once: record the tests whose recording does not exist yet; "
        "new_episodes: as once, and a test that sends what its recording lacks goes live from there, its recording rewritten; "
        "all: record every marked test, through `reloop record` in front of --reloop-upstream",
    )
    group.addoption("--reloop-record", action="store_true", help="the same as --reloop-record-mode=all")
    group.addoption(
        "--reloop-upstream",
        default=os.environ.get("RELOOP_UPSTREAM"),
        help="the provider --reloop-record forwards to, e.g. https://api.openai.com (default: $RELOOP_UPSTREAM)",
    )
    group.addoption("--reloop-bin", default=os.environ.get("RELOOP_BIN"), help="the reloop binary (default: $RELOOP_BIN, else `reloop` on PATH)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        'reloop(recording, *, faults=None, env=True) or reloop(scenario="FILE", env=True): replay this recording '
        "(reloop or vcrpy) with these faults, or this scenario with its own, through `reloop serve`; "
        "env=True points OPENAI_BASE_URL, ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL at it",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Every marked test's target, known before the one server starts."""
    targets = {}
    for item in items:
        marker = item.get_closest_marker(MARKER)
        if marker is not None:
            targets[item.nodeid] = _target_of(marker, Path(item.path).parent)
    config.stash[_targets_key] = targets
    # Decided once, before any test runs: a recording written by one test
    # does not turn a later test of the same file into a replay.
    mode = _record_mode(config)
    config.stash[_recording_key] = {target for target in targets.values() if target.records(mode)}


def _target_of(marker: pytest.Mark, base: Path) -> Target:
    scenario = marker.kwargs.get("scenario")
    recording = marker.args[0] if marker.args else marker.kwargs.get("recording")
    faults = marker.kwargs.get("faults") or []
    if (scenario is None) == (recording is None):
        raise pytest.UsageError(f"@pytest.mark.reloop takes a recording or scenario=, exactly one: {marker}")
    if scenario is not None and faults:
        raise pytest.UsageError(f"@pytest.mark.reloop: faults= goes with a recording; scenario {scenario} has its own `faults:`")
    path = base / str(scenario if scenario is not None else recording)
    env = marker.kwargs.get("env", True)
    return Target(path=path.resolve(), is_scenario=scenario is not None, faults=json.dumps(faults, sort_keys=True), env=bool(env))


def _record_mode(config: pytest.Config) -> str:
    """The record mode: `--reloop-record-mode`, `all` for `--reloop-record`, else `none`."""
    mode = config.getoption("reloop_record_mode")
    if config.getoption("reloop_record"):
        if mode not in (None, "all"):
            raise pytest.UsageError(f"--reloop-record is --reloop-record-mode=all, not {mode}: give one of them")
        return "all"
    return mode or "none"


def _is_vcr_cassette(path: Path) -> bool:
    """A vcrpy cassette has a top-level `interactions:` list; a reloop
    recording says `format: reloop.recording/...` or has `exchanges:`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return re.search(r"^interactions:", text, re.MULTILINE) is not None


def _binary(config: pytest.Config) -> str:
    binary = config.getoption("reloop_bin") or shutil.which("reloop")
    if not binary:
        raise pytest.UsageError("reloop: no `reloop` binary on PATH (pip install reloop, or give --reloop-bin / RELOOP_BIN)")
    return binary


class _Process:
    """A reloop command serving on loopback, whose first stdout line ends
    with ` on http://127.0.0.1:PORT`; stopped with SIGINT (Ctrl-C), as its
    users stop it, so a recorder writes what it holds."""

    def __init__(self, args: list[str], log_path: Path):
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._log, text=True)
        first = _first_line(self.process, _START_TIMEOUT_S)
        if " on http://" not in first:
            self.stop()
            raise RuntimeError(f"`{' '.join(args)}` did not start: {first!r}\n{self.log()}")
        self.url = first.rsplit(" on ", 1)[1].split()[0]

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log.close()
        return self.process.returncode


def _first_line(process: subprocess.Popen, timeout_s: float) -> str:
    """The first stdout line, or "" when the process ends or stays silent."""
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout_s):
            return ""
    return process.stdout.readline()


class _Server:
    """The one `reloop serve` of a pytest session, serving each target as a
    scenario of its own (a staged one for a recording with faults)."""

    def __init__(self, binary: str, targets: set[Target], workdir: Path, upstream: Optional[str] = None):
        self.logs = workdir / "log"
        self.session_of: dict[Target, str] = {}
        self._runs = 0
        # new_episodes: sessions that go live are written here (`serve --rerecord-dir`).
        self.rerecorded = workdir / "rerecorded" if upstream else None
        scenarios = [self._stage(binary, target, workdir, index) for index, target in enumerate(sorted(targets, key=repr))]
        args = [binary, "serve", "--port", "0", "--quiet", "--log-json", str(self.logs)]
        if upstream:
            args += ["--upstream", upstream, "--record-mode", "new", "--rerecord-dir", str(self.rerecorded)]
        for scenario in scenarios:
            args += ["--scenario", str(scenario)]
        self.process = _Process(args, workdir / "serve.log")

    def _stage(self, binary: str, target: Target, workdir: Path, index: int) -> Path:
        if target.is_scenario:
            self.session_of[target] = _scenario_name(target.path)
            return target.path
        recording = _imported(binary, target.path, workdir / f"import-{index}") if target.is_cassette else target.path
        name = f"pytest-{index}"
        self.session_of[target] = name
        scenario = workdir / f"{name}.yaml"
        # JSON is YAML: no YAML library needed to write a scenario.
        spec = {
            "name": name,
            "model": "recorded",
            "task": f"replay {target.path.name} (reloop's pytest plugin)",
            "recording": str(recording),
            "faults": json.loads(target.faults),
        }
        scenario.write_text(json.dumps(spec, indent=1), encoding="utf-8")
        return scenario

    def replay(self, target: Target) -> Replay:
        """A fresh replay of `target`, a session no other test uses."""
        self._runs += 1
        session = f"{self.session_of[target]}/r/{self._runs}"
        return Replay(base=self.process.url, session=session, log_file=self.logs / f"{_log_stem(session)}.jsonl")

    def keep_new_episodes(self, target: Target, replay: Replay) -> None:
        """new_episodes: when the test's session went live, its re-recording
        replaces the marker's recording (atomically); otherwise the
        recording stays as it was."""
        if self.rerecorded is None or replay.session is None:
            return
        written = self.rerecorded / f"{_log_stem(replay.session)}.recording.yaml"
        if written.exists():
            _replace_atomically(written, target.recording)


def _scenario_name(path: Path) -> str:
    """The scenario's `name:` (a plain scalar), or its file stem, as the loader names it."""
    match = re.search(r"^name:\s*['\"]?([^'\"#\n]+?)['\"]?\s*$", path.read_text(encoding="utf-8"), re.MULTILINE)
    return match.group(1) if match else path.stem


def _imported(binary: str, cassette: Path, out: Path) -> Path:
    """The neutral v2 recording `reloop import --format vcr` makes of a
    cassette (beside it, a raw one, replayed byte for byte: `reloop serve --raw`)."""
    done = subprocess.run(
        [binary, "import", str(cassette), "--format", "vcr", "--out", str(out)], capture_output=True, text=True, check=False
    )
    recordings = [p for p in out.glob("*.recording.yaml") if not p.name.endswith(".raw.recording.yaml")] if done.returncode == 0 else []
    if len(recordings) != 1:
        raise pytest.UsageError(f"reloop import of the vcrpy cassette {cassette} failed:\n{done.stdout}{done.stderr}")
    return recordings[0]


def _log_stem(session: str) -> str:
    return "".join(chr(b) if b in _LOG_NAME_SAFE else f"%{b:02X}" for b in session.encode())


@pytest.fixture(scope="session")
def reloop_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Optional[_Server]]:
    """The session's `reloop serve` for the tests that replay (None when
    every test records), stopped at the end."""
    config = request.config
    targets = set(config.stash.get(_targets_key, {}).values()) - config.stash.get(_recording_key, set())
    if not targets:
        yield None
        return
    mode = _record_mode(config)
    upstream = _upstream(config) if mode == "new_episodes" else None
    server = _Server(_binary(config), targets, tmp_path_factory.mktemp("reloop"), upstream)
    yield server
    server.process.stop()


@pytest.fixture
def reloop(request: pytest.FixtureRequest, reloop_server: Optional[_Server], tmp_path: Path) -> Iterator[Replay]:
    """This test's replay: point the SDKs at `openai_base_url`,
    `anthropic_base_url` or `gemini_base_url` (any API key is accepted)."""
    target = request.config.stash.get(_targets_key, {}).get(request.node.nodeid)
    if target is None:
        raise pytest.UsageError(f"{request.node.nodeid}: mark it @pytest.mark.reloop(\"recordings/NAME.yaml\") to use the `reloop` fixture")
    if target in request.config.stash.get(_recording_key, set()):
        yield from _recorded(request.config, target, tmp_path)
        return
    replay = reloop_server.replay(target)
    request.node.stash[_replay_key] = replay
    yield replay
    reloop_server.keep_new_episodes(target, replay)


@pytest.fixture(autouse=True)
def _reloop_environment(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A marked test's SDK variables, pointing at its replay (or recording
    proxy), so code that builds `openai.OpenAI()` unchanged is replayed.
    A replay's keys are placeholders, so a real key set in the shell never
    reaches it; a recording keeps the real ones, which the proxy forwards."""
    target = request.config.stash.get(_targets_key, {}).get(request.node.nodeid)
    if target is None or not target.env:
        return
    replay: Replay = request.getfixturevalue("reloop")
    monkeypatch.setenv("OPENAI_BASE_URL", replay.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", replay.anthropic_base_url)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", replay.gemini_base_url)
    if replay.session is not None:
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
            monkeypatch.setenv(name, _PLACEHOLDER_KEY)


def _recorded(config: pytest.Config, target: Target, tmp_path: Path) -> Iterator[Replay]:
    """`--reloop-record`: the test talks to a `reloop record` proxy; when it
    ends, the recording moves (atomically) to the marker's recording path."""
    upstream = _upstream(config)
    destination = target.recording
    out = tmp_path / "recorded"
    proxy = _Process([_binary(config), "record", "--upstream", upstream, "--port", "0", "--out", str(out)], tmp_path / "record.log")
    try:
        yield Replay(base=proxy.url, session=None)
    finally:
        code = proxy.stop()
    written = out.with_name(out.name + ".recording.yaml")
    # Stopped by SIGINT, `reloop record` writes what it holds and exits 130
    # (interrupted), its normal end.
    if code != _INTERRUPTED or not written.exists():
        raise RuntimeError(f"reloop record wrote no recording (exit {code}):\n{proxy.log()}")
    _replace_atomically(written, destination)


def _upstream(config: pytest.Config) -> str:
    """`--reloop-upstream`, which every mode that records needs."""
    upstream = config.getoption("reloop_upstream")
    if not upstream:
        raise pytest.UsageError("recording (--reloop-record-mode once, new_episodes or all) needs --reloop-upstream URL (or RELOOP_UPSTREAM)")
    return upstream


def _replace_atomically(written: Path, destination: Path) -> None:
    """`destination` becomes a copy of `written`: the old file or the new one, never half of one."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    staged = destination.with_name(f".{destination.name}.reloop-tmp")
    shutil.copyfile(written, staged)
    os.replace(staged, destination)


def _recording_path_of(scenario: Path) -> Path:
    """A scenario's `recording:` path, relative to the scenario's folder."""
    match = re.search(r"^recording:\s*['\"]?([^'\"#\n]+?)['\"]?\s*$", scenario.read_text(encoding="utf-8"), re.MULTILINE)
    if match is None:
        raise pytest.UsageError(f"{scenario}: no `recording:` line to record into")
    return (scenario.parent / match.group(1)).resolve()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A test whose code sent a request the recording did not expect fails
    with the divergence, even when the code caught the SDK's error."""
    outcome = yield
    report = outcome.get_result()
    replay = item.stash.get(_replay_key, None)
    if report.when != "call" or replay is None:
        return
    divergences = replay.read_divergences()
    if divergences:
        report.outcome = "failed"
        text = "\n".join(divergences)
        report.longrepr = f"reloop: the code under test sent a request the recording did not expect (session {replay.session}):\n{text}"
        if call.excinfo is not None:
            report.longrepr += f"\n\nthe test itself raised: {call.excinfo.exconly()}"
