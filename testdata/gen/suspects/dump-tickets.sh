#!/bin/bash
# Run TicketStore with N tickets, dump its heap with jcmd (live objects, gzip level 6), then
# stop that JVM (by its pid only).   dump-tickets.sh OUT.hprof.gz [N]
set -euo pipefail
out=$(realpath -m "$1") n=${2:-12000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
javac -d "$work" "$here/TicketStore.java"
java -Xmx128m -cp "$work" TicketStore "$n" "$work/ready" > "$work/stdout.txt" 2>&1 &
jpid=$!
for i in $(seq 1 120); do [ -s "$work/ready" ] && break; sleep 0.5; done
[ -s "$work/ready" ] || { echo "TicketStore did not become ready"; kill $jpid; exit 1; }
rm -f "$out"
jcmd "$jpid" GC.heap_dump -gz=6 "$out"
kill "$jpid"; wait "$jpid" 2>/dev/null || true
cat "$work/stdout.txt"
rm -rf "$work"
ls -l "$out"
