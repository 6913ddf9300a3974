#!/bin/bash
# Writes testdata/hprof/java-threads.hprof.gz and, beside it, .stdout.txt (what the program says it holds): a heap dump of ThreadsDemo.java (threads whose frames hold known
# objects in their locals, two class loaders that each define Plugin, a third kept alive by a static cache).
#   testdata/gen/java-threads.sh [OUT_DIR=testdata/hprof]
# Needs a JDK (javac, java, jcmd); made with OpenJDK 17.0.15 (Debian 17.0.15+6-1~deb12u1).
set -euo pipefail
out=$(cd "${1:-testdata/hprof}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work/plugins" "$here/PluginSources.java"
javac -d "$work/app" "$here/ThreadsDemo.java"
mkfifo "$work/ctl"
java -Xmx64m -cp "$work/app" ThreadsDemo "$work/plugins" < "$work/ctl" > "$work/out.txt" 2>&1 &
jpid=$!
exec 3> "$work/ctl"   # the JVM waits for a line on stdin once ready
for i in $(seq 1 100); do grep -q "^ready" "$work/out.txt" && break; sleep 0.1; done
rm -f "$out/java-threads.hprof.gz"
jcmd "$jpid" GC.heap_dump -gz=9 "$out/java-threads.hprof.gz" > /dev/null
chmod 644 "$out/java-threads.hprof.gz"
echo >&3
exec 3>&-
wait "$jpid"
cp "$work/out.txt" "$out/java-threads.hprof.gz.stdout.txt"
cat "$work/out.txt"
ls -l "$out/java-threads.hprof.gz"
