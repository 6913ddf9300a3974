// core-server.js: an HTTP server stuck on a dead upstream, under real
// requests, for the core-dump tests (formats/nodecore TestStuckServer): a
// shape the core rules were not written on.
//
//     node testdata/gen/core-server.js OUTDIR
//
//   - N HTTP requests from an http.Agent of this process to its own
//     server, each handler holding a Session while it awaits a connection
//     from a pool that never frees one (its resolve functions wait in the
//     pool's queue);
//   - PIPES async generator pipelines (source -> batches -> consume) that
//     stall awaiting the same pool, each holding a Batch of Records in the
//     generators' registers.
//
// When every handler has run, it writes OUTDIR/server.heapsnapshot, prints
// one JSON line (the classes' counts, "ready": true) and spins until
// killed; internal/coretest gcores it on that line. Runs unchanged under
// Node 18, 20, 22 and 24.
'use strict';
const http = require('http');
const path = require('path');
const v8 = require('v8');
// Made before the snapshot: process.stdout is a socket made on first use.
const stdout = process.stdout;

const N = 300;
const PIPES = 40;

class Session {
  constructor(req) {
    this.url = req.url;
    this.headers = Object.assign({}, req.headers);
    this.started = Date.now();
    this.trace = [];
    for (let i = 0; i < 6; i++) this.trace.push({ step: i, note: 'step ' + i + ' of ' + req.url });
  }
}

// An upstream client whose calls wait for a connection that never frees:
// the waiters sit in a queue (their resolve functions), as in a pool.
class Pool {
  constructor() { this.waiting = []; }
  acquire() { return new Promise((resolve) => this.waiting.push(resolve)); }
}
const pool = new Pool();

async function fetchUpstream(session) {
  const conn = await pool.acquire();
  return conn.send(session.url);
}

let entered = 0;
const server = http.createServer(async (req, res) => {
  const session = new Session(req);
  entered++;
  if (entered === N) setImmediate(ready);
  const body = await fetchUpstream(session);
  res.end(body);
});

class Record {
  constructor(pipe, n) { this.pipe = pipe; this.n = n; this.payload = 'record ' + pipe + '/' + n + ' '.repeat(40); }
}
class Batch {
  constructor(pipe) { this.pipe = pipe; this.records = []; }
}
async function* source(pipe) {
  for (let n = 0; ; n++) {
    if (n === 3) await pool.acquire(); // stalls here
    yield new Record(pipe, n);
  }
}
async function* batches(pipe, src) {
  let batch = new Batch(pipe);
  for await (const r of src) {
    batch.records.push(r);
    if (batch.records.length === 10) { yield batch; batch = new Batch(pipe); }
  }
}
async function consume(pipe) {
  for await (const b of batches(pipe, source(pipe))) b.done = true;
}

let spinning = true;
function ready() {
  const snapshot = path.join(process.argv[2] || '.', 'server.heapsnapshot');
  v8.writeHeapSnapshot(snapshot);
  stdout.write(JSON.stringify({ ready: true, pid: process.pid, node: process.version, snapshot,
    classes: { Session: N, Batch: PIPES, Record: 3 * PIPES },
    http: { IncomingMessage: N, ServerResponse: N, ClientRequest: N, Socket: 2 * N } }) + '\n');
  let spins = 0;
  while (spinning) spins++;
  return spins;
}

server.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: N });
  for (let i = 0; i < PIPES; i++) consume(i);
  for (let i = 0; i < N; i++) {
    http.get({ host: '127.0.0.1', port, path: '/orders/' + i, agent }, () => {}).on('error', () => {});
  }
});
