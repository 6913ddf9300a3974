#!/usr/bin/env node
// Runs the everyday leak shapes of shapes/ (each a small real HTTP server) under the Node that runs this script,
// makes real requests to each from this process, and takes memlab's three snapshots inside the server (baseline
// after a warm-up, target after the leaking requests, final after as many more), for `heapx suspects`' tests.
//
// Usage (from the repo root; see testdata/gen/README.md, "Suspect shapes"):
//   node testdata/gen/suspects/make-shapes.js [OUT_DIR=testdata/suspects/shapes] [--only=memo-cache,...] [--keep-raw=DIR]
//
// Writes OUT_DIR/<shape>-node<major>.heapsnapshot.gz (gzip -9 -n of the final snapshot) and prints one JSON line
// per shape. --keep-raw=DIR also keeps the three raw snapshots (<shape>-node<major>-{1,2,3}.heapsnapshot) there,
// for memlab's find-leaks. Each server runs in a process of its own, `node --require shapes/snapshot-hook.js
// shapes/<shape>.js`, and is stopped with SIGINT (Ctrl-C) after the last snapshot.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const {spawn, spawnSync} = require('child_process');

// Each shape's requests per step (between two snapshots), and how to make one.
const SHAPES = {
  // POSTs a JSON body; the handler never answers, so the client gives up after 100 ms.
  'pending-promise': {requests: 150, request: (i) => ({method: 'POST', path: '/orders',
    headers: {'content-type': 'application/json', 'x-user': 'user-' + (i % 50)},
    body: JSON.stringify({order: i, items: Array.from({length: 6}, (_, k) => ({sku: 'SKU-' + ((i + k) % 97), qty: k + 1})),
                          note: 'deliver between 9 and 17, ring twice'}),
    abortAfterMs: 100})},
  // One reload in four requests; the others read prices.
  'closure-chain': {requests: 1200, request: (i) => (i % 4 === 0 ? {method: 'POST', path: '/reload'}
                                                                 : {method: 'GET', path: '/price?sku=SKU-' + (i % 40)})},
  'memo-cache': {requests: 2000, request: (i) => ({method: 'GET',
    path: `/quote?sku=SKU-${i % 300}&qty=${1 + (i % 5)}&customer=c${i % 70}&currency=${i % 3 ? 'EUR' : 'USD'}`})},
  'emitter-server': {requests: 1000, request: (i) => ({method: 'GET', path: '/page/' + i})},
  'map-server': {requests: 1500, request: (i) => ({method: 'GET', path: '/items/' + (i % 500) + '?view=full'})},
};
const WARMUP = 20;          // requests before the baseline, so that lazily made objects are there from the start
const PAUSE_MS = 200;
const CONCURRENCY = 20;

const sleep = ms => new Promise(r => setTimeout(r, ms));

// send makes one request on agent and resolves when it is answered or given up.
function send(port, agent, spec) {
  return new Promise(resolve => {
    const req = http.request({host: '127.0.0.1', port, agent, method: spec.method, path: spec.path,
                              headers: {'user-agent': 'make-shapes/1.0', ...spec.headers}}, res => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    if (spec.abortAfterMs) setTimeout(() => { req.destroy(); resolve(-1); }, spec.abortAfterMs);
    req.end(spec.body);
  });
}

// run makes count requests of shape, from number first on, CONCURRENCY at a time.
async function run(port, agent, shape, first, count) {
  let next = first;
  const worker = async () => {
    while (next < first + count) await send(port, agent, SHAPES[shape].request(next++));
  };
  await Promise.all(Array.from({length: CONCURRENCY}, worker));
}

async function makeShape(shape, rawDir) {
  const major = process.versions.node.split('.')[0];
  const here = path.join(__dirname, 'shapes');
  const child = spawn(process.execPath, ['--require', path.join(here, 'snapshot-hook.js'), path.join(here, shape + '.js')],
                      {stdio: ['ignore', 'pipe', 'inherit', 'ipc']});
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', d => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', code => reject(new Error(`${shape} exited with ${code} before listening`)));
  });
  const snapshot = step => new Promise(resolve => {
    const file = path.join(rawDir, `${shape}-node${major}-${step}.heapsnapshot`);
    child.once('message', () => resolve(file));
    child.send({snapshot: file});
  });
  const agent = new http.Agent({keepAlive: true, maxSockets: CONCURRENCY});
  const n = SHAPES[shape].requests;
  await run(port, agent, shape, 0, WARMUP);
  await sleep(PAUSE_MS);
  const files = [await snapshot(1)];
  await run(port, agent, shape, WARMUP, n);
  await sleep(PAUSE_MS);
  files.push(await snapshot(2));
  await run(port, agent, shape, WARMUP + n, n);
  await sleep(PAUSE_MS);
  files.push(await snapshot(3));
  agent.destroy();
  const exited = new Promise(resolve => child.on('exit', resolve));
  child.kill('SIGINT');
  await exited;
  return {files, requests: WARMUP + 2 * n};
}

async function main() {
  const args = process.argv.slice(2);
  const outDir = args.find(a => !a.startsWith('--')) || path.join('testdata', 'suspects', 'shapes');
  const keepRaw = (args.find(a => a.startsWith('--keep-raw=')) || '').slice(11);
  const only = (args.find(a => a.startsWith('--only=')) || '--only=' + Object.keys(SHAPES).join(',')).slice(7).split(',');
  fs.mkdirSync(outDir, {recursive: true});
  const rawDir = keepRaw || fs.mkdtempSync(path.join(os.tmpdir(), 'heapx-suspect-shapes-'));
  fs.mkdirSync(rawDir, {recursive: true});
  for (const shape of only) {
    if (!SHAPES[shape]) throw new Error('unknown shape ' + shape + '; shapes: ' + Object.keys(SHAPES).join(', '));
    const {files, requests} = await makeShape(shape, rawDir);
    const final = files[2];
    const gz = path.join(outDir, path.basename(final).replace(/-3\.heapsnapshot$/, '.heapsnapshot.gz'));
    const g = spawnSync('gzip', ['-9', '-n', '-c', final], {maxBuffer: 1 << 30});
    if (g.status !== 0) throw new Error('gzip failed for ' + final);
    fs.writeFileSync(gz, g.stdout);
    const rawBytes = fs.statSync(final).size;
    if (!keepRaw) files.forEach(f => fs.unlinkSync(f));
    process.stdout.write(JSON.stringify({shape, requests, gz, raw_bytes: rawBytes, gz_bytes: g.stdout.length,
                                         node: process.version}) + '\n');
  }
  if (!keepRaw) fs.rmSync(rawDir, {recursive: true, force: true});
}

main().catch(e => { console.error(e); process.exit(1); });
