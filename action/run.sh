#!/usr/bin/env bash
# The action's run step: `reloop run` with the reports, JUnit, the baseline's
# gates and markdown, and the shard asked. It records reloop's exit code as
# an output and exits 0, so the upload and comment steps still run; the
# action's last step fails the job with that code.
# In: INPUT_SCENARIOS, INPUT_BASELINE, INPUT_GATES, INPUT_SHARD, INPUT_OUT, GITHUB_OUTPUT.
set -euo pipefail
out="${INPUT_OUT:?}"
args=(run)
read -r -a scenarios <<< "${INPUT_SCENARIOS:?}"
args+=("${scenarios[@]}" --out "$out" --junit "$out.junit.xml")
markdown=""
if [ -n "${INPUT_BASELINE:-}" ]; then
  markdown="$out.pr-comment.md"
  args+=(--baseline "$INPUT_BASELINE" --markdown "$markdown")
  if [ -n "${INPUT_GATES:-}" ]; then args+=(--gates "$INPUT_GATES"); fi
fi
if [ -n "${INPUT_SHARD:-}" ]; then args+=(--shard "$INPUT_SHARD"); fi
mkdir -p "$(dirname "$out")"
code=0
reloop "${args[@]}" || code=$?
{
  echo "exit-code=$code"
  echo "report-dir=$out"
  echo "junit=$out.junit.xml"
  if [ -n "$markdown" ] && [ -f "$markdown" ]; then echo "markdown=$markdown"; else echo "markdown="; fi
} >> "${GITHUB_OUTPUT:?}"
