#!/usr/bin/env node
// Writes a fleet of real Node heap snapshots for comparing cohorts (heapx fleet --compare): one service in two
// releases, the same pods in each, every pod snapshotted a few times as it serves requests. Release 1 keeps the
// last 700 audit records, release 2 the last 100: 600 more AuditRecord in every dump of release 1. One pod of
// release 1 (pod 002) also keeps a replay buffer of 1,500 ReplayEntry that no other pod has: a difference of one
// pod, which a comparison with the pods as samples must not take for a difference of the release. Each pod serves
// its own number of requests, so the classes of the working set vary from dump to dump as in a real fleet.
//
// Usage (Node v20.x):
//   node bench/gen-cohorts.js OUT_DIR [--pods=N] [--snapshots=K]
//     --pods       pods per release (default 4)
//     --snapshots  snapshots per pod, one after each batch of requests (default 2)
//
// Writes OUT_DIR/release=<R>/pod-<P>-<K>.heapsnapshot for R in 1 and 2, each pod a process of its own
// (`--child=RELEASE,POD`), and one JSON line per pod on stdout: {release, pod, files, captured_ms, audit, replay,
// requests}. cmd/heapx's TestFleetCompare runs it (4 pods, 2 snapshots: 16 dumps of about 3 MB).
'use strict';
const fs = require('fs');
const path = require('path');
const v8 = require('v8');
const {spawnSync} = require('child_process');

const AUDIT_KEPT = {1: 700, 2: 100};
const REPLAY_POD = {release: '1', pod: '002', entries: 1500};

function child(release, pod, outDir, snapshots) {
  class User {
    constructor(i) {
      this.id = i;
      this.name = 'user_' + i;
      this.roles = i % 9 === 0 ? ['admin', 'user'] : ['user'];
    }
  }
  class LineItem {
    constructor(sku, qty) {
      this.sku = sku;
      this.qty = qty;
    }
  }
  class Order {
    constructor(i, user) {
      this.id = 'ord-' + pod + '-' + i;
      this.user = user;
      this.items = [];
      for (let k = 0; k < 1 + (i % 4); k++) this.items.push(new LineItem('SKU' + ((i * 7 + k) % 300), 1 + k));
    }
  }
  class AuditRecord {
    constructor(i, user, order) {
      this.seq = i;
      this.user = user;
      this.action = i % 3 ? 'order.create' : 'order.update';
      this.detail = `order ${order.id} by ${user.name}`;
      this.status = 200 + (i % 3);
      this.bytes = 100 + (i % 50);
      this.items = order.items.length;
    }
  }
  class ReplayEntry {
    constructor(i) {
      this.at = i;
      this.payload = 'replay-' + pod + '-' + i;
    }
  }
  const kept = AUDIT_KEPT[release];
  const users = [];
  for (let i = 0; i < 150; i++) users.push(new User(i));
  const orders = new Map();
  const audit = [];
  const replay = [];
  if (release === REPLAY_POD.release && pod === REPLAY_POD.pod) {
    for (let i = 0; i < REPLAY_POD.entries; i++) replay.push(new ReplayEntry(i));
  }
  // Each pod serves its own load: 800 requests a batch and a share of
  // 97 more per pod number, and keeps as many recent orders.
  const perBatch = 800 + 97 * Number(pod);
  const keptOrders = 150 + 23 * Number(pod);
  let served = 0;
  const serve = () => {
    for (let r = 0; r < perBatch; r++, served++) {
      const u = users[(served * 31) % users.length];
      const o = new Order(served, u);
      orders.set(o.id, o);
      if (orders.size > keptOrders) orders.delete(orders.keys().next().value);
      audit.push(new AuditRecord(served, u, o));
      if (audit.length > kept) audit.splice(0, audit.length - kept);
    }
  };
  globalThis.service = {users, orders, audit, replay};
  const files = [], captured = [];
  for (let k = 1; k <= snapshots; k++) {
    serve();
    const file = path.join(outDir, `pod-${pod}-${k}.heapsnapshot`);
    v8.writeHeapSnapshot(file);
    files.push(path.basename(file));
    captured.push(Math.floor(fs.statSync(file).mtimeMs));
  }
  process.stdout.write(JSON.stringify({release, pod, files, captured_ms: captured, audit: audit.length,
    replay: replay.length, requests: served, node: process.version}) + '\n');
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
  const pods = opt('pods', 4), snapshots = opt('snapshots', 2);
  const childArg = args.find((a) => a.startsWith('--child='));
  const rest = args.filter((a) => !a.startsWith('--'));
  if (rest.length !== 1) {
    process.stderr.write('usage: node bench/gen-cohorts.js OUT_DIR [--pods=N] [--snapshots=K]\n');
    process.exit(2);
  }
  if (childArg) {
    const [release, pod] = childArg.slice('--child='.length).split(',');
    child(release, pod, rest[0], snapshots);
    return;
  }
  for (const release of Object.keys(AUDIT_KEPT)) {
    const dir = path.join(rest[0], `release=${release}`);
    fs.mkdirSync(dir, {recursive: true});
    for (let p = 1; p <= pods; p++) {
      const pod = String(p).padStart(3, '0');
      const r = spawnSync(process.execPath, [__filename, `--child=${release},${pod}`, dir, `--snapshots=${snapshots}`],
        {stdio: ['ignore', 'inherit', 'inherit']});
      if (r.status !== 0) throw new Error(`release ${release} pod ${pod} failed (exit ${r.status})`);
    }
  }
}

main();
