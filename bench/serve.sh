#!/usr/bin/env bash
# Start-up time and memory of heapx serve on a dump, after a walk through the views a user clicks.
#
# Usage: [CLASS=Request] bench/serve.sh HEAPX FILE [PORT=18777]
#   Starts `HEAPX serve FILE --no-browser` under /usr/bin/time -v, waits for the address it prints, asks the API what
#   the page asks as a user clicks (session, report, classes, the instances of CLASS, default synthetic.js's leak,
#   Request, or else the first class, one of them with its retainers and paths, the dominator tree), prints the time
#   of each request (network included), then runs the
#   suspects and duplicates queries and stops it with Ctrl-C. Prints the peak and current RSS when ready, after the
#   clicks and after the queries, the CPU time to ready, and /usr/bin/time's totals.
set -euo pipefail
HEAPX=$1 FILE=$2 PORT=${3:-18777}
out=$(mktemp) err=$(mktemp)
start=$(date +%s.%N)
/usr/bin/time -v "$HEAPX" serve "$FILE" --no-browser --http "127.0.0.1:$PORT" > "$out" 2> "$err" &
tpid=$!
pid=
# On any exit, heapx is stopped (by its id) and the files removed.
trap '[[ -n $pid ]] && kill -INT "$pid" 2> /dev/null; wait "$tpid" 2> /dev/null; rm -f "$out" "$err"' EXIT
until grep -q serving "$out"; do
  if ! kill -0 "$tpid" 2> /dev/null; then cat "$err" >&2; exit 1; fi
  sleep 0.5
done
pid=$(pgrep -P "$tpid")
echo "ready after $(echo "$(date +%s.%N) - $start" | bc) s"
read -r -a st < "/proc/$pid/stat"
echo "CPU to ready: $(echo "scale=2; (${st[13]} + ${st[14]}) / $(getconf CLK_TCK)" | bc) s"
mem() { echo "$(grep -E 'VmHWM|VmRSS' "/proc/$pid/status" | tr -s ' \t\n' ' ') ($1)"; }
mem ready
B=http://127.0.0.1:$PORT/api/v1
ask() { curl -s -o /dev/null -w "%{http_code} %{time_total} s  $1\n" "$B/$1"; }
json() { curl -s "$B/$1" | python3 -c "import json,sys; print(json.load(sys.stdin)$2)"; }
ask session; ask report; ask classes; ask "classes?sort=count"
cls=$(json "classes?filter=${CLASS:-Request}&limit=1" '["classes"][0]["index"]' 2> /dev/null || json "classes?limit=1" '["classes"][0]["index"]')
obj=$(json "classes/$cls/instances?offset=1000&limit=1" '["objects"][0]["id"]' 2> /dev/null || json "classes/$cls/instances?limit=1" '["objects"][0]["id"]')
ask "classes/$cls/instances"; ask "objects/$obj"; ask "objects/$obj/retainers"; ask "objects/$obj/paths?k=3"
ask "objects/$obj/paths?k=5"; ask "objects/root/children"; ask "objects/root/children/classes"
mem clicks
ask "queries/suspects?form=generic"; ask "queries/duplicates?form=generic"
mem queries
kill -INT "$pid"
pid=
wait "$tpid" || true
grep -E "Maximum resident|User time|System time|Elapsed" "$err"
