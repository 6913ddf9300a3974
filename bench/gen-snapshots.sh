#!/usr/bin/env bash
# Makes the big synthetic V8 heap snapshots used for benchmarks (never committed: 55 MB, 306 MB, 1.15 GB, 3.5 GB).
#
# Usage: bench/gen-snapshots.sh [OUT_DIR=/tmp/heapx-bench] [SIZE...]
#   SIZE is one of 50mb 300mb 1gb 3500mb (default: the first three). A snapshot that already exists is NOT
#   regenerated (delete it or set FORCE=1 to redo it). Sizes are made one after the other, never at once.
#   3500mb (scale 870000: 42.7M nodes, 128.6M edges) takes about 6 minutes and 17.7 GB of node's memory: it is
#   refused unless MemAvailable is at least 19 GB (set MIN_AVAIL_GB to change that), as the kernel would kill it.
# Environment: SYNTHETIC (path to synthetic.js; default: ../shared/peers/synthetic.js next to the repo, else
#   /tmp/heapx-peers/synthetic.js), NODE (default node).
#
# Writes OUT_DIR/synth-<size>.heapsnapshot and OUT_DIR/gen-<size>.log (synthetic.js's JSON line + /usr/bin/time -v).
# node's peak RSS: 1.6 GB for 300mb, 6.8 GB for 1gb, 17.7 GB for 3500mb; disk: 5 GB for all four. Node v20.20.2 made
# the reference files.
set -euo pipefail

OUT=${1:-/tmp/heapx-bench}
(( $# )) && shift
sizes=("$@"); (( ${#sizes[@]} )) || sizes=(50mb 300mb 1gb)
NODE=${NODE:-node}
here=$(cd "$(dirname "$0")/.." && pwd)
SYNTHETIC=${SYNTHETIC:-}
if [[ -z $SYNTHETIC ]]; then
  for c in "$here/../shared/peers/synthetic.js" /tmp/heapx-peers/synthetic.js; do
    [[ -f $c ]] && { SYNTHETIC=$c; break; }
  done
fi
[[ -f ${SYNTHETIC:-} ]] || { echo "synthetic.js not found; set SYNTHETIC=/path/to/shared/peers/synthetic.js" >&2; exit 1; }
SYNTHETIC=$(cd "$(dirname "$SYNTHETIC")" && pwd)/$(basename "$SYNTHETIC")

declare -A SCALE=([50mb]=14000 [300mb]=80000 [1gb]=290000 [3500mb]=870000)
declare -A NEED_GB=([50mb]=1 [300mb]=3 [1gb]=8 [3500mb]=${MIN_AVAIL_GB:-19})
mkdir -p "$OUT"
cd "$OUT"
for s in "${sizes[@]}"; do
  scale=${SCALE[$s]:-}
  [[ -n $scale ]] || { echo "unknown size $s (use 50mb, 300mb, 1gb or 3500mb)" >&2; exit 2; }
  f="synth-$s.heapsnapshot"
  if [[ -s $f && ${FORCE:-} != 1 ]]; then
    echo "$OUT/$f exists ($(stat -c %s "$f") bytes), skipping" >&2
    continue
  fi
  avail=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo)
  if (( avail < ${NEED_GB[$s]} )); then
    echo "$f needs about ${NEED_GB[$s]} GB of available memory, $avail GB available: not made" >&2
    exit 1
  fi
  echo "== $f (scale $scale, $avail GB available)" >&2
  /usr/bin/time -v "$NODE" --max-old-space-size=20000 "$SYNTHETIC" "$scale" "$f" > "gen-$s.log" 2>&1
  head -1 "gen-$s.log" >&2
done
ls -l "$OUT"/synth-*.heapsnapshot >&2
