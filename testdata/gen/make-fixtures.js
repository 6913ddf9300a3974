#!/usr/bin/env node
// Writes the small REAL V8 heap snapshots used as heapx test fixtures, with Node's own
// v8.writeHeapSnapshot(). Every fixture (or fixture series) is produced in its own child process so the
// heaps are independent of each other and of this driver.
//
// Usage (from the repo root, Node v20.x; see testdata/gen/README.md):
//   node testdata/gen/make-fixtures.js [OUT_DIR=testdata] [--keep-raw=DIR] [--only=basic,leak,internals,trace,timeline]
//
// Output: OUT_DIR/<name>.heapsnapshot.gz or <name>.heaptimeline.gz (gzip -9 -n), one JSON line per fixture on stdout.
//   node-basic.heapsnapshot        default options
//   node-leak-{1,2,3}.heapsnapshot one process, LEAK_N LeakedItem objects leaked per step, snapshot after each step
//   node-internals.heapsnapshot    same workload as node-basic, {exposeInternals: true}
//   node-trace.heapsnapshot        same workload as node-basic, process started with --track-heap-objects
//   node-timeline.heaptimeline     "Allocation instrumentation on timeline": a driver process talks to a target
//                                  process (--inspect) over the inspector WebSocket, as DevTools does, with
//                                  startTrackingHeapObjects{trackAllocations} ... stopTrackingHeapObjects
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
const TL_BATCHES = 6;          // timeline workload: batches of TimelineItem, one every TL_SLEEP_MS
const TL_ITEMS = 250;          // TimelineItem objects per batch
const TL_SLEEP_MS = 120;       // pause after each batch (the inspector samples heap stats every 50 ms)
// The target runs with --no-compact. V8 (HeapProfiler::ObjectMoveEvent) moves an object's allocation-trace
// entry only if the object has no snapshot id yet, and every heap-stats sample (every 50 ms while tracking)
// gives ids to all live objects. So when a later full GC compacts a page, the objects on it lose their
// trace_node_id (the entry stays at the old address). With compaction on, how many TimelineItem keep theirs
// varies from run to run (we saw 1 to ~300 of 750); with --no-compact all 750 keep it on every run.
const TL_TARGET_FLAGS = ['--no-compact', '--inspect=127.0.0.1:0'];

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

// The timeline target: the process whose heap is recorded. It only defines the workload; the driver
// (childTimelineDriver) starts it over the inspector with Runtime.evaluate, while allocation tracking is on.
// Every batch allocates TL_ITEMS TimelineItem (each with a cons-string label and a small array) into a new
// TimelineBatch, plus a scratch array of strings that is dropped right away. Odd batches are released at the
// end, so half the batches' objects were allocated during the recording but are gone from the snapshot.
function childTimelineTarget() {
  class TimelineItem {
    constructor(batch, i) {
      this.batch = batch;
      this.index = i;
      this.label = 'timeline item #' + batch + '-' + i;
      this.values = [i, i * 2, i * 3, batch];
    }
  }
  class TimelineBatch {
    constructor(n) { this.n = n; this.items = []; this.startedAt = Date.now(); }
  }
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  async function allocateBatches() {
    const batches = [];
    for (let b = 0; b < TL_BATCHES; b++) {
      const batch = new TimelineBatch(b);
      for (let i = 0; i < TL_ITEMS; i++) batch.items.push(new TimelineItem(b, i));
      batches.push(batch);
      let scratch = [];                                    // garbage: allocated, then unreachable
      for (let i = 0; i < TL_ITEMS; i++) scratch.push('scratch-' + b + '-' + i + '-' + 'x'.repeat(i % 7));
      scratch = null;
      await sleep(TL_SLEEP_MS);
    }
    globalThis.timeline = {batches: batches.filter(x => x.n % 2 === 0)};   // keep batches 0, 2, 4
    await sleep(TL_SLEEP_MS);
    return globalThis.timeline.batches.length;
  }
  globalThis.allocateBatches = allocateBatches;
  const keepAlive = setInterval(() => {}, 1 << 30);       // --inspect alone does not keep the process alive
  globalThis.finishTimeline = () => clearInterval(keepAlive);
}

