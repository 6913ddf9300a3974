#!/usr/bin/env bash
# Fails if any tracked or staged file is 5 MB or larger (big snapshots belong outside git: bench/gen-snapshots.sh).
# Usage (repo root): testdata/gen/check-sizes.sh [LIMIT_BYTES=5000000]
set -euo pipefail
limit=${1:-5000000}
bad=0
while IFS= read -r -d '' f; do
  [[ -f $f ]] || continue
  size=$(stat -c %s "$f")
  if (( size >= limit )); then echo "too big for git: $f ($size bytes >= $limit)" >&2; bad=1; fi
done < <(git ls-files -z --cached)
total=$(git ls-files -z --cached -- testdata | xargs -0 -r stat -c %s | awk '{s+=$1} END {print s+0}')
echo "testdata tracked total: $total bytes" >&2
exit $bad
