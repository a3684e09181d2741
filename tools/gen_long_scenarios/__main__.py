"""The command line: write the long scenarios and recordings, or check them (`--check`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __doc__ as PACKAGE_DOC
from .dependency_upgrade import build_dependency_upgrade
from .flaky_hunt import build_flaky_hunt
from .investigation import build_investigation
from .log_analysis import build_log_analysis
from .refactor import build_refactor

ROOT = Path(__file__).resolve().parents[2]
BUILDERS = [build_investigation, build_log_analysis, build_refactor, build_dependency_upgrade, build_flaky_hunt]


def render(builder) -> tuple[str, str, str, dict]:
    session, spec = builder()
    session.check()
    head = spec["head"]
    steps = session.main_steps
    loop = {"step_budget": spec.get("step_budget", steps + 40)}
    loop.update(spec.get("loop", {}))
    expect = {"outcome": "final_answer", "steps": {"min": steps, "max": steps},
              "final_answer_contains": spec["final_contains"]}
    expect.update(spec.get("expect", {}))
    faults = [f(session) if callable(f) else f for f in spec.get("faults", [])]
    scenario = session.scenario_yaml(head, expect, loop, faults)
    recording = session.recording_yaml(spec.get("recorded_model", "gpt-4.1-2025-04-14"))
    info = {"steps": steps, "estimate": session.size_estimate(), "compaction_index": session.compaction_index}
    return head["name"], scenario, recording, info


def first_difference(path: Path, expected: str) -> str | None:
    """Why `path` is not `expected` (missing, or the first line that differs), or None."""
    if not path.is_file():
        return "missing"
    actual = path.read_text(encoding="utf-8")
    if actual == expected:
        return None
    for number, (have, want) in enumerate(zip(actual.split("\n"), expected.split("\n")), 1):
        if have != want:
            return f"line {number} differs"
    return f"{len(actual.splitlines())} lines where the generator writes {len(expected.splitlines())}"


def check(written: dict[Path, str], dirs: list[Path]) -> int:
    """0 when `dirs` hold exactly the files of `written`; else 1, naming the first file that differs."""
    for path, text in written.items():
        why = first_difference(path, text)
        if why:
            print(f"{path}: {why} from what the generator writes; run `python3 -m tools.gen_long_scenarios`", file=sys.stderr)
            return 1
    extra = sorted(p for d in dirs for p in d.iterdir() if p not in written)
    if extra:
        print(f"{extra[0]}: not written by the generator; remove it or generate it", file=sys.stderr)
        return 1
    print(f"{len(written)} files are what the generator writes")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tools.gen_long_scenarios", description=PACKAGE_DOC.split("\n\n")[0])
    parser.add_argument("--out-root", type=Path, default=ROOT, help="repository root to write under (default: this repository)")
    parser.add_argument("--only", help="build only the scenario with this name")
    parser.add_argument("--check", action="store_true", help="write nothing; fail, naming the first file that differs, unless the files are what it writes")
    args = parser.parse_args(argv)
    scen_dir = args.out_root / "scenarios" / "long"
    rec_dir = args.out_root / "recordings" / "long"
    written: dict[Path, str] = {}
    for builder in BUILDERS:
        name, scenario, recording, info = render(builder)
        if args.only and name != args.only:
            continue
        written[scen_dir / f"{name}.yaml"] = scenario
        written[rec_dir / f"{name}.yaml"] = recording
        print(f"{name}: {info['steps']} steps, ~{info['estimate']:,} tokens by bytes/4, "
              f"scenario {len(scenario.encode()) / 1e6:.2f} MB, recording {len(recording.encode()) / 1e6:.2f} MB, "
              f"compaction exchange {info['compaction_index']}")
    if args.check:
        return check(written, [scen_dir, rec_dir])
    scen_dir.mkdir(parents=True, exist_ok=True)
    rec_dir.mkdir(parents=True, exist_ok=True)
    for path, text in written.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
