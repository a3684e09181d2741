#!/usr/bin/env bash
# The action's comment step: one comment per pull request, found again by
# its first line (a hidden marker) and updated in place on later pushes.
# Its body is the marker, then `reloop run --baseline … --markdown`'s file.
# In: MARKDOWN (file), PR_NUMBER, GITHUB_REPOSITORY, GH_TOKEN (for gh).
set -euo pipefail
marker="<!-- reloop-action -->"
body="$(mktemp)"
trap 'rm -f "$body"' EXIT
{ echo "$marker"; cat "${MARKDOWN:?}"; } > "$body"
comments="repos/${GITHUB_REPOSITORY:?}/issues/${PR_NUMBER:?}/comments"
existing="$(gh api --paginate "$comments" --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)"
if [ -n "$existing" ]; then
  gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$existing" -F "body=@$body" > /dev/null
  echo "updated the reloop comment $existing on #$PR_NUMBER"
else
  gh api --method POST "$comments" -F "body=@$body" > /dev/null
  echo "posted the reloop comment on #$PR_NUMBER"
fi
