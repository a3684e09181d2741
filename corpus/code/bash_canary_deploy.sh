#!/usr/bin/env bash
#
# canary_deploy.sh - roll a new build of the quotes API onto the fleet in
# stages, watching the error rate after each stage and rolling back on a
# regression.
#
# Usage:
#   canary_deploy.sh -v <version> [-e staging|prod] [-s 5,25,100] [-w 300]
#                    [-t 1.5] [-n] [-y]
#
#   -v  build version to deploy (a tag in the artifact bucket), required
#   -e  environment (default: staging)
#   -s  comma-separated percentages of hosts per stage (default: 5,25,100)
#   -w  seconds to watch after each stage (default: 300)
#   -t  max allowed error-rate ratio new/old before rollback (default: 1.5)
#   -n  dry run: print what would happen, touch nothing
#   -y  do not ask for confirmation before prod
#
# Exit codes: 0 deployed, 1 usage, 2 preflight failed, 3 rolled back.

set -euo pipefail
IFS=$'\n\t'

readonly SCRIPT_NAME=${0##*/}
readonly ARTIFACT_BUCKET="s3://pinecone-builds/quotes-api"
readonly METRICS_URL="http://metrics.internal:9090/api/v1/query"
readonly LOCK_FILE="/var/lock/quotes-deploy.lock"

version=""
env_name="staging"
stages="5,25,100"
watch_secs=300
threshold="1.5"
dry_run=false
assume_yes=false

log()  { printf '%s [%s] %s\n' "$(date -u +%H:%M:%S)" "$SCRIPT_NAME" "$*" >&2; }
die()  { log "ERROR: $*"; exit "${2:-2}"; }
run()  {
    if $dry_run; then
        log "dry-run: $*"
    else
        "$@"
    fi
}

usage() {
    sed -n '4,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 1
}

while getopts ':v:e:s:w:t:nyh' opt; do
    case $opt in
        v) version=$OPTARG ;;
        e) env_name=$OPTARG ;;
        s) stages=$OPTARG ;;
        w) watch_secs=$OPTARG ;;
        t) threshold=$OPTARG ;;
        n) dry_run=true ;;
        y) assume_yes=true ;;
        h) usage ;;
        :) log "option -$OPTARG needs a value"; usage ;;
        \?) log "unknown option -$OPTARG"; usage ;;
    esac
done
shift $((OPTIND - 1))

[[ -n $version ]] || { log "missing -v <version>"; usage; }
[[ $env_name == staging || $env_name == prod ]] || die "env must be staging or prod" 1
[[ $watch_secs =~ ^[0-9]+$ ]] || die "-w must be a whole number of seconds" 1

# One deploy at a time per machine; the fd stays open until the script exits.
exec 9>"$LOCK_FILE"
flock -n 9 || die "another deploy holds $LOCK_FILE"

# ---------------------------------------------------------------- preflight

hosts_file=$(mktemp)
trap 'rm -f "$hosts_file"' EXIT

log "listing $env_name hosts"
consul catalog nodes -service="quotes-api" -filter "Meta.env == \"$env_name\"" \
    | awk 'NR > 1 { print $1 }' \
    | sort -u > "$hosts_file"

host_count=$(wc -l < "$hosts_file")
(( host_count > 0 )) || die "no hosts found for quotes-api in $env_name"
log "found $host_count hosts"

if ! aws s3 ls "$ARTIFACT_BUCKET/$version/quotes-api.tar.zst" > /dev/null; then
    die "artifact $version not found in $ARTIFACT_BUCKET"
fi

current_version=$(ssh -o BatchMode=yes "$(head -n1 "$hosts_file")" \
    cat /opt/quotes-api/VERSION 2>/dev/null || echo unknown)
log "current version: $current_version, new version: $version"
[[ $current_version != "$version" ]] || die "$version is already deployed" 0

if [[ $env_name == prod ]] && ! $assume_yes; then
    read -r -p "Deploy $version to $host_count prod hosts? [y/N] " answer
    [[ $answer == [yY]* ]] || die "aborted by user" 1
fi

# ---------------------------------------------------------------- helpers

# error_rate <version>: 5xx ratio over the last 5 minutes for hosts on it.
error_rate() {
    local q
    q=$(cat <<PROMQL
sum(rate(http_requests_total{job="quotes-api",env="$env_name",version="$1",code=~"5.."}[5m]))
/
sum(rate(http_requests_total{job="quotes-api",env="$env_name",version="$1"}[5m]))
PROMQL
)
    curl -fsS --get --data-urlencode "query=$q" "$METRICS_URL" \
        | jq -r '.data.result[0].value[1] // "0"'
}

deploy_host() {
    local host=$1
    log "  -> $host"
    run ssh -o BatchMode=yes "$host" sudo bash -s -- "$version" "$ARTIFACT_BUCKET" <<'REMOTE'
set -euo pipefail
ver=$1 bucket=$2
dir=/opt/quotes-api/releases/$ver
mkdir -p "$dir"
aws s3 cp --only-show-errors "$bucket/$ver/quotes-api.tar.zst" - | tar --zstd -x -C "$dir"
ln -sfn "$dir" /opt/quotes-api/current
echo "$ver" > /opt/quotes-api/VERSION
systemctl restart quotes-api
for i in $(seq 1 30); do
    curl -fsS http://127.0.0.1:8080/healthz > /dev/null && exit 0
    sleep 1
done
echo "health check failed after 30s" >&2
exit 1
REMOTE
}

rollback() {
    log "rolling back ${#deployed[@]} hosts to $current_version"
    local h
    for h in "${deployed[@]}"; do
        run ssh -o BatchMode=yes "$h" sudo bash -c \
            "ln -sfn /opt/quotes-api/releases/$current_version /opt/quotes-api/current \
             && echo $current_version > /opt/quotes-api/VERSION \
             && systemctl restart quotes-api" \
            || log "  rollback failed on $h, fix by hand"
    done
    exit 3
}

# ---------------------------------------------------------------- stages

declare -a deployed=()
mapfile -t all_hosts < "$hosts_file"

IFS=',' read -r -a stage_pcts <<< "$stages"
for pct in "${stage_pcts[@]}"; do
    target=$(( (host_count * pct + 99) / 100 ))
    log "stage ${pct}%: $target of $host_count hosts"

    while (( ${#deployed[@]} < target )); do
        host=${all_hosts[${#deployed[@]}]}
        if ! deploy_host "$host"; then
            deployed+=("$host")
            log "deploy failed on $host"
            rollback
        fi
        deployed+=("$host")
    done

    $dry_run && continue
    (( pct == 100 )) && break

    log "watching for ${watch_secs}s"
    sleep "$watch_secs"

    new_rate=$(error_rate "$version")
    old_rate=$(error_rate "$current_version")
    log "error rate: new=$new_rate old=$old_rate"

    # awk does the float comparison; a zero old rate means any new error counts.
    if awk -v n="$new_rate" -v o="$old_rate" -v t="$threshold" \
        'BEGIN { exit !((o == 0 && n > 0.001) || (o > 0 && n / o > t)) }'; then
        log "error rate regression above ${threshold}x"
        rollback
    fi
done

log "deployed $version to ${#deployed[@]} hosts in $env_name"
