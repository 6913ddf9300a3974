#!/usr/bin/env node
// Writes leak series in five common shapes, real V8 heap snapshots for leak.Leaks' tests: each shape runs in
// its own child process, which takes memlab's three snapshots from inside with v8.writeHeapSnapshot():
// the baseline, the target after the leaking action, and the final after the action once more.
//
// Usage (from the repo root; see testdata/gen/README.md):
//   node testdata/gen/make-leak-shapes.js [OUT_DIR=testdata/leaks] [--only=map-closures,set,...] [--keep-raw=DIR]
//
// Run it with each Node the fixtures cover (the file names carry the major version):
//   OUT_DIR/<shape>-node<major>-{1,2,3}.heapsnapshot.gz (gzip -9 -n), one JSON line per snapshot on stdout.
//
// The shapes, each a leak a program makes by keeping what it no longer needs in a long-lived place:
//   map-closures  an event hub keeps a listener closure per subscriber in a module-level Map, 4 topics x 250
//   set           a module-level Set of Connection objects that are closed but never deleted, 200 per action
//   cache-object  a plain object used as a string-keyed session cache, byToken['tok_<hex>'], 150 Sessions per
//                 action, each with 1-3 CartItems, never deleted; the 40 sessions cached before the baseline get one
//                 more CartItem per action
//   class-field   a long-lived RequestLog whose field array `entries` gets 300 LogEntry per action
//   timers        120 jobs per action start a setInterval heartbeat whose closure keeps the job's context; the jobs
//                 finish but nobody calls clearInterval (the timers are unref'd, so they do not keep the process up).
//                 A sampler with the same period runs from the start.
//   several       four leaks side by side in one module's state: 160 Bucketed over 16 arrays, 150 Numbered under
//                 numeric keys of a plain object, 50 listeners on 7 events of an EventEmitter, each closing over
//                 a Listener, 200 ListNode prepended to a singly linked list
'use strict';

const SHAPES = ['map-closures', 'set', 'cache-object', 'class-field', 'timers', 'several'];

// ---------------------------------------------------------------------------------------------------------
// Child side. The state of every shape is module-level, as a program's would be; a child uses only its own.
// ---------------------------------------------------------------------------------------------------------

// (a) map-closures
const TOPICS = ['orders', 'payments', 'shipping', 'inventory'];
const SUBSCRIBERS_PER_TOPIC = 250;
const subscribers = new Map();   // 'topic:id' -> listener
let nextSubscriber = 0;
function subscribe(topic) {
  const id = nextSubscriber++;
  const stats = {topic, id, received: 0, lastMessageId: -1};
  subscribers.set(topic + ':' + id, function onMessage(msg) {
    stats.received++;
    stats.lastMessageId = msg.id;
  });
}
function publish(topic, msg) {
  for (const [key, listener] of subscribers) if (key.startsWith(topic + ':')) listener(msg);
}
function leakMapClosures() {
  for (const topic of TOPICS) {
    for (let i = 0; i < SUBSCRIBERS_PER_TOPIC; i++) subscribe(topic);
    publish(topic, {id: nextSubscriber});
  }
}

// (b) set
const CONNECTIONS = 200;
class Connection {
  constructor(id) {
    this.id = id;
    this.remote = '10.0.' + (id >> 8) + '.' + (id & 255) + ':' + (40000 + id);
    this.openedAt = Date.now();
    this.pending = [];
    this.closed = false;
  }
}
const openConnections = new Set();
let nextConnection = 0;
function leakSet() {
  for (let i = 0; i < CONNECTIONS; i++) {
    const c = new Connection(nextConnection++);
    openConnections.add(c);
    c.pending.push({seq: 1, bytes: 512});
    c.closed = true;   // closed, but never deleted from openConnections
  }
}

