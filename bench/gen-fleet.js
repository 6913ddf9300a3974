#!/usr/bin/env node
// Writes a fleet of real Node heap snapshots: the pods of one service in two releases, one that leaks and one
// that does not, each pod snapshotted several times as it serves requests, as a team collects dumps from a
// canary and the release before it. For bench/fleet.sh (hundreds of dumps, a few MB each) and the fleet
// fixtures of cmd/heapx's tests (testdata/fleet, a handful of gzipped ones).
//
// Usage (Node v20.x):
//   node bench/gen-fleet.js OUT_DIR [--pods=N] [--snapshots=K] [--requests=R] [--gzip]
//     --pods       pods per release (default 10)
//     --snapshots  snapshots per pod, one after each batch of requests (default 10)
//     --requests   requests a pod serves per batch (default 300); each leaves one Request in the leaking release
//     --gzip       write .heapsnapshot.gz (gzip -9 -n: no name, no timestamp)
//
// Writes OUT_DIR/release=<R>/pod-<P>-<K>.heapsnapshot[.gz] for R in 41 (the leak) and 42 (the fix), each pod a
// process of its own (`--child=RELEASE,POD`), and one JSON line per pod on stdout: {release, pod, leaks, files,
// captured_ms, ...}. A file's modification time is when its snapshot was taken (gzip keeps it), which is the capture
// time heapx export records for a V8 snapshot; captured_ms keeps it for copies that lose it (a git checkout).
//
// The service (modelled on the peers' synthetic.js workload: users, orders with line items, sessions with
// buffers and closures) keeps 200 users and their recent orders, and an EventEmitter `server` whose 'request'
// listener `onRequest` records each Request:
//   release 41  in `requestLog`, an array in the listener's closure that nothing ever trims (the leak: R
//               Requests more at every snapshot, each with its headers object and URL string);
//   release 42  in the same array, cut to the last 50 after every request (the fix).
// Every release keeps the same bounded working set otherwise, so the one class that grows in 41 and not in 42
// is Request (and what each Request holds).
'use strict';
const fs = require('fs');
const path = require('path');
const v8 = require('v8');
const {EventEmitter} = require('events');
const {spawnSync} = require('child_process');

const RELEASES = {41: {leaks: true}, 42: {leaks: false}};

function child(release, pod, outDir, snapshots, requests, gzip) {
  const leaks = RELEASES[release].leaks;
  class Address {
    constructor(i) {
      this.street = `${i} Main St`;
      this.city = ['Paris', 'Berlin', 'Oslo', 'Rome'][i % 4];
    }
  }
  class User {
    constructor(i) {
      this.id = i;
      this.name = 'user_' + i;
      this.address = new Address(i);
      this.tags = new Set(['a' + (i % 7), 'b' + (i % 11)]);
    }
  }
  class LineItem {
    constructor(sku, qty, price) {
      this.sku = sku;
      this.qty = qty;
      this.price = price;
    }
  }
  class Order {
    constructor(i, user) {
      this.id = 'ord-' + i;
      this.user = user;
      this.items = [];
      for (let k = 0; k < 1 + (i % 3); k++) this.items.push(new LineItem('SKU' + ((i * 7 + k) % 500), 1 + k, 9.99 * (k + 1)));
    }
  }
  class Session {
    constructor(user) {
      this.user = user;
      this.buffer = Buffer.alloc(64 + (user.id % 64));
      const started = Date.now();
      this.elapsed = () => Date.now() - started;
    }
  }
  class Request {
    constructor(i) {
      this.url = '/api/orders/' + i + '?pod=' + pod;
      this.method = i % 5 ? 'GET' : 'POST';
      this.headers = {'user-agent': 'fleet/1.0', 'x-request-id': 'req-' + pod + '-' + i};
      this.receivedAt = Date.now();
    }
  }
  const server = new EventEmitter();
  (function installHandler() {
    const requestLog = [];
    server.on('request', function onRequest(req) {
      requestLog.push(req);
      if (!leaks && requestLog.length > 50) requestLog.splice(0, requestLog.length - 50);
    });
  })();
  const users = [];
  for (let i = 0; i < 200; i++) users.push(new User(i));
  const orders = new Map();
  const sessions = new Set();
  let served = 0;
  const serve = () => {
    for (let r = 0; r < requests; r++, served++) {
      const u = users[served % users.length];
      const o = new Order(served, u);
      orders.set(o.id, o);
      if (orders.size > 300) orders.delete(orders.keys().next().value);
      if (served % 10 === 0) {
        sessions.add(new Session(u));
        if (sessions.size > 40) sessions.delete(sessions.values().next().value);
      }
      server.emit('request', new Request(served));
    }
  };
  globalThis.service = {users, orders, sessions, server};
  const files = [], captured = [];
  const started = Date.now();
  for (let k = 1; k <= snapshots; k++) {
    serve();
    const file = path.join(outDir, `pod-${pod}-${k}.heapsnapshot`);
    v8.writeHeapSnapshot(file);
    if (gzip) {
      const r = spawnSync('gzip', ['-9', '-n', '-f', file], {stdio: 'inherit'});
      if (r.status !== 0) throw new Error(`gzip ${file} failed`);
      files.push(file + '.gz');
    } else {
      files.push(file);
    }
    captured.push(Math.floor(fs.statSync(files[files.length - 1]).mtimeMs));
  }
  process.stdout.write(JSON.stringify({release: String(release), pod, leaks, files: files.map((f) => path.basename(f)),
    captured_ms: captured, requests_per_snapshot: requests, node: process.version,
    seconds: (Date.now() - started) / 1000}) + '\n');
}

function main() {
  const args = process.argv.slice(2);
  const opt = (name, def) => {
    const a = args.find((x) => x.startsWith(`--${name}=`));
    if (!a) return def;
    const n = Number(a.slice(name.length + 3));
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} wants a positive count, not ${a}`);
    return n;
  };
  const pods = opt('pods', 10), snapshots = opt('snapshots', 10), requests = opt('requests', 300);
  const gzip = args.includes('--gzip');
  const childArg = args.find((a) => a.startsWith('--child='));
  const rest = args.filter((a) => !a.startsWith('--'));
  if (rest.length !== 1) {
    process.stderr.write('usage: node bench/gen-fleet.js OUT_DIR [--pods=N] [--snapshots=K] [--requests=R] [--gzip]\n');
    process.exit(2);
  }
  if (childArg) {
    const [release, pod] = childArg.slice('--child='.length).split(',');
    child(release, pod, rest[0], snapshots, requests, gzip);
    return;
  }
  for (const release of Object.keys(RELEASES)) {
    const dir = path.join(rest[0], `release=${release}`);
    fs.mkdirSync(dir, {recursive: true});
    for (let p = 1; p <= pods; p++) {
      const pod = String(p).padStart(3, '0');
      const r = spawnSync(process.execPath, [__filename, `--child=${release},${pod}`, dir, `--snapshots=${snapshots}`,
        `--requests=${requests}`, ...(gzip ? ['--gzip'] : [])], {stdio: ['ignore', 'inherit', 'inherit']});
      if (r.status !== 0) throw new Error(`release ${release} pod ${pod} failed (exit ${r.status})`);
    }
  }
}

main();
