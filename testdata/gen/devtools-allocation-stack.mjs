#!/usr/bin/env node
// Prints Chrome DevTools' Allocation stack pane (the heap snapshot worker's allocationStack) of objects of a heap
// snapshot with allocation stacks, as JSON lines {class, id, stack}: for an argument that is a number, the object with
// that id; else the first object or closure of that name that has a stack. The tests of
// `heapx paths --id` and the serve inspector compare with it. Needs the reference tools set up at /tmp/heapx-peers
// (../shared/peers/README.md). Usage (from the repo root):
//   zcat testdata/node-sites.heapsnapshot.gz > /tmp/node-sites.heapsnapshot
//   node testdata/gen/devtools-allocation-stack.mjs /tmp/node-sites.heapsnapshot Widget 48425
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
for (const name of process.argv.slice(3)) {
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
