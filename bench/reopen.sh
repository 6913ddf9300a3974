#!/usr/bin/env bash
# Times `heapx summary` on a V8 snapshot (read and analyse) against its analysed copies (`convert --analyze` to .db,
# .jsonl.gz and .jsonl: read the stored results), with hyperfine, and checks that every copy answers exactly as the
# snapshot does (the JSON output, but for "file").
#
# Usage: bench/reopen.sh SNAPSHOT [HEAPX_BINARY]
#   HEAPX_BINARY  default $HEAPX, else a fresh `go build` of ./cmd/heapx into the output dir.
# Environment:
#   OUT_DIR   where the analysed copies go (default: a new temp dir, printed; removed unless KEEP=1). Copies already
#             there are reused, so a second run with the same OUT_DIR and KEEP=1 times the reads only.
#   RUNS      hyperfine runs per file (default 5, after one warm-up run)
# Prints hyperfine's table (markdown, in seconds) and the load average before and after: on a shared machine, say it
# with the numbers, and compare files within one run only.
set -euo pipefail

SNAP=${1:?usage: bench/reopen.sh SNAPSHOT [HEAPX_BINARY]}
OUT_DIR=${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/heapx-reopen.XXXXXX")}
mkdir -p "$OUT_DIR"
HEAPX=${2:-${HEAPX:-}}
if [[ -z $HEAPX ]]; then
  HEAPX="$OUT_DIR/heapx"
  (cd "$(dirname "$0")/.." && go build -o "$HEAPX" ./cmd/heapx)
fi
command -v hyperfine >/dev/null || { echo "need hyperfine (apt-get install hyperfine)" >&2; exit 1; }
[[ -f $SNAP ]] || { echo "no such snapshot: $SNAP" >&2; exit 1; }
echo "analysed copies: $OUT_DIR" >&2

base=$(basename "$SNAP"); base=${base%.heapsnapshot}
files=("$SNAP")
for x in db jsonl.gz jsonl; do
  f="$OUT_DIR/$base.analysed.$x"
  [[ -s $f ]] || "$HEAPX" convert --analyze "$SNAP" "$f" >&2
  files+=("$f")
done

want=$("$HEAPX" summary --json -n 0 "$SNAP" | grep -v '"file"')
for f in "${files[@]:1}"; do
  [[ $("$HEAPX" summary --json -n 0 "$f" | grep -v '"file"') == "$want" ]] || { echo "$f: summary differs from the snapshot's" >&2; exit 1; }
done

cmds=()
for f in "${files[@]}"; do cmds+=("$HEAPX summary --json $f"); done
echo "load before: $(uptime)" >&2
hyperfine -N -w 1 -r "${RUNS:-5}" --export-markdown "$OUT_DIR/reopen.md" "${cmds[@]}" >&2
echo "load after: $(uptime)" >&2
cat "$OUT_DIR/reopen.md"
[[ ${KEEP:-} == 1 ]] || rm -rf "$OUT_DIR"
