#!/usr/bin/env bash
# The action's install step: `reloop` from its wheel into a venv of its own,
# whose bin/ goes on the job's PATH (GITHUB_PATH).
# In: INPUT_PACKAGE (pip spec), RUNNER_TEMP, GITHUB_PATH.
set -euo pipefail
venv="${RUNNER_TEMP:?}/reloop-venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "${INPUT_PACKAGE:?}"
"$venv/bin/reloop" --version
echo "$venv/bin" >> "${GITHUB_PATH:?}"
