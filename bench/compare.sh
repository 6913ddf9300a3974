#!/usr/bin/env bash
# Times heapx and the reference tools on one heap snapshot and prints one markdown table row per tool
# (wall seconds and peak RSS from /usr/bin/time -v).
#
# Usage: bench/compare.sh SNAPSHOT [HEAPX_COMMAND...]
#   HEAPX_COMMAND  the heapx command to time; SNAPSHOT is appended as its last argument.
#                  Default: $HEAPX, else "go run ./cmd/heapx info" (note: go run includes compile time;
#                  for real numbers build first: go build -o /tmp/heapx ./cmd/heapx && HEAPX="/tmp/heapx info").
# Environment:
#   PEERS     built reference tools dir (default /tmp/heapx-peers; see shared/peers/README.md)
#   TOOLS     which tools to run, space separated (default "heapx devtools memlab")
#   OUT_DIR   where the tools' JSON outputs and /usr/bin/time logs go (default: a new temp dir, printed)
#   NODE_FLAGS  flags for the reference drivers (default --max-old-space-size=16384)
#   NO_HEADER=1 omit the table header (to append rows from several runs)
# The DevTools and memlab outputs are kept as OUT_DIR/<snapshot>.devtools.json and .memlab.json.
set -euo pipefail

SNAP=${1:?usage: bench/compare.sh SNAPSHOT [HEAPX_COMMAND...]}
shift
if (( $# )); then HEAPX_CMD=("$@"); else read -r -a HEAPX_CMD <<< "${HEAPX:-go run ./cmd/heapx info}"; fi
PEERS=${PEERS:-/tmp/heapx-peers}
TOOLS=${TOOLS:-heapx devtools memlab}
read -r -a NODE_FLAGS_A <<< "${NODE_FLAGS:---max-old-space-size=16384}"
OUT_DIR=${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/heapx-compare.XXXXXX")}
mkdir -p "$OUT_DIR"
TIME=/usr/bin/time
[[ -x $TIME ]] || { echo "need GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
[[ -f $SNAP ]] || { echo "no such snapshot: $SNAP" >&2; exit 1; }

base=$(basename "$SNAP"); base=${base%.heapsnapshot}
mb=$(( $(stat -L -c %s "$SNAP") / 1000000 ))
echo "outputs and time logs: $OUT_DIR" >&2

# run TOOL CMD...: times CMD, prints a table row
run() {
  local tool=$1; shift
  local log="$OUT_DIR/$base.$tool.time.txt" status=0
  echo "== $tool: $*" >&2
  "$TIME" -v -o "$log" "$@" > "$OUT_DIR/$base.$tool.stdout.txt" 2> "$OUT_DIR/$base.$tool.stderr.txt" || status=$?
  awk -v tool="$tool" -v snap="$base" -v mb="$mb" -v status="$status" '
    /Elapsed \(wall clock\) time/ {
      t = $NF; n = split(t, p, ":"); s = 0
      for (i = 1; i <= n; i++) s = s * 60 + p[i]
      wall = s
    }
    /Maximum resident set size/ { rss = $NF / 1024 }
    END { printf "| %s (%d MB) | %s | %.1f | %.0f | %s |\n", snap, mb, tool, wall, rss, (status == 0 ? "ok" : "exit " status) }
  ' "$log"
}

[[ ${NO_HEADER:-} == 1 ]] || {
  echo "| snapshot | tool | wall s | peak RSS MB | status |"
  echo "|---|---|---:|---:|---|"
}
for tool in $TOOLS; do
  case $tool in
    heapx)    run heapx "${HEAPX_CMD[@]}" "$SNAP" ;;
    devtools) run devtools node "${NODE_FLAGS_A[@]}" "$PEERS/devtools-driver.mjs" "$SNAP" "$OUT_DIR/$base.devtools.json" ;;
    memlab)   run memlab node "${NODE_FLAGS_A[@]}" "$PEERS/memlab-driver.cjs" "$SNAP" "$OUT_DIR/$base.memlab.json" ;;
    *) echo "unknown tool $tool" >&2; exit 2 ;;
  esac
done
