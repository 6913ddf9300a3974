'use strict';
// Allocations at known lines, for `heapx sites` (testdata/gen/README.md, "Allocation sites").
const kept = [];
function makeRecord(i) {
  return {id: i, label: 'record-' + i, payload: new Array(16).fill(i)};
}
function makeBuffer() {
  return new Float64Array(256);
}
class Widget { constructor(i) { this.i = i; this.parts = [i, i + 1, i + 2]; } }
for (let i = 0; i < 4000; i++) kept.push(makeRecord(i));
for (let i = 0; i < 400; i++) kept.push(makeBuffer());
for (let i = 0; i < 3000; i++) kept.push(new Widget(i));
globalThis.kept = kept;
if (process.argv[2]) require('v8').writeHeapSnapshot(process.argv[2]);