// (c) cache-object. The cache is warm before the baseline (RETURNING sessions); during each action their users add
// an item to their carts too, so some leaked CartItems belong to sessions that are not leaked themselves.
const SESSIONS = 150;
const RETURNING = 40;
class CartItem {
  constructor(sku, quantity, price) { this.sku = sku; this.quantity = quantity; this.price = price; }
}
class Session {
  constructor(token, userId) {
    this.token = token;
    this.userId = userId;
    this.createdAt = Date.now();
    this.cart = [];
  }
}
const byToken = {};   // a plain object as a string-keyed cache
let nextUser = 0;
function login() {
  const userId = nextUser++;
  const token = 'tok_' + (Math.imul(userId + 1, 2654435761) >>> 0).toString(16).padStart(8, '0');
  const s = new Session(token, userId);
  byToken[token] = s;   // logout never deletes it
  return s;
}
function addToCart(s, k) {
  s.cart.push(new CartItem('SKU-' + ((s.userId * 7 + k) % 97), k + 1, 4.5 + k));
}
function warmCacheObject() {
  for (let i = 0; i < RETURNING; i++) addToCart(login(), 0);
}
function leakCacheObject() {
  const returning = Object.values(byToken).slice(0, RETURNING);
  for (let i = 0; i < SESSIONS; i++) {
    const s = login();
    for (let k = 0; k <= s.userId % 3; k++) addToCart(s, k);
  }
  for (const s of returning) addToCart(s, s.cart.length);
}

// (d) class-field
const LOG_ENTRIES = 300;
class LogEntry {
  constructor(seq, method, url, status) {
    this.seq = seq;
    this.method = method;
    this.url = url;
    this.status = status;
    this.headers = {'content-type': 'application/json', 'x-request-id': 'req-' + seq};
  }
}
class RequestLog {
  constructor() { this.entries = []; this.started = Date.now(); }
  record(method, url, status) { this.entries.push(new LogEntry(this.entries.length, method, url, status)); }
}
const requestLog = new RequestLog();
function leakClassField() {
  for (let i = 0; i < LOG_ENTRIES; i++) requestLog.record(i % 4 ? 'GET' : 'POST', '/api/items/' + i, 200);
}

// (e) timers. A sampler with the heartbeats' period runs from the start, so their TimersList is older than the
// baseline (as in a program that already has timers of that period) and the leaked Timeouts hang in its linked
// list one after another, in the order they last fired.
const JOBS = 120;
const HEARTBEAT_MS = 50;
let nextJob = 0;
const load = {samples: 0, lastAt: 0};
function sampleLoad() { load.samples++; load.lastAt = Date.now(); }
function startJob() {
  const job = {id: nextJob++, name: 'job-' + nextJob, startedAt: Date.now(), beats: 0, progress: new Array(8).fill(0)};
  const timer = setInterval(function heartbeat() {
    job.beats++;
    job.progress[job.beats % 8] = job.beats;
  }, HEARTBEAT_MS);
  timer.unref();
  // The job finishes here, but nobody calls clearInterval(timer).
}
function leakTimers() {
  for (let i = 0; i < JOBS; i++) startJob();
}

// (f) several: four leaks side by side in one module, whose traces share the long way to the module's exports and
// part there, so that memlab's similarity alone (which weighs the trace from the root most) could join them.
const BUCKETED = 160;
const NUMBERED = 150;
const LISTENERS = 50;
const LIST_NODES = 200;
class Bucketed {
  constructor(i) { this.i = i; this.tags = ['t' + (i % 5)]; }
}
class Numbered {
  constructor(i) { this.i = i; this.at = Date.now(); }
}
class Listener {
  constructor(i) { this.i = i; this.calls = 0; }
}
class ListNode {
  constructor(value, next) { this.value = value; this.next = next; this.meta = {value}; }
}
const several = {
  buckets: Array.from({length: 16}, () => []),   // Bucketed objects spread over 16 arrays
  byNumber: {},                                    // Numbered objects under numeric keys, '100000'...
  bus: new (require('events').EventEmitter)(),     // listeners on 7 events, each closing over a Listener
  head: null,                                      // a singly linked list of ListNode, newest first
};
several.bus.setMaxListeners(0);
let nextSeveral = 0;
function leakSeveral() {
  const n = nextSeveral;
  nextSeveral += 1000;
  for (let i = 0; i < BUCKETED; i++) several.buckets[(n + i) % 16].push(new Bucketed(n + i));
  for (let i = 0; i < NUMBERED; i++) several.byNumber[100000 + n + i] = new Numbered(n + i);
  for (let i = 0; i < LISTENERS; i++) {
    const l = new Listener(n + i);
    several.bus.on('event' + ((n + i) % 7), function onEvent() { l.calls++; });
  }
  for (let i = 0; i < LIST_NODES; i++) several.head = new ListNode(n + i, several.head);
}

