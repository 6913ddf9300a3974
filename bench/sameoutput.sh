#!/usr/bin/env bash
# Runs every heapx command, in every output form, over the bundled dumps of
# each runtime and writes what it printed (and a hash of each converted
# file) to OUTDIR, one file per run. Two builds are the same to a user when
#
#     bench/sameoutput.sh /tmp/heapx-before /tmp/before
#     bench/sameoutput.sh /tmp/heapx-after  /tmp/after
#     diff -r /tmp/before /tmp/after
#
# prints nothing. Refactors that promise "no behaviour change" prove it so.
# Takes about two minutes on two cores.
set -uo pipefail

bin=$(realpath "$1")
out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
td=$here/testdata
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME ARGS...: the command's stdout, stderr and exit status.
run() {
  local name=$1
  shift
  (cd "$work" && "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"; echo "exit $?" >>"$out/$name.err")
  # Temp paths and timings differ from run to run.
  sed -E -i "s#$work#WORK#g; s#$here#HERE#g; s/[0-9.]+ s\b/T s/g" "$out/$name.out" "$out/$name.err"
  # Dumps hold paths of the machine that made them (a script's path in a V8 dump).
  sed -E -i 's#(/[A-Za-z0-9_.+-]+)+/testdata/#HERE/testdata/#g' "$out/$name.out" "$out/$name.err"
  sed -E -i 's/("[a-z_]*seconds": *)[0-9.e-]+/\1T/g' "$out/$name.out"
}

v8=$td/node-leak-3.heapsnapshot.gz
chrome=$td/chromium-small-page.heapsnapshot.gz
ff=$td/spidermonkey/ff-small-page.fxsnapshot
java=$td/hprof/java-ticketleak-3.hprof.gz
timeline=$td/node-timeline.heaptimeline.gz

declare -A files=([v8]=$v8 [chrome]=$chrome [ff]=$ff [java]=$java [timeline]=$timeline [basic]=$td/node-basic.heapsnapshot.gz)
for k in "${!files[@]}"; do
  f=${files[$k]}
  run "$k-info" info "$f"
  run "$k-info-json" info --json "$f"
  for c in summary top suspects closures collections detached duplicates globals shapes; do
    run "$k-$c" "$c" "$f"
    run "$k-$c-json" "$c" --json "$f"
    run "$k-$c-csv" "$c" --csv "$f"
  done
  run "$k-dominators" dominators "$f"
  run "$k-dominators-class" dominators --by-class --json "$f"
  run "$k-report" report "$f"
  run "$k-report-json" report --json "$f"
  run "$k-report-html" report --html - "$f"
  run "$k-sql" sql --cache "$work/cache.db" "$f" "select type, count(*), sum(self_size) from nodes_full group by type order by 1"
  rm -f "$work/cache.db"
  # The largest object's retainers, by the id top reports.
  id=$("$bin" top --json -n 1 "$f" | grep -o '"id": *[0-9]*' | head -1 | grep -o '[0-9]*$')
  run "$k-paths" paths --id "$id" "$f"
  run "$k-paths-json" paths --id "$id" --json "$f"
  for ext in heapsnapshot jsonl jsonl.gz db; do
    rm -f "$work/conv.$ext"
    run "$k-convert-$ext" convert "$f" "$work/conv.$ext"
    if [[ -f $work/conv.$ext ]]; then
      case $ext in
        db) "$bin" sql "$work/conv.$ext" "select * from nodes_full order by seq limit 200" 2>&1 | sed "s#$work#WORK#g" >"$out/$k-convert-db.rows" ;;
        jsonl.gz) gzip -dc "$work/conv.$ext" | sha256sum >"$out/$k-convert-$ext.sha256" ;;
        *) sha256sum <"$work/conv.$ext" >"$out/$k-convert-$ext.sha256" ;;
      esac
      run "$k-reopen-$ext" top --json "$work/conv.$ext"
    fi
  done
done
run v8-merged merged-paths --class LeakedItem "$v8"
run v8-diff diff "$td/node-leak-1.heapsnapshot.gz" "$v8"
run v8-diff-json diff --json "$td/node-leak-1.heapsnapshot.gz" "$v8"
run v8-growth growth "$td/node-leak-1.heapsnapshot.gz" "$td/node-leak-2.heapsnapshot.gz" "$v8"
run v8-leaks leaks "$td/node-leak-1.heapsnapshot.gz" "$td/node-leak-2.heapsnapshot.gz" "$v8"
run v8-leaks-json leaks --json "$td/node-leak-1.heapsnapshot.gz" "$td/node-leak-2.heapsnapshot.gz" "$v8"
run v8-report-series report "$v8" "$td/node-leak-1.heapsnapshot.gz" "$td/node-leak-2.heapsnapshot.gz"
run v8-report-series-json report --json "$v8" "$td/node-leak-1.heapsnapshot.gz" "$td/node-leak-2.heapsnapshot.gz"
j=$td/hprof/java-ticketleak
run java-leaks leaks "$j-1.hprof.gz" "$j-2.hprof.gz" "$j-3.hprof.gz"
run java-report-series report --json "$j-3.hprof.gz" "$j-1.hprof.gz" "$j-2.hprof.gz"
run ff-medium-summary summary --json "$td/spidermonkey/ff-medium-page.fxsnapshot"
# Errors a user meets.
run err-missing info "$work/no-such-file.heapsnapshot"
printf '{"snapshot":{"meta":' >"$work/cut.heapsnapshot"
run err-cut info "$work/cut.heapsnapshot"
head -c 20000 "$td/node-leak-1.heapsnapshot.gz" >"$work/cut.heapsnapshot.gz"
run err-cut-gz info "$work/cut.heapsnapshot.gz"
echo "wrote $(ls "$out" | wc -l) files to $out"
