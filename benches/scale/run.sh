#!/usr/bin/env bash
# Scale bench (issue 16): copies the bundled suite (scenarios/) and the long
# suite (scenarios/long/) N times each, sweeps every copy set over the five
# strategies with 2 jobs, and prints, per suite and N: runs, peak resident
# memory (from /usr/bin/time -v) and wall time, with ratios against N's
# first value measured in the same invocation. The `generated` suite is N
# scenarios written by `reloop-generate` (benches/src/bin): GEN_STEPS model
# decisions each (default 20) with 2,000-character tool results, in a
# GEN_WINDOW-token window (default 8000, so that the strategies compact).
#
#   benches/scale/run.sh                     # N = 1 5 25, bundled and long, target/release/reloop
#   benches/scale/run.sh --suites long 4 20  # one suite, chosen N
#   benches/scale/run.sh --suites generated 100 1000   # 1,000 generated scenarios × 5 strategies
#   RELOOP=target/reloop-before benches/scale/run.sh
#
# Copies get unique scenario names (`-cK` appended) and absolute recording
# paths; the recordings themselves are shared, not copied.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
reloop=${RELOOP:-target/release/reloop}
generate=${GENERATE:-target/release/reloop-generate}
suites="bundled long"
if [[ ${1:-} == --suites ]]; then
  suites=${2//,/ }
  shift 2
fi
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(1 5 25)
[[ -x $reloop ]] || { echo "no $reloop: cargo build --release -p reloop first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/reloop-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT

# copy SOURCE_DIR DEST_DIR N: N renamed copies of every scenario of SOURCE_DIR.
copy() {
  local source=$1 dest=$2 n=$3 file stem k
  mkdir -p "$dest"
  for file in "$source"/*.yaml; do
    grep -q '^format: reloop.recording' "$file" && continue
    stem=$(basename "$file" .yaml)
    for ((k = 1; k <= n; k++)); do
      sed -e "s|^name: \(.*\)$|name: \1-c$k|" -e "s|^recording: \(.*\)$|recording: $repo/$source/\1|" "$file" > "$dest/$stem-c$k.yaml"
    done
  done
}

printf '%-8s %6s %8s %14s %10s %8s %12s %10s %10s\n' suite N runs "peak RSS MiB" "wall s" "CPU s" "ms per run" "RSS ×" "ms/run ×"
for suite in $suites; do
  case $suite in
    bundled) source=scenarios ;;
    long) source=scenarios/long ;;
    generated)
      source=""
      [[ -x $generate ]] || { echo "no $generate: cargo build --release -p reloop-benches --bin reloop-generate first" >&2; exit 2; } ;;
    *) echo "unknown suite $suite (bundled, long, generated)" >&2; exit 2 ;;
  esac
  base_rss="" base_per_run=""
  for n in "${counts[@]}"; do
    dir="$work/$suite-$n"
    if [[ $suite == generated ]]; then
      "$generate" "$dir/scenarios" --scenarios "$n" --steps "${GEN_STEPS:-20}" --context-window "${GEN_WINDOW:-8000}" > /dev/null
    else
      copy "$source" "$dir/scenarios" "$n"
    fi
    /usr/bin/time -v -o "$dir/time.txt" "$reloop" sweep "$dir/scenarios" --strategies roku,opencode,codex,masking,none \
      --jobs 2 --out "$dir/out" > "$dir/stdout.txt" 2> "$dir/stderr.txt" || [ $? -eq 1 ] || { cat "$dir/stderr.txt" >&2; exit 1; }
    # Exit 1 is a sweep whose strategies fail some scenarios on purpose
    # (`none` overflowing the window), as in CI; 2 and 3 are errors.
    # Runs: the sum of the pass column's denominators (one row per strategy).
    runs=$(grep -o '[0-9]*/[0-9]* *│$' "$dir/stdout.txt" | awk -F'[/ ]' '{ s += $2 } END { print s }')
    rss_kib=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$dir/time.txt")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$dir/time.txt" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    # CPU: user + system, what the sweep costs whatever else shares the cores.
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.1f", s }' "$dir/time.txt")
    rss=$(awk -v k="$rss_kib" 'BEGIN { printf "%.0f", k / 1024 }')
    per_run=$(awk -v w="$wall" -v r="$runs" 'BEGIN { printf "%.3f", w * 1000 / r }')
    base_rss=${base_rss:-$rss}
    base_per_run=${base_per_run:-$per_run}
    printf '%-8s %6s %8s %14s %10s %8s %12s %10s %10s\n' "$suite" "$n" "$runs" "$rss" "$wall" "$cpu" "$per_run" \
      "$(awk -v a="$rss" -v b="$base_rss" 'BEGIN { printf "%.2f", a / b }')" \
      "$(awk -v a="$per_run" -v b="$base_per_run" 'BEGIN { printf "%.2f", a / b }')"
    rm -rf "$dir"
  done
done