// The module's API, as a program's modules export theirs: it keeps the module's context, so its state, reachable
// from the global object (global.process.mainModule.exports), not only from the stack that writes the snapshot.
module.exports = {subscribe, publish, Connection, openConnections, byToken, requestLog, startJob, several};

const LEAKS = {
  'map-closures': leakMapClosures,
  'set': leakSet,
  'cache-object': leakCacheObject,
  'class-field': leakClassField,
  'timers': leakTimers,
  'several': leakSeveral,
};

// The timers fire in the pauses (every heartbeat a few times), as they would in a program.
const PAUSE_MS = 200;
const sleep = ms => new Promise(r => setTimeout(r, ms));

async function child(shape, dir) {
  if (shape === 'timers') setInterval(sampleLoad, HEARTBEAT_MS).unref();
  if (shape === 'cache-object') warmCacheObject();
  const v8 = require('v8');
  const path = require('path');
  const leak = LEAKS[shape];
  const files = [];
  const snapshot = () => {
    const file = path.join(dir, `${shape}-node${process.versions.node.split('.')[0]}-${files.length + 1}.heapsnapshot`);
    v8.writeHeapSnapshot(file);
    files.push(file);
  };
  await sleep(PAUSE_MS);
  snapshot();            // baseline
  leak();
  await sleep(PAUSE_MS);
  snapshot();            // target
  leak();
  await sleep(PAUSE_MS);
  snapshot();            // final
  // Nothing is written to stdout before the last snapshot: the first write to the pipe would allocate a
  // PipeWrap and its objects between two snapshots.
  const counts = {subscribers: subscribers.size, connections: openConnections.size,
                  sessions: Object.keys(byToken).length, log_entries: requestLog.entries.length, jobs: nextJob,
                  several_actions: nextSeveral / 1000};
  files.forEach((file, i) => process.stdout.write(JSON.stringify({shape, step: i + 1, file, counts}) + '\n'));
}

// ---------------------------------------------------------------------------------------------------------
// Parent side: one child per shape, then gzip.
// ---------------------------------------------------------------------------------------------------------

function main() {
  const args = process.argv.slice(2);
  const childArg = args.find(a => a.startsWith('--child='));
  if (childArg) {
    child(childArg.slice(8), args.find(a => !a.startsWith('--'))).catch(e => { console.error(e); process.exit(1); });
    return;
  }
  const fs = require('fs');
  const os = require('os');
  const path = require('path');
  const {spawnSync} = require('child_process');
  const outDir = args.find(a => !a.startsWith('--')) || path.join('testdata', 'leaks');
  const keepRaw = (args.find(a => a.startsWith('--keep-raw=')) || '').slice(11);
  const only = (args.find(a => a.startsWith('--only=')) || '--only=' + SHAPES.join(',')).slice(7).split(',');
  fs.mkdirSync(outDir, {recursive: true});
  const rawDir = keepRaw || fs.mkdtempSync(path.join(os.tmpdir(), 'heapx-leak-shapes-'));
  fs.mkdirSync(rawDir, {recursive: true});
  for (const shape of only) {
    if (!SHAPES.includes(shape)) throw new Error('unknown shape ' + shape + '; shapes: ' + SHAPES.join(', '));
    const r = spawnSync(process.execPath, [__filename, '--child=' + shape, rawDir],
                        {encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']});
    if (r.status !== 0) throw new Error(`child ${shape} failed with status ${r.status}`);
    for (const line of r.stdout.trim().split('\n')) {
      const rec = JSON.parse(line);
      const gz = path.join(outDir, path.basename(rec.file) + '.gz');
      const g = spawnSync('gzip', ['-9', '-n', '-c', rec.file], {maxBuffer: 1 << 30});
      if (g.status !== 0) throw new Error('gzip failed for ' + rec.file);
      fs.writeFileSync(gz, g.stdout);
      const rawBytes = fs.statSync(rec.file).size;
      if (!keepRaw) fs.unlinkSync(rec.file);
      process.stdout.write(JSON.stringify({...rec, file: undefined, gz, raw_bytes: rawBytes,
                                           gz_bytes: g.stdout.length, node: process.version}) + '\n');
    }
  }
  if (!keepRaw) fs.rmSync(rawDir, {recursive: true, force: true});
}

main();