// The timeline driver plays DevTools: it starts the target with --inspect=127.0.0.1:0, connects to it over
// the WebSocket (Node 20: --experimental-websocket), and records. Recording from *outside* the target matters:
// with an in-process inspector.Session, every addHeapSnapshotChunk is delivered to JS in the target while V8
// serializes, the allocation tracker records those allocations, and the file comes out inconsistent (the
// trace_tree and trace_function_infos hold one function more than trace_function_count says).
async function childTimelineDriver(outDir) {
  const {spawn} = require('child_process');
  const target = spawn(process.execPath, [...TL_TARGET_FLAGS, __filename, '--child=timeline-target'],
                       {stdio: ['ignore', 'ignore', 'pipe']});
  const url = await new Promise((resolve, reject) => {
    let err = '';
    target.stderr.setEncoding('utf8');
    target.stderr.on('data', d => {
      err += d;
      const m = /Debugger listening on (ws:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    target.on('exit', code => reject(new Error('timeline target exited early: ' + code + '\n' + err)));
  });
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  let nextId = 1;
  const pending = new Map();
  const events = {};
  const chunks = [];
  ws.onmessage = ev => {
    const msg = JSON.parse(ev.data);
    if (msg.id !== undefined) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(JSON.stringify(msg.error))); else p.resolve(msg.result);
      return;
    }
    events[msg.method] = (events[msg.method] || 0) + 1;
    if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(msg.params.chunk);
  };
  const post = (method, params = {}) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, {resolve, reject});
    ws.send(JSON.stringify({id, method, params}));
  });

  await post('Runtime.enable');
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startTrackingHeapObjects', {trackAllocations: true});
  const r = await post('Runtime.evaluate', {expression: 'allocateBatches()', awaitPromise: true, returnByValue: true});
  if (r.exceptionDetails) throw new Error('workload failed: ' + JSON.stringify(r.exceptionDetails));
  // V8 answers stopTrackingHeapObjects by taking a snapshot (streamed as addHeapSnapshotChunk events, all sent
  // before the response) and then stopping the tracker: the samples and allocation traces are in it.
  await post('HeapProfiler.stopTrackingHeapObjects', {reportProgress: false});
  await post('Runtime.evaluate', {expression: 'finishTimeline()'});
  await post('HeapProfiler.disable');
  ws.close();
  const code = await new Promise(resolve => target.exitCode !== null ? resolve(target.exitCode) : target.on('exit', resolve));
  if (code !== 0) throw new Error('timeline target exited with ' + code);

  const name = 'node-timeline';
  const file = path.join(outDir, name + '.heaptimeline');
  const text = chunks.join('');
  fs.writeFileSync(file, text);
  const j = JSON.parse(text);
  const nf = j.snapshot.meta.node_fields.length;
  const tix = j.snapshot.meta.node_fields.indexOf('trace_node_id');
  let traced = 0;
  for (let i = tix; i < j.nodes.length; i += nf) if (j.nodes[i] !== 0) traced++;
  report({name, file, chunks: chunks.length, events, workload_result: r.result.value,
          node_count: j.snapshot.node_count, edge_count: j.snapshot.edge_count,
          trace_function_count: j.snapshot.trace_function_count,
          trace_function_infos: j.trace_function_infos.length / j.snapshot.meta.trace_function_info_fields.length,
          samples: j.samples.length / j.snapshot.meta.sample_fields.length, nodes_with_trace_node_id: traced,
          options: {trackAllocations: true}, execArgv: TL_TARGET_FLAGS});
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
    if (kind === 'leak') childLeak(dir);
    else if (kind === 'timeline-target') childTimelineTarget();
    else if (kind === 'timeline') childTimelineDriver(dir).catch(e => { console.error(e); process.exit(1); });
    else childBasic(dir, kind);
    return;
  }
  const outDir = args.find(a => !a.startsWith('--')) || 'testdata';
  const keepRaw = (args.find(a => a.startsWith('--keep-raw=')) || '').slice(11);
  const only = (args.find(a => a.startsWith('--only=')) || '--only=basic,leak,internals,trace,timeline').slice(7).split(',');
  if (!process.version.startsWith('v20.')) console.error(`warning: fixtures were made with Node v20; this is ${process.version}`);
  fs.mkdirSync(outDir, {recursive: true});
  const rawDir = keepRaw || fs.mkdtempSync(path.join(os.tmpdir(), 'heapx-fixtures-'));
  fs.mkdirSync(rawDir, {recursive: true});

  const jobs = {
    basic: [],
    leak: [],
    internals: [],
    trace: ['--track-heap-objects'],
    timeline: ['--experimental-websocket', '--no-warnings'],   // the driver; its target gets --inspect
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
