#!/usr/bin/env bash
# Writes the goldens of render's tests: what heapx prints for one real
# dump, first written before rendering moved into package render (commit
# 490c05b) and written again when what a query says changes on purpose
# (review the diff), so the tests hold render to the released output
# byte for byte. Run from render/: testdata/make.sh HEAPX
set -euo pipefail
heapx=$1
f=../testdata/node-leak-3.heapsnapshot.gz
for form in text csv json; do
  flag=--$form; ext=$form
  [[ $form == text ]] && flag= && ext=txt
  "$heapx" suspects $flag "$f" >testdata/node-leak-3.suspects.$ext
  "$heapx" merged-paths --class LeakedItem $flag "$f" >testdata/node-leak-3.merged-paths.$ext
done
"$heapx" summary -n 5 --json "$f" >testdata/node-leak-3.summary.json
"$heapx" paths --id 80593 --json "$f" >testdata/node-leak-3.paths.json
# The HTML fragments are the report page's parts, between the part's
# title and the end of its section.
"$heapx" report --html - "$f" >/tmp/render-golden-page.html
for part in suspects classes; do
  sed -n "/<section class=\"part\" id=\"$part\">/,/^<\/section>/p" /tmp/render-golden-page.html | sed '1,2d;$d' >testdata/node-leak-3.$part.html
done
rm /tmp/render-golden-page.html
