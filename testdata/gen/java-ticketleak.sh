#!/bin/bash
# Writes testdata/hprof/java-ticketleak-{1,2,3}.hprof.gz: three heap dumps of ONE JVM running TicketLeak.java,
# which keeps 2,000 more Ticket objects in a static list before each dump (2,000, 4,000, 6,000).
#   testdata/gen/java-ticketleak.sh [OUT_DIR=testdata/hprof]
# Needs a JDK (javac, java, jcmd); made with OpenJDK 17.0.15 (Debian 17.0.15+6-1~deb12u1).
set -euo pipefail
out=$(cd "${1:-testdata/hprof}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work" "$here/TicketLeak.java"
mkfifo "$work/ctl"
java -Xmx64m -cp "$work" TicketLeak < "$work/ctl" > "$work/out.txt" 2>&1 &
jpid=$!
exec 3> "$work/ctl"   # the JVM waits for a line on stdin between steps
for step in 1 2 3; do
  for i in $(seq 1 100); do grep -q "^step $step " "$work/out.txt" && break; sleep 0.1; done
  rm -f "$out/java-ticketleak-$step.hprof.gz"
  jcmd "$jpid" GC.heap_dump -gz=9 "$out/java-ticketleak-$step.hprof.gz" > /dev/null
  echo >&3
done
exec 3>&-             # end of input: TicketLeak returns
wait "$jpid"
cat "$work/out.txt"
ls -l "$out"/java-ticketleak-*.hprof.gz
