#!/usr/bin/env node
// Prints Chrome DevTools' Summary view of a snapshot with its filter "Objects allocated between Snapshot 1 and
// Snapshot 2" (or "before Snapshot 1"), as computed by DevTools' own heap snapshot worker: the golden of
// `heapx summary --between/--before/--after`. Every snapshot given is loaded into the worker; the filter's bounds
// are the maxJSObjectId of the snapshots (updateStaticData(), as the Memory panel takes them from its profiles), and
// the rows are aggregatesWithFilter({minNodeId, maxNodeId}) of FILE, the last snapshot given:
//   between A B [FILE]   minNodeId = maxJSObjectId(A), maxNodeId = maxJSObjectId(B) (FILE defaults to B)
//   before A FILE        minNodeId = 0,                maxNodeId = maxJSObjectId(A)
//   after A FILE         minNodeId = maxJSObjectId(A), maxNodeId = maxJSObjectId(FILE)
// Rows are {name, key, count, self_size, retained_size, distance}, largest retained size first, then self size,
// then key. Needs the reference tools set up at /tmp/heapx-peers (../shared/peers/README.md; HEAPX_PEERS to use
// another directory). Usage (from the repo root):
//   for k in 1 2 3; do zcat testdata/node-leak-$k.heapsnapshot.gz > /tmp/node-leak-$k.heapsnapshot; done
//   node testdata/gen/devtools-allocated.mjs between /tmp/node-leak-1.heapsnapshot /tmp/node-leak-2.heapsnapshot \
//     /tmp/node-leak-3.heapsnapshot > testdata/golden/node-leak.devtools-allocated-between-1-2-in-3.json
import fs from 'node:fs';

const [mode, ...files] = process.argv.slice(2);
const counts = {between: [2, 3], before: [2, 2], after: [2, 2]};
if (!counts[mode] || files.length < counts[mode][0] || files.length > counts[mode][1]) {
  console.error('usage: devtools-allocated.mjs between A B [FILE] | before A FILE | after A FILE');
  process.exit(2);
}

if (!Promise.withResolvers) {  // Node 20 lacks it; DevTools' SecondaryInitManager uses it.
  Promise.withResolvers = function() {
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    return {promise, resolve, reject};
  };
}
const peers = process.env.HEAPX_PEERS || '/tmp/heapx-peers';
const {HeapSnapshotLoader, SecondaryInitManager} = await import(peers + '/devtools-bundle.mjs');

// load reads a snapshot into DevTools' worker, as the Memory panel streams it.
async function load(file) {
  const loader = new HeapSnapshotLoader({sendEvent() {}});
  for await (const chunk of fs.createReadStream(file, {encoding: 'utf8', highWaterMark: 1 << 20})) {
    loader.write(chunk);
    await new Promise(r => setImmediate(r));
  }
  loader.close();
  await loader.parsingComplete;
  const channel = new MessageChannel();
  new SecondaryInitManager(channel.port2);
  const snapshot = await loader.buildSnapshot(channel.port1);
  channel.port1.close();
  channel.port2.close();
  return snapshot;
}

// Each snapshot is loaded in turn and only its maxJSObjectId kept, but for the last, FILE.
const maxIds = [];
let snapshot;
for (const [i, file] of files.entries()) {
  const s = await load(file);
  maxIds.push(s.updateStaticData().maxJSObjectId);
  if (i === files.length - 1) snapshot = s;
}
const [minNodeId, maxNodeId] = mode === 'between' ? [maxIds[0], maxIds[1]]
  : mode === 'before' ? [0, maxIds[0]] : [maxIds[0], maxIds[maxIds.length - 1]];
const aggregates = snapshot.aggregatesWithFilter({minNodeId, maxNodeId});
const classes = Object.entries(aggregates).map(([key, a]) => ({
  name: a.name, key, count: a.count, self_size: a.self, retained_size: a.maxRet, distance: a.distance,
}));
classes.sort((a, b) => b.retained_size - a.retained_size || b.self_size - a.self_size || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
const out = {
  peer: 'chrome-devtools-frontend',
  peer_version: JSON.parse(fs.readFileSync(peers + '/node_modules/chrome-devtools-frontend/package.json', 'utf8')).version,
  filter: mode,
  snapshots: files.map(f => f.split('/').pop()),
  max_js_object_ids: maxIds,
  min_node_id: minNodeId,
  max_node_id: maxNodeId,
  count: classes.reduce((n, c) => n + c.count, 0),
  self_size: classes.reduce((n, c) => n + c.self_size, 0),
  classes,
};
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
process.exit(0);
