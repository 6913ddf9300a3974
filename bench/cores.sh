#!/usr/bin/env bash
# Runs the known-state core tests (those built on internal/coretest: a core of
# testdata/gen/core-state.js made with gcore at test time) under every pinned
# official Node major, 18, 20, 22 and 24, and prints one markdown table row per
# major and package (pass/FAIL, wall seconds). The default `go test ./...` runs
# them under Node 20 only; this is the full matrix.
#
# Usage: bench/cores.sh [MAJOR...]        (default: 18 20 22 24)
# Environment:
#   CORE_TESTS      go test -run pattern for the packages below cmd/heapx
#                   (default: every test: they are all about cores)
#   CORE_CMD_TESTS  the same for ./cmd/heapx, whose other tests are not
#                   (default: the tests with Core or Stack in their name)
#   HEAPX_NODE_CACHE  where the node binaries fetched with npm pack are kept
#                     (default: the user cache dir's heapx/node)
# Each core is 0.5-1.4 GB, written under TMPDIR and deleted by its test.
# HEAPX_CORE_STRICT=1 makes a test that would skip (no gcore, no ptrace, no
# npm) fail, so a row says pass only when the core was made and read.
# The load average is printed before and after: say it with the numbers.
set -uo pipefail

cd "$(dirname "$0")/.."
majors=("$@")
[[ ${#majors[@]} -gt 0 ]] || majors=(18 20 22 24)
pattern=${CORE_TESTS:-.}
cmdPattern=${CORE_CMD_TESTS:-'^Test.*(Core|Stack)'}
command -v gcore >/dev/null || { echo "need gcore (apt-get install gdb)" >&2; exit 1; }

# The packages whose tests use coretest, found, not listed, so a new one is
# covered from the day it lands.
mapfile -t pkgs < <(grep -rl --include='*_test.go' '"github.com/heapx/heapx/internal/coretest"' . |
  xargs -r -n1 dirname | sort -u)
pkgs=(./internal/coretest "${pkgs[@]}")
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "| Node | package | result | wall s |"
echo "|---|---|---|---:|"
failed=0
for major in "${majors[@]}"; do
  for pkg in "${pkgs[@]}"; do
    log=$(mktemp)
    start=$(date +%s.%N)
    run=$pattern
    [[ $pkg == ./cmd/heapx ]] && run=$cmdPattern
    if HEAPX_CORE_NODE=$major HEAPX_CORE_STRICT=1 go test -count=1 -timeout 30m -run "$run" "$pkg" >"$log" 2>&1; then
      result=pass
    else
      result=FAIL
      failed=1
      sed 's/^/    /' "$log" >&2
    fi
    end=$(date +%s.%N)
    printf '| %s | %s | %s | %.1f |\n' "$major" "$pkg" "$result" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')"
    rm -f "$log"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit $failed
