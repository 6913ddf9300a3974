#!/usr/bin/env bash
# Writes the goldens of report's Write test: what heapx report prints, in
# each form, first written before rendering moved into package render
# (commit 490c05b) and again when what the report says changes on purpose
# (review the diff). series.*: three snapshots in order, with a
# gate that fails; reversed.*: the same given out of order, so the
# warnings show. Run from report/: testdata/make.sh HEAPX
set -uo pipefail
heapx=$1
t=../testdata
one=$t/node-leak-1.heapsnapshot.gz two=$t/node-leak-2.heapsnapshot.gz three=$t/node-leak-3.heapsnapshot.gz
for name in series reversed; do
  if [[ $name == series ]]; then args=(-n 3 --fail-over 1kB "$three" "$one" "$two"); else args=(-n 3 "$one" "$three" "$two"); fi
  "$heapx" report "${args[@]}" >testdata/$name.txt 2>/dev/null
  "$heapx" report --csv "${args[@]}" >testdata/$name.csv 2>/dev/null
  "$heapx" report --json "${args[@]}" >testdata/$name.json 2>/dev/null
  "$heapx" report --html - "${args[@]}" >testdata/$name.html 2>/dev/null
done
exit 0
