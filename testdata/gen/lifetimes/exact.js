// The exactness check (issue 18): objects that the lifetime analysis says
// became unreachable are compared with V8's own answer. Every probed
// object is watched by a WeakRef; at each checkpoint, a macrotask of its
// own, the program forces a full GC (node --expose-gc) and asks each
// WeakRef whether its object is still there. It prints one JSON line per
// checkpoint: {"checkpoint": k, "alive": {name: true|false}}.
//
// cmd/heapx/casestudies_test.go traces it, finds the time of each
// checkpoint (the k-th call of checkpoint()) and requires, for every probe
// and checkpoint, that the analysis says "dead by then" exactly when V8
// collected the object: none still reachable, none missed. The probes
// cover cycles, closures (captured and not), generators, Maps and
// classes. A probe's name is its allocation's line's "probe:" comment.
'use strict';
const probes = new Map();
function probe(name, obj) {
  probes.set(name, new WeakRef(obj));
  return obj;
}
let k = 0;
function checkpoint() {
  globalThis.gc();
  const alive = {};
  for (const [name, ref] of probes) alive[name] = ref.deref() !== undefined;
  process.stdout.write(JSON.stringify({ checkpoint: k++, alive }) + '\n');
}

class Tree {
  constructor() {
    this.child = probe('classChild', { leaf: true }); // probe:classChild
  }
}
function makeCounter() {
  const big = probe('captured', { n: 1 }); // probe:captured
  const unused = probe('uncaptured', { n: 2 }); // probe:uncaptured
  unused.n++;
  return () => big.n++;
}
function* walk() {
  const local = probe('genLocal', { x: 3 }); // probe:genLocal
  yield 1;
  yield local.x;
}

const keep = {};
const steps = [
  () => {
    const a = probe('cycleA', { name: 'a' }); // probe:cycleA
    const b = probe('cycleB', { name: 'b' }); // probe:cycleB
    a.next = b;
    b.next = a;
    keep.cycle = a;
    keep.counter = makeCounter();
    keep.tree = probe('classTree', new Tree()); // probe:classTree
    keep.map = new Map();
    keep.key = probe('mapKey', { key: 1 }); // probe:mapKey
    keep.map.set(keep.key, probe('mapValue', { value: 1 })); // probe:mapValue
    keep.it = walk();
    keep.it.next();
  },
  () => {
    keep.cycle = null;
    keep.counter();
    keep.map.delete(keep.key);
    keep.it.next();
  },
  () => {
    keep.counter = null;
    keep.tree = null;
    keep.key = null;
    keep.it.next();
  },
];

let step = 0;
function run() {
  steps[step++]();
  setImmediate(() => {
    checkpoint();
    if (step < steps.length) setImmediate(run);
  });
}
setImmediate(run);
