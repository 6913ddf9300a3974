#!/usr/bin/env node
// Prints Chrome DevTools' timeline samples (the heap snapshot worker's getSamples: per sample, its time, the last object id
// assigned by then and the self size of the live objects numbered in its interval) of a heap timeline, as the golden of
// `heapx timeline`.
// Needs the reference tools set up at /tmp/heapx-peers (../shared/peers/README.md). Usage (from the repo root):
//   zcat testdata/node-timeline.heaptimeline.gz > /tmp/node-timeline.heaptimeline
//   node testdata/gen/devtools-timeline-samples.mjs /tmp/node-timeline.heaptimeline > testdata/golden/node-timeline.devtools-samples.json
import fs from 'node:fs';

if (!Promise.withResolvers) {  // Node 20 lacks it; DevTools' SecondaryInitManager uses it.
  Promise.withResolvers = function() {
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    return {promise, resolve, reject};
  };
}
const peers = process.env.HEAPX_PEERS || '/tmp/heapx-peers';
const {HeapSnapshotLoader, SecondaryInitManager} = await import(peers + '/devtools-bundle.mjs');
const loader = new HeapSnapshotLoader({sendEvent() {}});
for await (const chunk of fs.createReadStream(process.argv[2], {encoding: 'utf8', highWaterMark: 1 << 20})) {
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
const s = snapshot.getSamples();
const out = s.timestamps.map((t, i) => ({timestamp_ms: t, last_assigned_id: s.lastAssignedIds[i], size: s.sizes[i]}));
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
