#!/usr/bin/env node
// Writes real Node heap snapshots of a leaking linked list, memlab's way: a baseline, a target and a final snapshot
// of one process, for `heapx leaks BASELINE TARGET FINAL`, `report FINAL BASELINE TARGET`, `merged-paths` and
// `paths --id <tail>` on lists of 10k to 3M items (issue 12: paths to every item of a list cost K^2/2 steps).
// Big files are generated, never committed.
//
// Usage (Node v20.x):
//   node bench/gen-linkedlist.js [OUT_DIR=/tmp/heapx-bench/linkedlist] [SIZE...] [--gzip] [--alternate]
//     SIZE         items leaked, with an optional k or m suffix (default: 10k 20k 30k 1m 3m)
//     --gzip       write .heapsnapshot.gz (gzip -9 -n: no name, no timestamp) instead of .heapsnapshot
//     --alternate  items alternate two classes, Item and Link (same fields), and the files are named
//                  node-altlist-<SIZE>-* instead of node-list-<SIZE>-*: hops that repeat in pairs
//
// Each size runs in its own child process (`--child=SIZE OUT_DIR`), so the heaps are independent:
//   1. setup: `globalThis.list`, a singly linked list of `class Item { value; next }` held by its head alone,
//      gets WARM_ITEMS items; then node-list-<SIZE>-1-baseline.heapsnapshot
//   2. action: SIZE more items are appended (list.head -.next-> ... -.next-> the last item, whose shortest
//      retainer path runs through every item); then node-list-<SIZE>-2-target.heapsnapshot
//   3. back action: the view that appended them is closed, but nothing empties the list (the leak): a
//      scratch array of strings is made and dropped; then node-list-<SIZE>-3-final.heapsnapshot
// So SIZE Items are leaked: allocated between the baseline and the target, still alive in the final snapshot,
// each one dominating the rest of the list after it. Item values are small integers (no heap node), so the list
// is SIZE+WARM_ITEMS nodes long.
//
// Output: the snapshots and node-list-<SIZE>.json: {items, warm_items, head_id, first_leaked_id, tail_id, files, node,
// seconds}, the ids being V8's snapshot ids (as `heapx paths --id` takes them), read with the inspector's
// HeapProfiler.getHeapObjectId after the last snapshot (the ids are stable within the process). One JSON line per
// size goes to stdout. Memory: about 3 GB of RAM for 3m (V8 builds the whole snapshot before writing it).
'use strict';
const fs = require('fs');
const path = require('path');
const v8 = require('v8');
const {spawnSync} = require('child_process');

const WARM_ITEMS = 100; // items in the list before the baseline: not leaked, the list's first hops

function parseSize(s) {
  const m = /^(\d+)([km]?)$/i.exec(s);
  if (!m) throw new Error(`bad size ${JSON.stringify(s)}: want a count like 20000, 20k or 1m`);
  return Number(m[1]) * {'': 1, k: 1000, m: 1000000}[m[2].toLowerCase()];
}

function child(size, outDir, gzip, alternate) {
  const items = parseSize(size);
  const prefix = alternate ? 'node-altlist' : 'node-list';
  class Item {
    constructor(value) {
      this.value = value; // a small integer: no heap node of its own
      this.next = null;
    }
  }
  class Link {
    constructor(value) {
      this.value = value;
      this.next = null;
    }
  }
  // The list is its head alone: the way to an item is through every item before it.
  class List {
    constructor() {
      this.head = null;
    }
  }
  const started = Date.now();
  const files = [];
  const snapshot = (step) => {
    const file = path.join(outDir, `${prefix}-${size}-${step}.heapsnapshot`);
    v8.writeHeapSnapshot(file);
    files.push(file);
  };
  // Each step runs in a function of its own, so no stack slot of this one holds an item when a snapshot is
  // taken (an item on the stack would be a root, and a short way to it).
  const append = (count) => {
    let tail = null;
    for (let it = globalThis.list.head; it; it = it.next) tail = it;
    for (let i = 0; i < count; i++) {
      // With --alternate, a Link after every Item.
      const it = alternate && tail instanceof Item ? new Link(i % 1000) : new Item(i % 1000);
      if (tail) tail.next = it;
      else globalThis.list.head = it;
      tail = it;
    }
  };
  globalThis.list = new List();
  append(WARM_ITEMS);
  snapshot('1-baseline');
  append(items);
  snapshot('2-target');
  (function closeView() {
    const scratch = [];
    for (let i = 0; i < 1000; i++) scratch.push('row ' + i);
    return scratch.length;
  })();
  snapshot('3-final');

  // The ids, read after the last snapshot so the inspector's own objects are in none of them.
  const inspector = require('inspector');
  const session = new inspector.Session();
  session.connect();
  const idOf = (expr) => {
    let id;
    session.post('Runtime.evaluate', {expression: expr}, (err, r) => {
      if (err) throw err;
      session.post('HeapProfiler.getHeapObjectId', {objectId: r.result.objectId}, (err2, h) => {
        if (err2) throw err2;
        id = Number(h.heapSnapshotObjectId);
      });
    });
    if (id === undefined) throw new Error('inspector answered asynchronously');
    return id;
  };
  const nth = (n) => `(() => { let it = globalThis.list.head; for (let i = 0; i < ${n}; i++) it = it.next; return it; })()`;
  const ids = {head_id: idOf(nth(0)), first_leaked_id: idOf(nth(WARM_ITEMS)), tail_id: idOf(nth(WARM_ITEMS + items - 1))};
  session.disconnect();

  const out = [];
  for (const f of files) {
    if (!gzip) {
      out.push(f);
      continue;
    }
    const r = spawnSync('gzip', ['-9', '-n', '-f', f], {stdio: 'inherit'});
    if (r.status !== 0) throw new Error(`gzip ${f} failed`);
    out.push(f + '.gz');
  }
  const info = {items, warm_items: WARM_ITEMS, alternate, ...ids, files: out.map((f) => path.basename(f)),
    node: process.version, seconds: (Date.now() - started) / 1000};
  fs.writeFileSync(path.join(outDir, `${prefix}-${size}.json`), JSON.stringify(info, null, 1) + '\n');
  process.stdout.write(JSON.stringify(info) + '\n');
}

function main() {
  const args = process.argv.slice(2);
  const gzip = args.includes('--gzip');
  const alternate = args.includes('--alternate');
  const childArg = args.find((a) => a.startsWith('--child='));
  const rest = args.filter((a) => !a.startsWith('--'));
  if (childArg) {
    child(childArg.slice('--child='.length), rest[0], gzip, alternate);
    return;
  }
  const outDir = path.resolve(rest[0] || '/tmp/heapx-bench/linkedlist');
  const sizes = rest.length > 1 ? rest.slice(1) : ['10k', '20k', '30k', '1m', '3m'];
  sizes.forEach(parseSize); // fail on a bad size before the long part
  fs.mkdirSync(outDir, {recursive: true});
  for (const size of sizes) {
    const childArgs = ['--max-old-space-size=8192', __filename, `--child=${size}`, outDir];
    if (gzip) childArgs.push('--gzip');
    if (alternate) childArgs.push('--alternate');
    const r = spawnSync(process.execPath, childArgs, {stdio: 'inherit'});
    if (r.status !== 0) {
      console.error(`size ${size}: child exited with ${r.status ?? r.signal}`);
      process.exit(1);
    }
  }
}

main();
