#!/usr/bin/env node
// Prints what Chrome DevTools' heap snapshot worker says of a snapshot's allocation tracking, as goldens:
//   tops     its Allocation view (allocationTracesTops: per function, the live objects allocated in it), for a snapshot
//            with allocation stacks: the golden of `heapx sites`;
//   samples  its timeline samples (getSamples: per sample, its time, the last object id assigned by then and the self
//            size of the live objects numbered in its interval), for a heap timeline: the golden of `heapx timeline`;
//   stack    its Allocation stack pane (allocationStack) of objects, as JSON lines {class, id, stack}: for a NAME that
//            is a number, the object with that id; else the first object or closure of that name that has a stack.
//            The tests of `heapx paths --id` and the serve inspector compare with it.
// Needs the reference tools set up at /tmp/heapx-peers (../shared/peers/README.md). Usage (from the repo root):
//   zcat testdata/node-sites.heapsnapshot.gz > /tmp/node-sites.heapsnapshot
//   node testdata/gen/devtools-allocation.mjs tops /tmp/node-sites.heapsnapshot > testdata/golden/node-sites.devtools-allocation.json
//   zcat testdata/node-timeline.heaptimeline.gz > /tmp/node-timeline.heaptimeline
//   node testdata/gen/devtools-allocation.mjs samples /tmp/node-timeline.heaptimeline > testdata/golden/node-timeline.devtools-samples.json
//   node testdata/gen/devtools-allocation.mjs stack /tmp/node-sites.heapsnapshot Widget 48425
import fs from 'node:fs';

const mode = process.argv[2];
if (mode !== 'tops' && mode !== 'samples' && mode !== 'stack') {
  console.error('usage: devtools-allocation.mjs tops|samples FILE, or stack FILE NAME...');
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
const loader = new HeapSnapshotLoader({sendEvent() {}});
for await (const chunk of fs.createReadStream(process.argv[3], {encoding: 'utf8', highWaterMark: 1 << 20})) {
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
if (mode === 'tops') {
  const tops = snapshot.allocationTracesTops()
    .filter(t => t.liveCount > 0)
    .map(t => ({name: t.name, script_name: t.scriptName, line: t.line, column: t.column, live_count: t.liveCount, live_size: t.liveSize}));
  tops.sort((a, b) => b.live_size - a.live_size || b.live_count - a.live_count || (a.name + a.script_name + a.line).localeCompare(b.name + b.script_name + b.line));
  process.stdout.write(JSON.stringify(tops, null, 1) + '\n');
} else if (mode === 'samples') {
  const s = snapshot.getSamples();
  const out = s.timestamps.map((t, i) => ({timestamp_ms: t, last_assigned_id: s.lastAssignedIds[i], size: s.sizes[i]}));
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
} else {
  for (const name of process.argv.slice(4)) {
    for (let it = snapshot.allNodes(); it.hasNext(); it.next()) {
      const node = it.item();
      if (/^[0-9]+$/.test(name) ? node.id() !== Number(name) : node.name() !== name || node.type() !== 'object' && node.type() !== 'closure') continue;
      const stack = snapshot.allocationStack(node.nodeIndex);
      if (!stack) continue;
      process.stdout.write(JSON.stringify({class: node.name(), id: node.id(),
        stack: stack.map(f => ({function: f.functionName, script: f.scriptName, line: f.line, column: f.column}))}) + '\n');
      break;
    }
  }
}
