#!/usr/bin/env bash
# What `heapx capture` costs the program it captures, measured with
# bench/capture-overhead.js (docs/benchmarks.md, "Capturing"):
#
#   * allocation tracking (--timeline) and sampling (--sampling) against the
#     plain program, on an allocation-heavy loop: CPU and wall time per
#     object allocated, rounds interleaved;
#   * a snapshot's pause: the longest gap of a 1 ms timer while heapx takes
#     one, against the same program left alone, for two heap sizes; and
#     heapx's own CPU seconds and peak RSS for it (/usr/bin/time -v).
#
#   bench/capture-overhead.sh [HEAPX] [ROUNDS]
set -euo pipefail
HEAPX=${1:-/tmp/heapx}
ROUNDS=${2:-5}
JS=$(cd "$(dirname "$0")" && pwd)/capture-overhead.js
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# Allocation cost: the loop's own CPU and wall time, per object.
N_PLAIN=2000000 N_TRACKED=200000
for r in $(seq "$ROUNDS"); do
  node "$JS" work $N_PLAIN >>"$tmp/plain"
  "$HEAPX" capture --sampling 600s -o "$tmp/s.heapprofile" -- node "$JS" work $N_PLAIN 2>>"$tmp/sampling" >/dev/null
  "$HEAPX" capture --timeline 600s -o "$tmp/t.heaptimeline" -- node "$JS" work $N_TRACKED 2>>"$tmp/timeline" >/dev/null
done
echo
echo "| mode | objects | rounds | CPU ns/object (median) | wall ns/object (median) | CPU × plain |"
echo "|---|---:|---:|---:|---:|---:|"
plain_cpu=$(field cpu_ms <"$tmp/plain" | median)
for mode in plain sampling timeline; do
  n=$N_PLAIN; [[ $mode == timeline ]] && n=$N_TRACKED
  cpu=$(field cpu_ms <"$tmp/$mode" | median)
  wall=$(field wall_ms <"$tmp/$mode" | median)
  awk -v m="$mode" -v n="$n" -v r="$ROUNDS" -v c="$cpu" -v w="$wall" -v pc="$plain_cpu" -v pn="$N_PLAIN" \
    'BEGIN {printf "| %s | %d | %d | %.0f | %.0f | %.1f× |\n", m, n, r, c*1e6/n, w*1e6/n, (c/n)/(pc/pn)}'
done

# A snapshot's pause, and what heapx spends on it.
echo
echo "| heap | snapshot | longest timer gap, left alone (median) | longest gap with a snapshot (median) | heapx CPU s | heapx peak RSS |"
echo "|---|---:|---:|---:|---:|---:|"
for kept in 0 300000; do
  : >"$tmp/alone" ; : >"$tmp/snap" ; : >"$tmp/cpu" ; : >"$tmp/rss"
  for r in $(seq "$ROUNDS"); do
    rm -f "$tmp/ready"
    node "$JS" pause $kept 4 "$tmp/ready" >>"$tmp/alone"
    rm -f "$tmp/ready"
    node --inspect=127.0.0.1:0 "$JS" pause $kept 6 "$tmp/ready" >>"$tmp/snap" 2>"$tmp/node.err" &
    node=$!
    until [[ -s $tmp/ready ]]; do sleep 0.05; done
    port=$(sed -n 's|.*ws://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/node.err" | head -1)
    /usr/bin/time -v "$HEAPX" capture --inspect "$port" -o "$tmp/p.heapsnapshot" >/dev/null 2>"$tmp/time"
    sed -n 's/.*User time (seconds): //p; s/.*System time (seconds): //p' "$tmp/time" | paste -sd+ | bc >>"$tmp/cpu"
    sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time" >>"$tmp/rss"
    size=$(stat -c %s "$tmp/p.heapsnapshot")
    wait $node
  done
  awk -v k="$kept" -v s="$size" -v a="$(field max_gap_ms <"$tmp/alone" | median)" -v g="$(field max_gap_ms <"$tmp/snap" | median)" \
    -v c="$(median <"$tmp/cpu")" -v m="$(median <"$tmp/rss")" \
    'BEGIN {printf "| %s objects kept | %.1f MB | %d ms | %d ms | %.2f | %.0f MB |\n", k, s/1e6, a, g, c, m/1024}'
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
