#!/usr/bin/env bash
# Regenerates testdata/golden/ from testdata/*.heapsnapshot.gz and testdata/*.heaptimeline.gz with the reference tools
# (Chrome DevTools' heap snapshot worker and memlab, driven by the scripts in the peers dir).
#
# Usage: testdata/gen/make-goldens.sh PEERS_DIR [TESTDATA_DIR=testdata] [NAME...]
#   PEERS_DIR  a built copy of shared/peers (devtools-driver.mjs, devtools-bundle.mjs, memlab-driver.cjs,
#              node_modules), e.g. /tmp/heapx-peers; see shared/peers/README.md for the one-time setup.
#   NAME       fixture names without extension (default: every testdata/*.heapsnapshot.gz and *.heaptimeline.gz)
#
# For each fixture NAME it writes
#   golden/NAME.devtools.json             devtools-driver.mjs output
#   golden/NAME.devtools-nodes.bin.gz     devtools-driver.mjs --dump output, gzip -9 -n (only if < 3 MB gzipped)
#   golden/NAME.memlab.json               memlab-driver.cjs output
# The raw snapshots are unpacked into a temporary directory that is removed afterwards.
set -euo pipefail

PEERS=${1:?usage: make-goldens.sh PEERS_DIR [TESTDATA_DIR] [NAME...]}
PEERS=$(cd "$PEERS" && pwd)
TESTDATA=${2:-testdata}
shift $(( $# >= 2 ? 2 : 1 ))
GOLDEN="$TESTDATA/golden"
MAX_DUMP_GZ=$((3 * 1024 * 1024))
NODE=${NODE:-node}
NODE_FLAGS=(--max-old-space-size=16384)

for f in devtools-driver.mjs devtools-bundle.mjs memlab-driver.cjs; do
  [[ -f "$PEERS/$f" ]] || { echo "missing $PEERS/$f (run the peers setup first)" >&2; exit 1; }
done
mkdir -p "$GOLDEN"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/heapx-goldens.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

if (( $# )); then names=("$@"); else
  names=()
  for gz in "$TESTDATA"/*.heapsnapshot.gz "$TESTDATA"/*.heaptimeline.gz; do
    [[ -f "$gz" ]] || continue
    b=$(basename "$gz"); b=${b%.gz}; names+=("${b%.*}")
  done
fi

for name in "${names[@]}"; do
  ext=heapsnapshot
  [[ -f "$TESTDATA/$name.heapsnapshot.gz" ]] || ext=heaptimeline
  snap="$TMP/$name.$ext"
  gunzip -c "$TESTDATA/$name.$ext.gz" > "$snap"
  echo "== $name ($(stat -c %s "$snap") bytes)" >&2

  "$NODE" "${NODE_FLAGS[@]}" "$PEERS/devtools-driver.mjs" "$snap" "$GOLDEN/$name.devtools.json" --dump="$TMP/$name.bin"
  gzip -9 -n -c "$TMP/$name.bin" > "$TMP/$name.bin.gz"
  size=$(stat -c %s "$TMP/$name.bin.gz")
  if (( size < MAX_DUMP_GZ )); then
    mv "$TMP/$name.bin.gz" "$GOLDEN/$name.devtools-nodes.bin.gz"
  else
    echo "   per-node dump is $size bytes gzipped (>= $MAX_DUMP_GZ): not stored" >&2
    rm -f "$GOLDEN/$name.devtools-nodes.bin.gz"
  fi

  "$NODE" "${NODE_FLAGS[@]}" "$PEERS/memlab-driver.cjs" "$snap" "$GOLDEN/$name.memlab.json"
  rm -f "$snap" "$TMP/$name.bin" "$TMP/$name.bin.gz"
done
