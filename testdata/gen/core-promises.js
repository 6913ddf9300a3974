// core-promises.js: a Node program whose requests wait forever, for the
// core-dump tests that compare a core with a heap snapshot of the same
// moment (formats/nodecore TestPendingPromises, bench/cores.sh).
//
//     node testdata/gen/core-promises.js OUTDIR
//
// What keeps its objects alive is only V8's async machinery, the shapes a
// server stuck on a dead dependency has:
//
//   - N_REQUESTS requests, each an async function chain handle -> authorize
//     awaiting db.ready, a promise that never settles. Each
//     holds a RequestContext with a Payload. Only the suspended async
//     functions (their registers and contexts) hold them, and only the
//     promise's reactions hold those.
//   - N_RENDERS promise chains db.ready.then(render).then(send) whose
//     closures capture a RenderJob.
//   - N_STREAMS generators suspended at a yield, kept in a module-level
//     array, each holding a StreamState in its parameters.
//   - N_JOBS microtasks still queued when the process is cored: the
//     snapshot is written, and the process then spins, inside an earlier
//     microtask, so the later ones stay in V8's microtask queue (outside
//     the V8 heap) holding a QueuedJob each (half through queueMicrotask,
//     half through reactions of a resolved promise).
//
// db is held the way a server holds its pool: module scope, kept alive by a
// health-check interval and by module.exports. The program writes
// OUTDIR/core-promises.heapsnapshot, prints one JSON line (the counts,
// "ready": true) and spins until killed; internal/coretest gcores it on
// that line. Runs unchanged under Node 18, 20, 22 and 24.
'use strict';

const path = require('path');
const v8 = require('v8');

// process.stdout is made on first use (a net.Socket on a pipe, with
// diagnostics channels): made now, before the snapshot, so that the ready
// line written after it allocates nothing the snapshot lacks.
const stdout = process.stdout;

const N_REQUESTS = 800;
const N_RENDERS = 200;
const N_STREAMS = 100;
const N_JOBS = 64;

class Payload {
  constructor(id) {
    this.lines = [];
    for (let k = 0; k < 8; k++) this.lines.push(`request ${id} line ${k}: ${'x'.repeat(24)}`);
  }
}

class RequestContext {
  constructor(id) {
    this.id = id;
    this.url = '/orders/' + id;
    this.startedAt = 1700000000000 + id;
    this.payload = new Payload(id);
  }
}

class RenderJob {
  constructor(id) {
    this.id = id;
    this.template = 'order-' + id;
    this.fields = [id, id * 2, 'field-' + id];
  }
}

class StreamState {
  constructor(id) {
    this.id = id;
    this.chunks = ['chunk-' + id + '-a', 'chunk-' + id + '-b'];
  }
}

class QueuedJob {
  constructor(id) {
    this.id = id;
    this.note = 'queued job ' + id;
  }
}

const db = {
  // Never settled: nothing keeps its resolve function.
  ready: new Promise(() => {}),
};

async function authorize(ctx) {
  const rows = await db.ready;
  return rows && ctx.id;
}

async function handle(ctx) {
  const user = await authorize(ctx);
  return user + ctx.payload.lines.length;
}

function render(job) {
  return db.ready
    .then((rows) => job.template + rows)
    .then((html) => html.length + job.fields.length);
}

function* stream(state) {
  const ack = yield state.chunks[0];
  yield state.chunks[1] + ack;
  return state.id;
}

const streams = [];
const sink = [];

function start() {
  for (let i = 0; i < N_REQUESTS; i++) handle(new RequestContext(i));
  for (let i = 0; i < N_RENDERS; i++) render(new RenderJob(i));
  for (let i = 0; i < N_STREAMS; i++) {
    const it = stream(new StreamState(i));
    it.next();
    streams.push(it);
  }
}

// block spins inside the first queued microtask: the ones queued after it
// stay in the queue, and gcore catches a stable heap.
let spinning = true;
function block(outDir) {
  const snapshot = path.join(outDir, 'core-promises.heapsnapshot');
  v8.writeHeapSnapshot(snapshot);
  const report = {
    ready: true,
    pid: process.pid,
    node: process.version,
    snapshot,
    classes: {
      RequestContext: N_REQUESTS,
      Payload: N_REQUESTS,
      RenderJob: N_RENDERS,
      StreamState: N_STREAMS,
      QueuedJob: N_JOBS,
    },
    queued_microtasks: N_JOBS,
  };
  stdout.write(JSON.stringify(report) + '\n');
  let spins = 0;
  while (spinning) spins++;
  return spins;
}

function queueJobs() {
  const resolved = Promise.resolve(0);
  for (let i = 0; i < N_JOBS; i++) {
    const job = new QueuedJob(i);
    if (i % 2 === 0) queueMicrotask(() => sink.push(job.note));
    else resolved.then(() => sink.push(job.id));
  }
}

setInterval(function healthCheck() {
  return db.ready;
}, 60000);
module.exports = { db, streams };

start();
queueMicrotask(() => block(process.argv[2] || '.'));
queueJobs();
