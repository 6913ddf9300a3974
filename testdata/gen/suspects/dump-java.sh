#!/bin/bash
# Compile and run one of the Java programs here with its arguments, dump its heap with jcmd (live objects, gzip
# level 6) once it says it is ready, then stop that JVM (by its pid only).
#   dump-java.sh PROGRAM.java OUT.hprof.gz [ARG...]
# The program is run as `java -Xmx128m PROGRAM ARG... READY_FILE`: it writes its pid to READY_FILE when its heap is
# built, then sleeps.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(realpath "$1") out=$(realpath -m "$2")
shift 2
class=$(basename "$src" .java)
work=$(mktemp -d)
javac -d "$work" "$src"
java -Xmx128m -cp "$work" "$class" "$@" "$work/ready" > "$work/stdout.txt" 2>&1 &
jpid=$!
for i in $(seq 1 120); do [ -s "$work/ready" ] && break; sleep 0.5; done
[ -s "$work/ready" ] || { echo "$class did not become ready"; kill $jpid; exit 1; }
rm -f "$out"
jcmd "$jpid" GC.heap_dump -gz=6 "$out"
kill "$jpid"; wait "$jpid" 2>/dev/null || true
cat "$work/stdout.txt"
rm -rf "$work"
ls -l "$out"
