// Writes three heap snapshots of a Node process whose linked list of `Item`s grows (issue 12.1): the
// list holds N items at the first snapshot and 2N at the second and at the third, so memlab's leak detection
// (allocated between the first two, alive in the third) finds N leaked items in one chain. Prints the heap
// snapshot id of the list's tail, for `heapx paths --id`.
//
// Usage: node linked-list.js N OUT_PREFIX   -> OUT_PREFIX-1.heapsnapshot, -2, -3
'use strict';
const v8 = require('node:v8');
const inspector = require('node:inspector');

const n = Number(process.argv[2]);
const prefix = process.argv[3];
if (!(n > 0) || !prefix) {
  console.error('usage: node linked-list.js N OUT_PREFIX');
  process.exit(2);
}

class Item {
  constructor(i, next) {
    this.i = i;
    this.payload = 'item ' + i;
    this.next = next;
  }
}

globalThis.list = null;
function grow(k) {
  for (let i = 0; i < k; i++) globalThis.list = new Item(i, globalThis.list);
}

grow(n);
v8.writeHeapSnapshot(prefix + '-1.heapsnapshot');
grow(n);
v8.writeHeapSnapshot(prefix + '-2.heapsnapshot');
v8.writeHeapSnapshot(prefix + '-3.heapsnapshot');

// The tail is the first item made: the end of the chain from the head.
let tail = globalThis.list;
while (tail.next) tail = tail.next;
globalThis.tail = tail;
const session = new inspector.Session();
session.connect();
session.post('HeapProfiler.enable', () => {
  session.post('Runtime.evaluate', { expression: 'globalThis.tail' }, (err, r) => {
    if (err) throw err;
    session.post('HeapProfiler.getHeapObjectId', { objectId: r.result.objectId }, (err2, id) => {
      if (err2) throw err2;
      console.log(id.heapSnapshotObjectId);
      session.disconnect();
    });
  });
});
