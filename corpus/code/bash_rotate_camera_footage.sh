#!/usr/bin/env bash
# rotate_camera_footage.sh -- keep the wildlife camera's SD-card dumps under a size budget.
#
# Footage lands in $FOOTAGE_ROOT/<camera>/<YYYY-MM-DD>/*.mp4. Days older than
# KEEP_DAYS are archived to a tarball on the NAS; then, while the root is still
# above BUDGET_GB, the oldest remaining day is deleted. Clips tagged as
# "keeper" (a .keep file next to them) are never deleted.
set -euo pipefail

FOOTAGE_ROOT="${FOOTAGE_ROOT:-/srv/trailcam}"
ARCHIVE_DIR="${ARCHIVE_DIR:-/mnt/nas/trailcam-archive}"
KEEP_DAYS="${KEEP_DAYS:-14}"
BUDGET_GB="${BUDGET_GB:-180}"
DRY_RUN=0
LOG_TAG="trailcam-rotate"

usage() {
  cat <<USAGE
usage: $(basename "$0") [-n] [-k days] [-b gigabytes]
  -n   dry run: print what would happen
  -k   days kept uncompressed (default $KEEP_DAYS)
  -b   size budget of $FOOTAGE_ROOT in GB (default $BUDGET_GB)
USAGE
}

while getopts ":nk:b:h" opt; do
  case "$opt" in
    n) DRY_RUN=1 ;;
    k) KEEP_DAYS="$OPTARG" ;;
    b) BUDGET_GB="$OPTARG" ;;
    h) usage; exit 0 ;;
    \?) echo "unknown option -$OPTARG" >&2; usage >&2; exit 2 ;;
    :) echo "option -$OPTARG needs a value" >&2; exit 2 ;;
  esac
done

log() { logger -t "$LOG_TAG" -- "$*"; printf '%s %s\n' "$(date -u +%FT%TZ)" "$*"; }

run() {
  if (( DRY_RUN )); then
    printf 'would run:'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

used_gb() { du -s --block-size=1G "$FOOTAGE_ROOT" | awk '{print $1}'; }

[[ -d "$FOOTAGE_ROOT" ]] || { echo "no footage root: $FOOTAGE_ROOT" >&2; exit 1; }
mkdir -p "$ARCHIVE_DIR"

cutoff=$(date -u -d "-${KEEP_DAYS} days" +%F)
log "archiving days before $cutoff (budget ${BUDGET_GB} GB, used $(used_gb) GB)"

for camera_dir in "$FOOTAGE_ROOT"/*/; do
  camera=$(basename "$camera_dir")
  for day_dir in "$camera_dir"*/; do
    day=$(basename "$day_dir")
    [[ "$day" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || continue
    [[ "$day" < "$cutoff" ]] || continue
    tarball="$ARCHIVE_DIR/${camera}_${day}.tar.zst"
    if [[ -e "$tarball" ]]; then
      log "$camera/$day already archived, skipping"
      continue
    fi
    run tar --zstd -cf "$tarball.partial" -C "$camera_dir" "$day"
    run mv "$tarball.partial" "$tarball"
    find "$day_dir" -name '*.mp4' ! -exec test -e '{}.keep' \; -print0 | xargs -0 -r ${DRY_RUN:+echo} rm -f
    log "archived $camera/$day -> $(basename "$tarball")"
  done
done

while (( $(used_gb) > BUDGET_GB )); do
  oldest=$(find "$FOOTAGE_ROOT" -mindepth 2 -maxdepth 2 -type d -printf '%f %p\n' | sort | head -n1 | cut -d' ' -f2-)
  [[ -n "$oldest" ]] || break
  if compgen -G "$oldest/*.keep" > /dev/null; then
    log "oldest day $oldest holds keepers; stopping above budget"
    break
  fi
  log "over budget: removing $oldest"
  run rm -rf -- "$oldest"
  (( DRY_RUN )) && break
done

log "done, used $(used_gb) GB"
