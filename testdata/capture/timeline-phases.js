// A Node.js program that keeps objects in two phases a second apart, for
// the test of `heapx timeline` (cmd/heapx/timeline_test.go): about a second
// after it starts it allocates and keeps 4,000 PhaseOne objects (the line
// marked PHASE ONE), a second later 6,000 PhaseTwo objects (PHASE TWO),
// each one heap object (small integers are stored in it), in an array of
// their own. Every 20 ms it also churns short-lived objects that die at
// once. Then it idles until stopped. V8 names the allocating function:
// the constructor, or the arrow function on the marked line once the
// constructor is inlined into it.
'use strict';

class PhaseOne {
  constructor(i) { this.i = i; }
}

class PhaseTwo {
  constructor(i) { this.i = i; this.j = i + 1; }
}

globalThis.kept = [];
function keep(n, make) {
  const all = new Array(n);
  for (let i = 0; i < n; i++) all[i] = make(i);
  globalThis.kept.push(all);
}

let scratch = 0;
setInterval(() => {
  for (let i = 0; i < 200; i++) scratch += [i, i + 1].length;
}, 20);
setTimeout(() => {
  keep(4000, (i) => new PhaseOne(i)); // PHASE ONE
  setTimeout(() => keep(6000, (i) => new PhaseTwo(i)), 1000); // PHASE TWO
}, 1000);
