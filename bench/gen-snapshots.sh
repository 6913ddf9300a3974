#!/usr/bin/env bash
# Makes the big synthetic V8 heap snapshots used for benchmarks (never committed: 55 MB, 306 MB, 1.15 GB).
#
# Usage: bench/gen-snapshots.sh [OUT_DIR=/tmp/heapx-bench] [SIZE...]
#   SIZE is one of 50mb 300mb 1gb (default: all three). A snapshot that already exists is NOT regenerated
#   (delete it or set FORCE=1 to redo it).
# Environment: SYNTHETIC (path to synthetic.js; default: ../shared/peers/synthetic.js next to the repo, else
#   /tmp/heapx-peers/synthetic.js), NODE (default node).
#
# Writes OUT_DIR/synth-<size>.heapsnapshot and OUT_DIR/gen-<size>.log (synthetic.js's JSON line + /usr/bin/time -v).
# Needs ~1.5 GB of RAM for the 1 GB file and ~1.5 GB of disk in all; Node v20.20.2 made the reference files.
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

declare -A SCALE=([50mb]=14000 [300mb]=80000 [1gb]=290000)
mkdir -p "$OUT"
cd "$OUT"
for s in "${sizes[@]}"; do
  scale=${SCALE[$s]:-}
  [[ -n $scale ]] || { echo "unknown size $s (use 50mb, 300mb or 1gb)" >&2; exit 2; }
  f="synth-$s.heapsnapshot"
  if [[ -s $f && ${FORCE:-} != 1 ]]; then
    echo "$OUT/$f exists ($(stat -c %s "$f") bytes), skipping" >&2
    continue
  fi
  echo "== $f (scale $scale)" >&2
  /usr/bin/time -v "$NODE" --max-old-space-size=16384 "$SYNTHETIC" "$scale" "$f" > "gen-$s.log" 2>&1
  head -1 "gen-$s.log" >&2
done
ls -l "$OUT"/synth-*.heapsnapshot >&2
