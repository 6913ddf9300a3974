#!/usr/bin/env bash
# heapx against Chrome DevTools' own heap snapshot worker on the synthetic snapshots, as ratios: wall time,
# peak memory, CPU seconds per GB, and heapx report's and serve's memory against summary's (issue 28's targets).
#
# Usage: bench/ratios.sh [DIR=/tmp/heapx-bench] [SIZE...]
#   SIZE is one of 300mb 1gb 3500mb (default: all three); a missing snapshot is made first with
#   bench/gen-snapshots.sh (3500mb: about 6 minutes and 17.7 GB of node's memory, refused below 19 GB available).
# Environment:
#   HEAPX    the heapx binary (default: built from this tree into DIR/heapx)
#   PEERS    the reference tools, set up as shared/peers/README.md says (default /tmp/heapx-peers)
#   RUNS     heapx summary runs per size, interleaved with nothing else (default 3); the table shows the fastest
#            and the median. DevTools' worker runs once per size (3500mb: about 3 minutes on a quiet machine and
#            12.8 GB, so it is refused below 14 GB available).
#   REUSE_DEVTOOLS=1  take DevTools' numbers from an earlier run's DIR/ratios/<snapshot>.devtools.time.txt when
#            there is one, instead of running it again (the table says so).
#   NO_SERVE=1  skip heapx serve.
# Each run's /usr/bin/time -v log is kept in DIR/ratios/. The page cache is warmed before each snapshot's runs
# (heapx reads the file twice as fast from memory as the disk gives it here), and the 1-minute load average
# before each run is printed: on a shared machine the wall times are upper bounds, CPU seconds are steadier.
set -euo pipefail

DIR=${1:-/tmp/heapx-bench}
(( $# )) && shift
sizes=("$@"); (( ${#sizes[@]} )) || sizes=(300mb 1gb 3500mb)
here=$(cd "$(dirname "$0")/.." && pwd)
PEERS=${PEERS:-/tmp/heapx-peers}
RUNS=${RUNS:-3}
OUT=$DIR/ratios
mkdir -p "$OUT"
TIME=/usr/bin/time
[[ -x $TIME ]] || { echo "need GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
[[ -f $PEERS/devtools-driver.mjs ]] || { echo "no DevTools driver in $PEERS: see shared/peers/README.md" >&2; exit 1; }
if [[ -z ${HEAPX:-} ]]; then
  (cd "$here" && go build -o "$DIR/heapx" ./cmd/heapx)
  HEAPX=$DIR/heapx
fi

load() { cut -d' ' -f1 /proc/loadavg; }
avail_gb() { awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo; }
# field LOG NAME: a number from a /usr/bin/time -v log (wall in seconds, CPU = user + system, peak RSS in kB).
field() {
  awk -v want="$2" '
    /Elapsed \(wall clock\) time/ { n = split($NF, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
    /User time/ { user = $NF } /System time/ { sys = $NF } /Maximum resident set size/ { rss = $NF }
    END { if (want == "wall") print wall; else if (want == "cpu") printf "%.2f\n", user + sys; else print rss }' "$1"
}
# timed NAME CMD...: runs CMD under /usr/bin/time -v into $OUT/NAME.time.txt, its stdout to $OUT/NAME.out.
timed() {
  local name=$1; shift
  "$TIME" -v -o "$OUT/$name.time.txt" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
}
# serve_ready NAME SNAPSHOT: starts heapx serve, waits until it serves, stops it with Ctrl-C; the log is
# /usr/bin/time's, so its peak RSS is the peak up to ready.
serve_ready() {
  local name=$1 snap=$2 port=$((20000 + RANDOM % 20000))
  "$TIME" -v -o "$OUT/$name.time.txt" "$HEAPX" serve "$snap" --no-browser --http "127.0.0.1:$port" > "$OUT/$name.out" 2> "$OUT/$name.err" &
  local tpid=$! pid=""
  until grep -q serving "$OUT/$name.out" 2> /dev/null; do
    kill -0 "$tpid" 2> /dev/null || { cat "$OUT/$name.err" >&2; return 1; }
    sleep 0.2
  done
  pid=$(pgrep -P "$tpid")
  kill -INT "$pid"
  wait "$tpid" || true
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

echo "| snapshot | DevTools wall s | DevTools CPU s | DevTools peak RSS MB | heapx summary wall s (best / median of $RUNS) | heapx CPU s | heapx peak RSS MB | wall ratio | memory ratio | heapx CPU s per GB | report / summary RSS | serve (ready) / summary RSS | load |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for s in "${sizes[@]}"; do
  snap=$DIR/synth-$s.heapsnapshot
  [[ -f $snap ]] || "$here/bench/gen-snapshots.sh" "$DIR" "$s" >&2
  base=synth-$s
  gb=$(awk -v b="$(stat -L -c %s "$snap")" 'BEGIN { printf "%.3f", b / 1e9 }')
  cat "$snap" > /dev/null # the page cache
  loads=()
  for i in $(seq "$RUNS"); do
    loads+=("$(load)")
    timed "$base.summary.$i" "$HEAPX" summary --json "$snap"
  done
  walls=$(for i in $(seq "$RUNS"); do field "$OUT/$base.summary.$i.time.txt" wall; done)
  cpus=$(for i in $(seq "$RUNS"); do field "$OUT/$base.summary.$i.time.txt" cpu; done)
  rss=$(for i in $(seq "$RUNS"); do field "$OUT/$base.summary.$i.time.txt" rss; done | sort -g | tail -1)
  best=$(sort -g <<< "$walls" | head -1) med=$(median <<< "$walls") cpu=$(median <<< "$cpus")
  loads+=("$(load)")
  timed "$base.report" "$HEAPX" report "$snap"
  report=$(field "$OUT/$base.report.time.txt" rss)
  serve=""
  if [[ ${NO_SERVE:-} != 1 ]]; then
    loads+=("$(load)")
    serve_ready "$base.serve" "$snap"
    serve=$(field "$OUT/$base.serve.time.txt" rss)
  fi
  dt="$OUT/$base.devtools.time.txt" reused=""
  if [[ ${REUSE_DEVTOOLS:-} == 1 && -s $dt ]]; then
    reused=" (earlier run)"
  else
    if [[ $s == 3500mb ]] && (( $(avail_gb) < 14 )); then
      echo "DevTools on $base needs about 14 GB available, $(avail_gb) GB are: skipped" >&2
      continue
    fi
    loads+=("$(load)")
    timed "$base.devtools" node --max-old-space-size=16384 "$PEERS/devtools-driver.mjs" "$snap" "$OUT/$base.devtools.json"
  fi
  dwall=$(field "$dt" wall) dcpu=$(field "$dt" cpu) drss=$(field "$dt" rss)
  awk -v snap="$base" -v dwall="$dwall" -v dcpu="$dcpu" -v drss="$drss" -v best="$best" -v med="$med" -v cpu="$cpu" \
    -v rss="$rss" -v gb="$gb" -v report="$report" -v serve="$serve" -v loads="${loads[*]}" -v reused="$reused" 'BEGIN {
    printf "| %s | %.1f%s | %.1f | %.0f | %.2f / %.2f | %.2f | %.0f | %.1fx / %.1fx | %.3fx | %.2f | %.2f | %s | %s |\n",
      snap, dwall, reused, dcpu, drss / 1000, best, med, cpu, rss / 1000, dwall / best, dwall / med, rss / drss,
      cpu / gb, report / rss, (serve == "" ? "-" : sprintf("%.2f", serve / rss)), loads }'
done
