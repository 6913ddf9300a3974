#!/bin/bash
# Make the leak-suspects fixtures in testdata/suspects (see testdata/gen/README.md, "Leak-suspects fixtures").
#   testdata/gen/suspects/make-fixtures.sh CORPUS_GEN_DIR [OUT_DIR]
# CORPUS_GEN_DIR is shared/corpus/gen (its chromium-heapsnapshot.js and pages/big.html); OUT_DIR defaults to
# testdata/suspects. Needs chromium, node 20 and npm (registry reachable), javac/java/jcmd 17. Work happens in a
# fresh temporary directory, which is removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$1" && pwd)
out=$(realpath -m "${2:-$here/../../suspects}")
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. Chromium, the corpus's "libs page": React, lodash, d3, jQuery, moment, 1000 LeakyEvent and 20 detached
#    <section> trees, after a GC (shared/corpus/MANIFEST.md, section 3).
cp -r "$corpus" "$work/gen" && chmod -R u+w "$work/gen"
(cd "$work/gen" && npm install --no-audit --no-fund >/dev/null)
mkdir -p /tmp/heapx-corpus   # chromium-heapsnapshot.js makes its browser profiles there
(cd "$work/gen" && node chromium-heapsnapshot.js "$work/chromium-libs-page.heapsnapshot" "big.html?n=200&leak=1000" --gc)
gzip -9 -n -c "$work/chromium-libs-page.heapsnapshot" > "$out/chromium-libs-page.heapsnapshot.gz"

# 2. Node.js linting 325 files with ESLint 9 (a copy of ESLint's own lib/linter and lib/rules): no leak.
mkdir -p "$work/eslint" && cd "$work/eslint"
npm init -y >/dev/null && npm install --no-audit --no-fund eslint@9.39.5 >/dev/null
cp -r node_modules/eslint/lib src
NODE_PATH="$work/eslint/node_modules" node "$here/eslint-heap.js" "$work/node-eslint.heapsnapshot" src/linter src/rules
gzip -9 -n -c "$work/node-eslint.heapsnapshot" > "$out/node-eslint.heapsnapshot.gz"

# 3. Java: 12,000 tickets in a static HashMap, dumped with jcmd GC.heap_dump -gz=6.
"$here/dump-java.sh" "$here/TicketStore.java" "$out/java-tickets.hprof.gz" 12000

# 4. Java: three linked structures of 20,000 each (a LinkedList, a list of the program's own Job objects linked by
#    .next, a ConcurrentLinkedQueue), dumped the same way.
"$here/dump-java.sh" "$here/LinkedStore.java" "$out/java-linked.hprof.gz" 20000 20000 20000

# 5. Node.js: the final snapshot of bench/gen-linkedlist.js --alternate 20k, a leaked list of Item and Link in turn
#    held by its head (the files of the list of one class are testdata/node-list-20k-*).
node "$here/../../../bench/gen-linkedlist.js" "$work/altlist" 20k --gzip --alternate
cp "$work/altlist/node-altlist-20k-3-final.heapsnapshot.gz" "$out/node-altlist-20k.heapsnapshot.gz"
chmod 644 "$out"/*.gz
ls -l "$out"
