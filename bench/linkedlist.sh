#!/usr/bin/env bash
# Times heapx on the leaked linked lists of bench/gen-linkedlist.js (issue 12): every command that once asked for a
# path per item (leaks, report with two baselines, merged-paths, paths to the last item), against `summary` on the
# same final snapshot, which is what the others should cost about as much as.
#
# Usage: bench/linkedlist.sh [DIR=/tmp/heapx-bench/linkedlist] [SIZE...]
#   DIR   where gen-linkedlist.js wrote PREFIX-<SIZE>-{1-baseline,2-target,3-final}.heapsnapshot and PREFIX-<SIZE>.json
#   SIZE  default: every PREFIX-*.json in DIR, smallest first
# Environment:
#   HEAPX      the binary (default: a fresh `go build` of ./cmd/heapx into DIR)
#   TIMEOUT    seconds before a run is stopped (default 300)
#   MEM_LIMIT  address-space limit per run in KB (ulimit -v; default 8388608 = 8 GB), so a quadratic run fails
#              instead of pushing a shared machine into the OOM killer
#   COMMANDS   which to run (default: summary leaks report merged-paths merged-all paths; merged-all is
#              merged-paths -n 0 --json, the whole tree)
#   PREFIX     the files' prefix (default node-list; node-altlist for gen-linkedlist.js --alternate)
# Prints one markdown row per run: size, command, exit status, wall s, CPU s (user + sys), peak RSS MB; and the load
# average before and after. Output is dropped; for leaks (--json) the row says how many leaks it found. Needs jq.
set -uo pipefail

DIR=${1:-/tmp/heapx-bench/linkedlist}
(( $# )) && shift
TIMEOUT=${TIMEOUT:-300}
MEM_LIMIT=${MEM_LIMIT:-8388608}
COMMANDS=${COMMANDS:-summary leaks report merged-paths merged-all paths}
PREFIX=${PREFIX:-node-list}
command -v jq >/dev/null || { echo "need jq" >&2; exit 1; }
sizes=("$@")
if (( ${#sizes[@]} == 0 )); then
  while read -r f; do
    s=${f##*/$PREFIX-}; sizes+=("${s%.json}")
  done < <(for j in "$DIR"/$PREFIX-*.json; do echo "$(jq .items "$j") $j"; done | sort -n | cut -d' ' -f2)
fi
(( ${#sizes[@]} )) || { echo "no $PREFIX-*.json in $DIR: run bench/gen-linkedlist.js first" >&2; exit 1; }
HEAPX=${HEAPX:-}
if [[ -z $HEAPX ]]; then
  HEAPX="$DIR/heapx"
  (cd "$(dirname "$0")/.." && go build -o "$HEAPX" ./cmd/heapx) || exit 1
fi

echo "heapx: $HEAPX; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| items | command | exit | wall s | CPU s | peak RSS MB |"
echo "|---:|---|---:|---:|---:|---:|"
for s in "${sizes[@]}"; do
  b="$DIR/$PREFIX-$s-1-baseline.heapsnapshot" t="$DIR/$PREFIX-$s-2-target.heapsnapshot" f="$DIR/$PREFIX-$s-3-final.heapsnapshot"
  tail=$(jq .tail_id "$DIR/$PREFIX-$s.json") || exit 1
  for c in $COMMANDS; do
    case $c in
      summary) args=(summary "$f") ;;
      leaks) args=(leaks "$b" "$t" "$f" --json) ;;
      report) args=(report "$f" "$b" "$t") ;;
      merged-paths) args=(merged-paths "$f" --class Item) ;;
      merged-all) args=(merged-paths "$f" --class Item -n 0 --json) ;;
      paths) args=(paths "$f" --id "$tail") ;;
      *) echo "unknown command $c" >&2; exit 2 ;;
    esac
    log=$(mktemp)
    out=$(mktemp)
    ( ulimit -v "$MEM_LIMIT"; /usr/bin/time -o "$log" -v timeout "$TIMEOUT" "$HEAPX" "${args[@]}" >"$out" 2>/dev/null )
    rc=$(sed -n 's/^\tExit status: //p' "$log")
    wall=$(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$log")
    rss=$(awk -F': ' '/Maximum resident/ { printf "%.0f", $2 / 1024 }' "$log")
    note=""
    (( rc == 124 )) && note=" (timeout)"
    if [[ $c == leaks && $rc == 0 ]]; then
      note=" ($(jq '.sections[0].rows | length' "$out") leak(s), the first of $(jq '.sections[0].rows[0].count' "$out") objects)"
    fi
    echo "| $s | $c$note | $rc | $wall | $cpu | $rss |"
    rm -f "$log" "$out"
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
