#!/bin/bash
# Writes testdata/sessions/chromium-{separate,session}-{1,2,3}.heapsnapshot.gz: snapshots of ONE headless Chromium
# page (testdata/capture/sessions.html, which keeps 50 more Record objects every 100 ms and renames 400 elements),
#   separate-K: three `heapx capture --inspect` runs, each its own inspector session, so V8 numbers the objects
#               afresh in each (ids reused for other objects: heapx warns not_one_process and compares by class);
#   session-K:  one `heapx capture --inspect --every 2s --count 3` run, one session (ids follow objects).
#   testdata/gen/chromium-sessions.sh [OUT_DIR=testdata/sessions]
# Needs chromium and a heapx binary on PATH (go build -o /tmp/heapx ./cmd/heapx; PATH=/tmp:$PATH). Made with
# Chromium 156.0.8078.79 (V8 15.6.75.27).
set -euo pipefail
out=$(mkdir -p "${1:-testdata/sessions}" && cd "${1:-testdata/sessions}" && pwd)
page=$(cd "$(dirname "$0")/../capture" && pwd)/sessions.html
work=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --remote-debugging-port=0 --user-data-dir="$work/profile" \
  "file://$page" > "$work/chromium.log" 2>&1 &
browser=$!
trap 'kill $browser; wait $browser 2>/dev/null; rm -rf "$work"' EXIT
for i in $(seq 1 200); do [ -s "$work/profile/DevToolsActivePort" ] && break; sleep 0.1; done
endpoint=127.0.0.1:$(head -1 "$work/profile/DevToolsActivePort")
sleep 2
for k in 1 2 3; do
  heapx capture --inspect "$endpoint" --url sessions.html -o "$work/separate-$k.heapsnapshot"
  sleep 2
done
heapx capture --inspect "$endpoint" --url sessions.html --every 2s --count 3 -o "$work/session.heapsnapshot"
for f in "$work"/separate-?.heapsnapshot "$work"/session-?.heapsnapshot; do
  gzip -9 -n -c "$f" > "$out/chromium-$(basename "$f").gz"
done
ls -l "$out"
