#!/usr/bin/env bash
# Fleet benchmark: makes a fleet of real Node heap snapshots (bench/gen-fleet.js: a service's pods in a
# leaking release and its fix), exports it to a Parquet directory with heapx export, and times the fleet queries:
# heapx fleet, and the five fleet questions of docs/sql.md on DuckDB (heapx sql DIR). Prints a Markdown summary for
# docs/benchmarks.md: export rate (dumps/s, MB/s of input), query latency, bytes per object in Parquet against the
# SQLite form (.db) of the same dumps.
#
# Usage: bench/fleet.sh [OUT_DIR=/tmp/fleet-bench]
# Environment: PODS (per release, default 10), SNAPSHOTS (per pod, default 10), REQUESTS (per snapshot, default
#   300): 2 x PODS x SNAPSHOTS dumps, 200 by default, 3 to 5 MB each. RUNS (default 5): runs of each query, the
#   median is printed. HEAPX: a heapx built with -tags duckdb (default: built into OUT_DIR). KEEP=1 keeps the
#   dumps and the Parquet directory (about 1 GB and 150 MB by default); otherwise they are deleted at the end.
# Needs Node (v20), Go with cgo and gcc. Run it on an otherwise idle machine; it prints the load average.
set -euo pipefail

OUT=${1:-/tmp/fleet-bench}
PODS=${PODS:-10}
SNAPSHOTS=${SNAPSHOTS:-10}
REQUESTS=${REQUESTS:-300}
RUNS=${RUNS:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { printf '%s\n' "$*" >&2; }

if [[ -z ${HEAPX:-} ]]; then
  HEAPX=$OUT/heapx
  log "building $HEAPX with DuckDB"
  (cd "$here" && CGO_ENABLED=1 go build -tags duckdb -o "$HEAPX" ./cmd/heapx)
fi

dumps=$OUT/dumps fleet=$OUT/fleet
if [[ ! -d $dumps ]]; then
  log "generating $((2 * PODS * SNAPSHOTS)) snapshots into $dumps"
  node "$here/bench/gen-fleet.js" "$dumps" --pods="$PODS" --snapshots="$SNAPSHOTS" --requests="$REQUESTS" > "$OUT/gen.jsonl"
fi
ndumps=$(find "$dumps" -name '*.heapsnapshot' | wc -l)
inbytes=$(find "$dumps" -name '*.heapsnapshot' -printf '%s\n' | awk '{s += $1} END {print s}')

# seconds CMD...: runs CMD, prints "wall user sys" in seconds on stdout (CMD's own output goes to /dev/null).
seconds() {
  local t
  t=$(mktemp)
  /usr/bin/time -f '%e %U %S' -o "$t" "$@" > /dev/null 2>&1 || { cat "$t" >&2; rm -f "$t"; return 1; }
  cat "$t"
  rm -f "$t"
}
# median of the first field of RUNS lines on stdin
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# Export: one run per pod, as its dumps are collected, with its labels.
rm -rf "$fleet"
load=$(cut -d' ' -f1-3 /proc/loadavg)
wall=0 cpu=0
for rel in "$dumps"/release=*; do
  release=${rel##*=}
  for p in $(seq -f '%03g' 1 "$PODS"); do
    read -r w u s < <(seconds "$HEAPX" export --parquet "$fleet" --label service=api --label "release=$release" \
      --label "pod=$p" "$rel"/pod-"$p"-*.heapsnapshot)
    wall=$(awk -v a="$wall" -v b="$w" 'BEGIN {print a + b}')
    cpu=$(awk -v a="$cpu" -v b="$u" -v c="$s" 'BEGIN {print a + b + c}')
  done
done
nparts=$(find "$fleet" -maxdepth 1 -name 'dump=*' | wc -l)
[[ $nparts == "$ndumps" ]] || { log "exported $nparts partitions of $ndumps dumps"; exit 1; }
read -r again _ < <(seconds "$HEAPX" export --parquet "$fleet" --label service=api "$dumps"/release=*/*.heapsnapshot)
objects=$("$HEAPX" sql --csv "$fleet" 'SELECT sum(node_count) FROM dumps' | tail -1)
pqbytes=$(du -sb "$fleet" | cut -f1)

# The SQLite form of three dumps (the first, a middle and the last of the leaking release) for bytes per object.
mapfile -t sample < <(ls "$dumps"/release=41/*.heapsnapshot | sort -V | awk -v n="$SNAPSHOTS" 'NR == 1 || NR == int(n / 2) || NR == n')
dbbytes=0 dbobjects=0 samplepq=0
for f in "${sample[@]}"; do
  db=$OUT/sample.db
  rm -f "$db"
  "$HEAPX" convert --analyze "$f" "$db" > /dev/null 2>&1
  dbbytes=$((dbbytes + $(stat -c %s "$db")))
  id=$(sha256sum "$f" | cut -c1-16)
  dbobjects=$((dbobjects + $("$HEAPX" sql --csv "$fleet" "SELECT node_count FROM dumps WHERE dump_id = '$id'" | tail -1)))
  samplepq=$((samplepq + $(du -sb "$fleet/dump=$id" | cut -f1)))
  rm -f "$db"
done

# Queries: the five fleet questions, as docs/sql.md has them.
awk '/^## Fleets of dumps/ {on = 1; next} on && /^## / {on = 0} on && /^```sql/ {q++; f = 1; next} f && /^```/ {f = 0; next} f {print > (out "/q" q ".sql")}' \
  out="$OUT" "$here/docs/sql.md"
declare -A lat
time_query() { # name CMD...
  local name=$1
  shift
  lat[$name]=$(for _ in $(seq "$RUNS"); do seconds "$@"; done | median)
}
time_query fleet "$HEAPX" fleet "$fleet"
time_query fleet-json "$HEAPX" fleet --json -n 0 "$fleet"
for q in 1 2 3 4 5; do
  time_query "q$q" "$HEAPX" sql "$fleet" "$(cat "$OUT/q$q.sql")"
done
time_query count-objects "$HEAPX" sql "$fleet" 'SELECT count(*) FROM objects'

mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1e6}'; }
cat <<EOF
### Fleet: $ndumps dumps ($(date -u +%Y-%m-%d), load average before the export $load, $(nproc) cores)

$ndumps snapshots of bench/gen-fleet.js (2 releases x $PODS pods x $SNAPSHOTS snapshots, $REQUESTS requests per
snapshot), $(mb "$inbytes") MB of .heapsnapshot, $objects objects in all.

| what | number |
|---|---|
| export, $((2 * PODS)) runs of heapx export (one per pod) | $(awk -v w="$wall" 'BEGIN {printf "%.1f", w}') s wall, $(awk -v c="$cpu" 'BEGIN {printf "%.1f", c}') s CPU |
| export rate | $(awk -v n="$ndumps" -v w="$wall" 'BEGIN {printf "%.1f", n / w}') dumps/s, $(awk -v b="$inbytes" -v w="$wall" 'BEGIN {printf "%.1f", b / 1e6 / w}') MB/s of input |
| export again, every dump already there | $again s |
| Parquet directory | $(mb "$pqbytes") MB, $(awk -v b="$pqbytes" -v n="$objects" 'BEGIN {printf "%.1f", b / n}') bytes per object |
| the same 3 dumps: Parquet vs .db (heapx convert --analyze) | $(awk -v b="$samplepq" -v n="$dbobjects" 'BEGIN {printf "%.1f", b / n}') vs $(awk -v b="$dbbytes" -v n="$dbobjects" 'BEGIN {printf "%.1f", b / n}') bytes per object |

Query latency, wall seconds, median of $RUNS runs (each a new heapx process: DuckDB starts and reads the files):

| query | seconds |
|---|---|
| heapx fleet DIR | ${lat[fleet]} |
| heapx fleet --json -n 0 DIR | ${lat[fleet-json]} |
| Fleet question 1 (growing classes, classes + labels + dumps) | ${lat[q1]} |
| Fleet question 2 (suspects by dumps) | ${lat[q2]} |
| Fleet question 3 (per-dump totals) | ${lat[q3]} |
| Fleet question 4 (release change per class) | ${lat[q4]} |
| Fleet question 5 (Request objects per dump, the objects table) | ${lat[q5]} |
| SELECT count(*) FROM objects | ${lat[count-objects]} |
EOF

if [[ ${KEEP:-} != 1 ]]; then
  rm -rf "$dumps" "$fleet"
fi
