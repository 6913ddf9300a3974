#!/usr/bin/env node
// Writes the small REAL V8 heap snapshots used as heapx test fixtures, with Node's own
// v8.writeHeapSnapshot(). Every fixture (or fixture series) is produced in its own child process so the
// heaps are independent of each other and of this driver.
//
// Usage (from the repo root, Node v20.x; see testdata/gen/README.md):
//   node testdata/gen/make-fixtures.js [OUT_DIR=testdata] [--keep-raw=DIR] [--only=basic,leak,internals,trace]
//
// Output: OUT_DIR/<name>.heapsnapshot.gz (gzip -9 -n), one JSON line per fixture on stdout.
//   node-basic.heapsnapshot        default options
//   node-leak-{1,2,3}.heapsnapshot one process, LEAK_N LeakedItem objects leaked per step, snapshot after each step
//   node-internals.heapsnapshot    same workload as node-basic, {exposeInternals: true}
//   node-trace.heapsnapshot        same workload as node-basic, process started with --track-heap-objects
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const v8 = require('v8');
const {spawnSync} = require('child_process');

const LEAK_N = 500;      // LeakedItem objects leaked per step
const LEAK_STEPS = 3;    // snapshots node-leak-1..3, one after each step
const CUSTOMERS = 300;   // Customer instances in the basic workload
const ORDERS_PER_CUSTOMER = 3;

// ---------------------------------------------------------------------------------------------------------
// Child side: build a heap and write snapshot(s) into the directory given on the command line.
// ---------------------------------------------------------------------------------------------------------

// The "basic" workload: user classes, Map, Set, WeakMap, closures, every kind of string, typed arrays.
function buildBasicWorkload() {
  class Order {
    constructor(id, customer, amount) {
      this.id = id;
      this.customer = customer;        // back-reference: Customer <-> Order cycle
      this.amount = amount;            // heap number (non-integer)
      this.sku = 'SKU-' + (id % 97);   // short string
    }
  }
  class Customer {
    constructor(i) {
      this.id = i;
      this.name = 'customer_number_' + i;   // concatenated (cons) string: literal + number
      this.orders = [];
      for (let k = 0; k < ORDERS_PER_CUSTOMER; k++) {
        this.orders.push(new Order(i * ORDERS_PER_CUSTOMER + k, this, 9.99 * (k + 1) + i / 7));
      }
    }
  }
  // A class whose instances are only reachable as WeakMap values (so their dominator is the key).
  class CustomerNote {
    constructor(text) { this.text = text; this.createdAt = 1700000000000; }
  }

  const customers = [];
  for (let i = 0; i < CUSTOMERS; i++) customers.push(new Customer(i));

  // Map and Set
  const byId = new Map();
  for (const c of customers) byId.set(c.id, c);
  const tags = new Set(['vip', 'new', 'churned', 'wholesale', 'retail']);
  const vipIds = new Set(customers.filter(c => c.id % 10 === 0).map(c => c.id));

  // WeakMap with a few entries: keys are live Customers, values are CustomerNote objects held nowhere else.
  // V8 writes each entry as two internal edges "<i> / part of key (...) -> value (...) pair in WeakMap (table @N)".
  const notes = new WeakMap();
  for (let i = 0; i < 5; i++) notes.set(customers[i * 7], new CustomerNote('note for customer ' + i * 7));
  // A WeakSet too (its table holds keys weakly; no ephemeron value edges).
  const seen = new WeakSet([customers[1], customers[2]]);

  // Closures capturing context
  function makeCounter(label) {
    let count = 0;                             // context variable
    const history = [];                        // context variable holding an array
    return function increment(step) {          // closure named "increment", captures label/count/history
      count += step;
      history.push(count);
      return label + ':' + count;
    };
  }
  const counters = [];
  for (let i = 0; i < 10; i++) counters.push(makeCounter('counter-' + i));
  const config = {retries: 3, endpoint: 'https://example.invalid/api'};
  const onTick = () => config.retries + counters.length;  // arrow function capturing the outer context

  // Strings of every kind
  const LONG_FLAT = Array.from({length: 200}, (_, i) => 'flat-text-' + i).join('|');  // flat (seq) string, ~2.7 KB
  const flat = 'a plain internalized literal string';
  const twoByte = 'two-byte string: \u00e9\u4e2d\u6587\u{1F600} ' + 'x'.repeat(20);      // UC16 flat
  function cons(a, b) { return a + b; }
  const concatenated = [];                                  // cons strings (length >= 13, never flattened)
  for (let i = 0; i < 20; i++) concatenated.push(cons('concatenated-left-part-' + i, '/and-the-right-part-' + i));
  const sliced = [];                                        // sliced strings (substring >= 13 chars of a flat parent)
  for (let i = 0; i < 20; i++) sliced.push(LONG_FLAT.substring(i * 50, i * 50 + 40));
  const strings = {flat, twoByte, longFlat: LONG_FLAT, concatenated, sliced};

  // Typed arrays / ArrayBuffer / Buffer
  const bytes = new Uint8Array(4096);
  for (let i = 0; i < bytes.length; i++) bytes[i] = i & 0xff;
  const doubles = new Float64Array(512);
  const raw = new ArrayBuffer(8192);
  const int32View = new Int32Array(raw, 0, 16);
  const nodeBuffer = Buffer.from('a node Buffer, which is a Uint8Array');

  globalThis.fixture = {
    customers, byId, tags, vipIds, notes, seen, counters, onTick, strings,
    typed: {bytes, doubles, raw, int32View, nodeBuffer},
  };
  return globalThis.fixture;
}

