#!/usr/bin/env bash
# Times heapx's SQLite form on one V8 snapshot and prints one markdown table row per step (wall and CPU seconds and
# peak RSS from /usr/bin/time -v, output size, rows per second):
#   1. convert SNAPSHOT -> .db                  (write: strings + nodes + edges + locations, indexes, views)
#   2. convert --analyze SNAPSHOT -> .db        (the same plus the analysis and heapx_result)
#   3. convert .db -> .heapsnapshot             (read the .db back; checked byte for byte against SNAPSHOT)
#   4. summary SNAPSHOT / summary analysed .db  (re-analysing the original vs reopening the .db)
#   5. sql on the analysed .db                  (the largest objects, by the heapx_result_retained index)
#   6. sql SNAPSHOT from scratch                (heapx sql's cached copy: read, analyse, write)
#
# Usage: bench/sqlite.sh SNAPSHOT [HEAPX_BINARY]
#   HEAPX_BINARY  default $HEAPX, else a fresh `go build` of ./cmd/heapx into the output dir.
# Environment:
#   OUT_DIR   where the files and time logs go (default: a new temp dir, printed; removed unless KEEP=1)
#   NO_HEADER=1 omit the table header
# The load average is printed before and after each step: on a shared machine, say it with the numbers.
set -euo pipefail

SNAP=${1:?usage: bench/sqlite.sh SNAPSHOT [HEAPX_BINARY]}
OUT_DIR=${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/heapx-sqlite.XXXXXX")}
mkdir -p "$OUT_DIR"
HEAPX=${2:-${HEAPX:-}}
if [[ -z $HEAPX ]]; then
  HEAPX="$OUT_DIR/heapx"
  (cd "$(dirname "$0")/.." && go build -o "$HEAPX" ./cmd/heapx)
fi
TIME=/usr/bin/time
[[ -x $TIME ]] || { echo "need GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
[[ -f $SNAP ]] || { echo "no such snapshot: $SNAP" >&2; exit 1; }
echo "outputs and time logs: $OUT_DIR" >&2
base=$(basename "$SNAP"); base=${base%.gz}; base=${base%.heapsnapshot}
db="$OUT_DIR/$base.db"
adb="$OUT_DIR/$base.analysed.db"

# rows: the rows a .db holds in its big tables (for rows/s).
rows=""

# run LABEL OUTPUT CMD...: times CMD and prints a table row; OUTPUT is a file whose size is reported ("-": none).
run() {
  local label=$1 out=$2; shift 2
  local log="$OUT_DIR/time.txt"
  echo "== $label (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  "$TIME" -v -o "$log" "$@" > "$OUT_DIR/stdout.txt"
  local outsz=0
  [[ $out == - ]] || outsz=$(stat -L -c %s "$out")
  awk -v label="$label" -v outsz="$outsz" -v rows="${rows:-0}" '
    /Elapsed \(wall clock\) time/ {
      t = $NF; n = split(t, p, ":"); s = 0
      for (i = 1; i <= n; i++) s = s * 60 + p[i]
      wall = s
    }
    /User time/ { user = $NF }
    /System time/ { sys = $NF }
    /Maximum resident set size/ { rss = $NF / 1024 }
    END {
      size = outsz > 0 ? sprintf("%.0f", outsz / 1e6) : ""
      rate = rows > 0 ? sprintf("%.2f", rows / wall / 1e6) : ""
      printf "| %s | %.2f | %.2f | %.0f | %s | %s |\n", label, wall, user + sys, rss, size, rate
    }
  ' "$log"
}

[[ ${NO_HEADER:-} == 1 ]] || {
  echo "| step | wall s | cpu s | peak RSS MB | out MB | M rows/s |"
  echo "|---|---:|---:|---:|---:|---:|"
}
rm -f "$db" "$adb"
rows=$("$HEAPX" info --json "$SNAP" | awk -F'[:,]' '/"(node|edge|string|location)_count"/ { n += $2 } END { print n }')
echo "rows in strings + node + edge + v8_location: $rows" >&2
run "convert → .db" "$db" "$HEAPX" convert "$SNAP" "$db"
run "convert --analyze → .db" "$adb" "$HEAPX" convert --analyze "$SNAP" "$adb"
run ".db → .heapsnapshot" "$OUT_DIR/$base.back.heapsnapshot" "$HEAPX" convert "$db" "$OUT_DIR/$base.back.heapsnapshot"
if [[ $SNAP == *.gz ]]; then orig() { gzip -dc "$SNAP"; }; else orig() { cat "$SNAP"; }; fi
orig | cmp -s - "$OUT_DIR/$base.back.heapsnapshot" && echo "V8 -> .db -> V8: identical to the input" >&2 \
  || echo "V8 -> .db -> V8: DIFFERS from the input" >&2
rows=""
run "summary on the snapshot" - "$HEAPX" summary --json "$SNAP"
run "summary on the analysed .db" - "$HEAPX" summary --json "$adb"
run "sql: 10 largest objects (.db)" - "$HEAPX" sql "$adb" \
  'SELECT identifier, name, type, retained_size FROM nodes_full WHERE dominator IS NOT NULL ORDER BY retained_size DESC LIMIT 10'
# heapx sql caches beside its input: query a link to SNAPSHOT in OUT_DIR, so the cache lands there.
link="$OUT_DIR/$(basename "$SNAP")"
ln -sf "$(realpath "$SNAP")" "$link"
rm -f "$link.heapx.db"
run "sql on the snapshot, no cache yet" "$link.heapx.db" "$HEAPX" sql "$link" 'SELECT count(*) FROM node'
run "sql on the snapshot, cached" - "$HEAPX" sql "$link" 'SELECT count(*) FROM node'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
[[ ${KEEP:-} == 1 ]] || rm -rf "$OUT_DIR"
