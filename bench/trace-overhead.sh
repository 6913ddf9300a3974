#!/usr/bin/env bash
# What `heapx trace` costs the program it traces (docs/benchmarks.md,
# "heapx trace"): CPU seconds of each program plain and traced (heapx and
# node together, /usr/bin/time), runs interleaved, the median of ROUNDS;
# the slowdown, and the trace's size and bytes per traced CPU second.
#
#   bench/trace-overhead.sh [HEAPX] [ROUNDS]
#
# The parsers parse INPUT (default: @babel/parser's lib/index.js, 530 KB,
# from the reference tools at /tmp/heapx-peers); esprima is run only when
# ESPRIMA (default /tmp/heapx-peers/node_modules/esprima) exists, and is
# instrumented with --include (it is under node_modules).
set -euo pipefail
HEAPX=${1:-/tmp/heapx}
ROUNDS=${2:-3}
DIR=$(cd "$(dirname "$0")" && pwd)/trace
INPUT=${INPUT:-/tmp/heapx-peers/node_modules/@babel/parser/lib/index.js}
export ESPRIMA=${ESPRIMA:-/tmp/heapx-peers/node_modules/esprima}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cpu() { local out=$1; shift; /usr/bin/time -f '%U %S' -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }; awk '{print $1+$2}' "$tmp/t" >>"$out"; }

progs=("binarytrees.js 15" "nbody.js 300000" "richards.js 2000000" "acorn.mjs $INPUT 3")
[[ -d $ESPRIMA ]] && progs+=("esprima.js $INPUT 3")

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| program | plain CPU s | traced CPU s | slowdown | trace MB | trace MB per traced CPU s |"
echo "|---|---:|---:|---:|---:|---:|"
for p in "${progs[@]}"; do
  read -r file args <<<"$p"
  name=${file%.*}
  include=()
  [[ $name == esprima ]] && include=(--include "$ESPRIMA/**")
  for r in $(seq "$ROUNDS"); do
    cpu "$tmp/$name.plain" node "$DIR/$file" $args
    cpu "$tmp/$name.traced" "$HEAPX" trace -o "$tmp/$name.hxtrace" "${include[@]}" -- node "$DIR/$file" $args
    stat -c %s "$tmp/$name.hxtrace" >>"$tmp/$name.bytes"
    rm -f "$tmp/$name.hxtrace"
  done
  plain=$(median <"$tmp/$name.plain")
  traced=$(median <"$tmp/$name.traced")
  bytes=$(median <"$tmp/$name.bytes")
  awk -v n="$name $args" -v p="$plain" -v t="$traced" -v b="$bytes" 'BEGIN {
    sub(/ \/[^ ]*\//, " …/", n)
    printf "| %s | %.2f | %.2f | %.1fx | %.0f | %.0f |\n", n, p, t, t / p, b / 1e6, b / 1e6 / t }'
  echo "$plain $traced" >>"$tmp/ratios"
done
awk '{ s += log($2 / $1); a += $2 / $1; n++ } END { printf "\nslowdown: geometric mean %.1fx, arithmetic mean %.1fx over %d programs\n", exp(s / n), a / n, n }' "$tmp/ratios"
