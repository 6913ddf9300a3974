#!/usr/bin/env node
// Compares heapx's numbers with Chrome DevTools' on one snapshot: the top 50
// objects by retained size (id, retained size) and the top 50 classes
// (count, shallow size, retained size), plus total size and class count.
// For snapshots too big to keep as test goldens (bench/gen-snapshots.sh).
//
// Usage: node bench/fidelity.mjs SNAPSHOT DEVTOOLS.json [HEAPX_BINARY]
//   DEVTOOLS.json is devtools-driver.mjs's output for SNAPSHOT (bench/compare.sh keeps it).
// Exits 1 on any difference.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [snap, dvPath, heapx = 'heapx'] = process.argv.slice(2);
if (!snap || !dvPath) {
  console.error('usage: node bench/fidelity.mjs SNAPSHOT DEVTOOLS.json [HEAPX_BINARY]');
  process.exit(2);
}
const run = (...args) => JSON.parse(execFileSync(heapx, args, { maxBuffer: 1 << 30 }).toString());
const dv = JSON.parse(readFileSync(dvPath, 'utf8'));
const top = run('top', '--json', '-n', '50', snap);
const summary = run('summary', '--json', '-n', '0', snap);

let diffs = 0;
const diff = (what, want, got) => {
  diffs++;
  if (diffs <= 10) console.log(`${what}: DevTools ${JSON.stringify(want)}, heapx ${JSON.stringify(got)}`);
};
dv.top_nodes_by_retained_size.forEach((want, i) => {
  const got = top.nodes[i];
  if (!got || got.id !== want.id || got.retained_size !== want.retained_size) diff(`object #${i + 1}`, want, got);
});
const classes = new Map(summary.classes.map((c) => [c.key, c]));
for (const want of dv.top_constructors_by_retained_size) {
  const got = classes.get(want.key ?? ',' + want.name);
  if (!got || got.count !== want.count || got.shallow_size !== want.self_size || got.retained_size !== want.retained_size) {
    diff(`class ${want.name}`, want, got);
  }
}
if (summary.total_size !== dv.total_size_devtools) diff('total size', dv.total_size_devtools, summary.total_size);
if (summary.class_count !== dv.aggregate_class_count) diff('class count', dv.aggregate_class_count, summary.class_count);
console.log(`${snap}: ${dv.top_nodes_by_retained_size.length} objects, ${dv.top_constructors_by_retained_size.length} classes compared, ${diffs} differences`);
process.exit(diffs ? 1 : 0);
