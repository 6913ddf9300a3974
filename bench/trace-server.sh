#!/usr/bin/env bash
# heapx trace on a server (docs/benchmarks.md, "heapx trace on a server"):
# bench/trace/server.js under bench/trace/load.js's keep-alive requests,
# untraced for PLAIN seconds, traced for TRACED seconds, untraced again;
# requests per second of each, the resident memory of node and of heapx
# every PERIOD seconds of the traced run and their peaks (VmHWM), the
# trace's size, the time from Ctrl-C (SIGINT to the process group) to the
# finished file, and, with ANALYZE=1, what heapx lifetimes then costs (CPU
# seconds, peak RSS). RATE=N paces the load at N requests a second.
#
#   [RATE=N] [ANALYZE=1] bench/trace-server.sh [HEAPX] [TRACED] [PLAIN] [PERIOD]
#
# The trace goes to OUT (default /work/big/tracer-servers/server.hxtrace:
# several GB for minutes of load) and is deleted at the end.
set -euo pipefail
HEAPX=${1:-/tmp/heapx}
TRACED=${2:-300}
PLAIN=${3:-60}
PERIOD=${4:-30}
DIR=$(cd "$(dirname "$0")" && pwd)/trace
OUT=${OUT:-/work/big/tracer-servers/server.hxtrace}
CONNECTIONS=${CONNECTIONS:-8}
mkdir -p "$(dirname "$OUT")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$OUT"' EXIT

rss() { awk -v k="$2:" '$1 == k {printf "%.0f", $2 / 1024}' "/proc/$1/status" 2>/dev/null || echo 0; }
# cpu is the CPU seconds process $1 used so far.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$1/stat"; }
# perreq prints "N req/s, M µs of CPU a request" from load.js's last line
# and a process's CPU seconds.
perreq() { awk -v c="$2" '/^total/ {printf "%s req/s, %.0f µs of %s CPU a request", $6, c * 1e6 / $2, ENVIRON["WHO"]}' <<<"$1"; }
# listen waits for the server's "listening PORT PID" line in file $1.
listen() { for _ in $(seq 600); do grep -q '^listening' "$1" 2>/dev/null && break; sleep 0.1; done; awk '/^listening/ {print $2, $3}' "$1"; }

plain() {
  node "$DIR/server.js" >"$tmp/plain.out" &
  local pid=$!
  read -r port _ < <(listen "$tmp/plain.out")
  local out
  out=$(node "$DIR/load.js" "$port" "$PLAIN" "$CONNECTIONS" "$PLAIN" | tail -1)
  echo "  $out"
  echo "  $(WHO=node perreq "$out" "$(cpu "$pid")"); node peak RSS $(rss "$pid" VmHWM) MB"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "untraced, $PLAIN s:"
plain
echo "traced, $TRACED s:"
setsid "$HEAPX" trace -o "$OUT" -- node "$DIR/server.js" >"$tmp/traced.out" 2>"$tmp/traced.err" &
heapx=$!
read -r port node < <(listen "$tmp/traced.out")
start=$(date +%s)
(
  while kill -0 "$node" 2>/dev/null; do
    sleep "$PERIOD"
    kill -0 "$node" 2>/dev/null || break
    size=$(stat -c %s "$(dirname "$OUT")"/."$(basename "$OUT")"* 2>/dev/null | head -1)
    echo "  $(( $(date +%s) - start )) s: node RSS $(rss "$node" VmRSS) MB, heapx RSS $(rss "$heapx" VmRSS) MB, trace $(( size / 1000000 )) MB"
  done
) &
sampler=$!
node "$DIR/load.js" "$port" "$TRACED" "$CONNECTIONS" "$PERIOD" | tee "$tmp/load" | sed 's/^/  /'
out=$(tail -1 "$tmp/load")
echo "  $(WHO=node perreq "$out" "$(cpu "$node")"); $(WHO=heapx perreq "$out" "$(cpu "$heapx")" | sed 's/.*req\/s, //')"
echo "  peaks: node $(rss "$node" VmHWM) MB, heapx $(rss "$heapx" VmHWM) MB"
stopped=$(date +%s.%N)
kill -INT -- -"$heapx"
wait "$heapx" || true
kill "$sampler" 2>/dev/null || true
echo "  Ctrl-C to the finished trace: $(echo "$(date +%s.%N) - $stopped" | bc) s; $(cat "$tmp/traced.err")"
echo "  trace: $(( $(stat -c %s "$OUT") / 1000000 )) MB"
echo "untraced again, $PLAIN s:"
plain
[[ ${ANALYZE:-} == 1 ]] || exit 0
echo "heapx lifetimes of the trace:"
/usr/bin/time -f '  %U+%S CPU s, %e s, peak RSS %M KB' "$HEAPX" lifetimes -n 5 "$OUT" 2>&1 | grep -E 'Trace:|found|CPU s'
