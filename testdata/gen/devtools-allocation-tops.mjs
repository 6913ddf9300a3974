#!/usr/bin/env node
// Prints Chrome DevTools' Allocation view (the heap snapshot worker's allocationTracesTops: per function, the
// live objects allocated in it) for a heap snapshot with allocation stacks, as the golden of `heapx sites`.
// Needs the reference tools set up at /tmp/heapx-peers (../shared/peers/README.md). Usage (from the repo root):
//   zcat testdata/node-sites.heapsnapshot.gz > /tmp/node-sites.heapsnapshot
//   node testdata/gen/devtools-allocation-tops.mjs /tmp/node-sites.heapsnapshot > testdata/golden/node-sites.devtools-allocation.json
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
const tops = snapshot.allocationTracesTops()
  .filter(t => t.liveCount > 0)
  .map(t => ({name: t.name, script_name: t.scriptName, line: t.line, column: t.column, live_count: t.liveCount, live_size: t.liveSize}));
tops.sort((a, b) => b.live_size - a.live_size || b.live_count - a.live_count || (a.name + a.script_name + a.line).localeCompare(b.name + b.script_name + b.line));
process.stdout.write(JSON.stringify(tops, null, 1) + '\n');