function childBasic(outDir, variant) {
  buildBasicWorkload();
  const name = {basic: 'node-basic', internals: 'node-internals', trace: 'node-trace'}[variant];
  const file = path.join(outDir, name + '.heapsnapshot');
  const opts = variant === 'internals' ? {exposeInternals: true} : undefined;
  v8.writeHeapSnapshot(file, opts);
  report({name, file, options: opts || {}, execArgv: process.execArgv});
}

// The leak series: an EventEmitter listener whose closure holds an ever-growing array of LeakedItem.
function childLeak(outDir) {
  const {EventEmitter} = require('events');
  class LeakedItem {
    constructor(step, i) {
      this.step = step;
      this.index = i;
      this.payload = 'leaked payload #' + step + '-' + i;
      this.data = new Array(8).fill(i);
    }
  }
  const bus = new EventEmitter();
  (function installListener() {
    const retained = [];                         // captured by the listener closure -> the leak
    bus.on('work', function onWork(step, i) {
      retained.push(new LeakedItem(step, i));    // never evicted
    });
  })();
  globalThis.bus = bus;
  // Reports are printed only after the last snapshot: the first write to the stdout pipe would create a
  // 'Node / PipeWrap' root and its objects between two snapshots, which would pollute the leak diff.
  const reports = [];
  for (let step = 1; step <= LEAK_STEPS; step++) {
    for (let i = 0; i < LEAK_N; i++) bus.emit('work', step, i);
    const name = 'node-leak-' + step;
    const file = path.join(outDir, name + '.heapsnapshot');
    v8.writeHeapSnapshot(file);
    reports.push({name, file, step, leaked_total: step * LEAK_N, options: {}, execArgv: process.execArgv});
  }
  reports.forEach(report);
}

function report(o) { process.stdout.write(JSON.stringify(o) + '\n'); }

// ---------------------------------------------------------------------------------------------------------
// Parent side: spawn the children, gzip the results.
// ---------------------------------------------------------------------------------------------------------

function runChild(kind, rawDir, nodeFlags) {
  const r = spawnSync(process.execPath, [...nodeFlags, __filename, '--child=' + kind, rawDir],
                      {encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']});
  if (r.status !== 0) throw new Error(`child ${kind} failed with status ${r.status}`);
  return r.stdout.trim().split('\n').filter(Boolean).map(l => JSON.parse(l));
}

function main() {
  const args = process.argv.slice(2);
  const child = args.find(a => a.startsWith('--child='));
  if (child) {
    const kind = child.slice(8);
    const dir = args.find(a => !a.startsWith('--'));
    if (kind === 'leak') childLeak(dir); else childBasic(dir, kind);
    return;
  }
  const outDir = args.find(a => !a.startsWith('--')) || 'testdata';
  const keepRaw = (args.find(a => a.startsWith('--keep-raw=')) || '').slice(11);
  const only = (args.find(a => a.startsWith('--only=')) || '--only=basic,leak,internals,trace').slice(7).split(',');
  if (!process.version.startsWith('v20.')) console.error(`warning: fixtures were made with Node v20; this is ${process.version}`);
  fs.mkdirSync(outDir, {recursive: true});
  const rawDir = keepRaw || fs.mkdtempSync(path.join(os.tmpdir(), 'heapx-fixtures-'));
  fs.mkdirSync(rawDir, {recursive: true});

  const jobs = {
    basic: [],
    leak: [],
    internals: [],
    trace: ['--track-heap-objects'],
  };
  for (const kind of only) {
    if (!(kind in jobs)) throw new Error('unknown fixture kind ' + kind);
    for (const rec of runChild(kind, rawDir, jobs[kind])) {
      const gz = path.join(outDir, path.basename(rec.file) + '.gz');
      const g = spawnSync('gzip', ['-9', '-n', '-c', rec.file], {maxBuffer: 1 << 30});
      if (g.status !== 0) throw new Error('gzip failed for ' + rec.file);
      fs.writeFileSync(gz, g.stdout);
      const rawBytes = fs.statSync(rec.file).size;
      if (!keepRaw) fs.unlinkSync(rec.file);
      report({...rec, file: undefined, raw: keepRaw ? rec.file : undefined, gz, raw_bytes: rawBytes,
              gz_bytes: g.stdout.length, node: process.version});
    }
  }
  if (!keepRaw) fs.rmSync(rawDir, {recursive: true, force: true});
}

main();
