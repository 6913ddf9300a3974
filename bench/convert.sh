#!/usr/bin/env bash
# Times `heapx convert` on one V8 snapshot: to .jsonl and .jsonl.gz, and each back to .heapsnapshot, and prints
# one markdown table row per conversion (wall seconds and peak RSS from /usr/bin/time -v, sizes, throughput
# over the input's size). It also checks that both round trips give back the original snapshot byte for byte.
#
# Usage: bench/convert.sh SNAPSHOT [HEAPX_BINARY]
#   HEAPX_BINARY  default $HEAPX, else a fresh `go build` of ./cmd/heapx into the output dir.
# Environment:
#   OUT_DIR   where the converted files and time logs go (default: a new temp dir, printed; removed unless KEEP=1)
#   RUNS      passes over the four conversions (default 1)
#   NO_HEADER=1 omit the table header
# The machine's load average is printed before and after each pass: on a shared machine, say it with the numbers.
set -euo pipefail

SNAP=${1:?usage: bench/convert.sh SNAPSHOT [HEAPX_BINARY]}
OUT_DIR=${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/heapx-convert.XXXXXX")}
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

base=$(basename "$SNAP"); base=${base%.heapsnapshot}

# run IN OUT: times heapx convert IN OUT, prints a table row.
run() {
  local in=$1 out=$2 log="$OUT_DIR/time.txt"
  rm -f "$out"
  "$TIME" -v -o "$log" "$HEAPX" convert "$in" "$out" > /dev/null
  local insz outsz
  insz=$(stat -L -c %s "$in"); outsz=$(stat -L -c %s "$out")
  awk -v from="$(basename "$in")" -v to="$(basename "$out")" -v insz="$insz" -v outsz="$outsz" '
    /Elapsed \(wall clock\) time/ {
      t = $NF; n = split(t, p, ":"); s = 0
      for (i = 1; i <= n; i++) s = s * 60 + p[i]
      wall = s
    }
    /User time/ { user = $NF }
    /System time/ { sys = $NF }
    /Maximum resident set size/ { rss = $NF / 1024 }
    END { printf "| %s → %s | %.0f | %.0f | %.2f | %.2f | %.0f | %.0f |\n", from, to, insz / 1e6, outsz / 1e6, wall, user + sys, rss, insz / 1e6 / wall }
  ' "$log"
}

[[ ${NO_HEADER:-} == 1 ]] || {
  echo "| conversion | in MB | out MB | wall s | cpu s | peak RSS MB | MB/s of input |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
}
for ((pass = 1; pass <= ${RUNS:-1}; pass++)); do
  echo "pass $pass, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  run "$SNAP" "$OUT_DIR/$base.jsonl"
  run "$SNAP" "$OUT_DIR/$base.jsonl.gz"
  run "$OUT_DIR/$base.jsonl" "$OUT_DIR/$base.from-jsonl.heapsnapshot"
  run "$OUT_DIR/$base.jsonl.gz" "$OUT_DIR/$base.from-gz.heapsnapshot"
  echo "pass $pass, load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  for f in "$OUT_DIR/$base.from-jsonl.heapsnapshot" "$OUT_DIR/$base.from-gz.heapsnapshot"; do
    cmp -s "$SNAP" "$f" && echo "$(basename "$f"): identical to the input" >&2 || echo "$(basename "$f"): DIFFERS from the input" >&2
  done
done
[[ ${KEEP:-} == 1 ]] || rm -rf "$OUT_DIR"
