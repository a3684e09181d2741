"""Validates every bundled file against the JSON Schemas in docs/schema/
with the Python `jsonschema` package, an implementation independent of the
Rust code that generated them: the scenarios under scenarios/, every YAML
file starting with `format: reloop.recording`, and every gates file
(`*gates*.yaml`). Usage: check_schemas.py [REPO_ROOT]"""

import json
import pathlib
import subprocess
import sys

import jsonschema
import yaml

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")


def validator(kind):
    schema = json.loads((root / "docs" / "schema" / f"{kind}.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def first_field(text):
    lines = (line.strip() for line in text.splitlines())
    return next((line for line in lines if line and not line.startswith("#") and line != "---"), "")


validators = {kind: validator(kind) for kind in ("scenario", "recording", "gates")}
tracked = subprocess.run(["git", "-C", str(root), "ls-files", "*.yaml", "*.yml"], check=True, capture_output=True, text=True)
checked = {kind: [] for kind in validators}
for name in tracked.stdout.split():
    path = root / name
    text = path.read_text()
    if first_field(text).startswith("format: reloop.recording"):
        checked["recording"].append(path)
    elif "gates" in path.name:
        checked["gates"].append(path)
    elif pathlib.PurePath(name).parts[0] == "scenarios":
        checked["scenario"].append(path)

failures = []
for kind, paths in checked.items():
    for path in paths:
        document = yaml.safe_load(path.read_text())
        for error in validators[kind].iter_errors(document):
            where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
            failures.append(f"{path}: {where}: {error.message} (against the {kind} schema)")

print(", ".join(f"{len(paths)} {kind} files" for kind, paths in checked.items()) + " checked against docs/schema/")
for kind, paths in checked.items():
    if not paths:
        failures.append(f"no {kind} file found: the check would prove nothing")
if failures:
    sys.exit("\n".join(failures))
