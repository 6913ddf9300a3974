// A Node.js program that keeps objects in two phases a second apart and
// churns short-lived objects meanwhile, for the tests of `heapx timeline`
// and `heapx sites --churn` (cmd/heapx/timeline_test.go). About a second
// after it starts it allocates and keeps 4,000 PhaseOne objects (the line
// marked PHASE ONE), a second later 6,000 PhaseTwo objects (PHASE TWO),
// each one heap object (small integers are stored in it), in an array of
// their own. Every 20 ms it allocates 2,000 objects that die at once (the
// line marked CHURN), until stopped. (It does not stop by itself: while
// allocations are tracked, Node's inspector keeps a program's event loop
// alive anyway.)
//
// V8 names the allocating function: the constructor, or the arrow function
// on the marked line once the constructor is inlined into it; churn(), or
// the interval's callback once churn() is inlined into it.
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

function churn(n) {
  const scratch = [];
  for (let k = 0; k < n; k++) scratch.push({ k, tag: 'scratch' }); // CHURN
  return scratch.length;
}

let churned = 0;
setInterval(() => { churned += churn(2000); }, 20);
setTimeout(() => {
  keep(4000, (i) => new PhaseOne(i)); // PHASE ONE
  setTimeout(() => {
    keep(6000, (i) => new PhaseTwo(i)); // PHASE TWO
  }, 1000);
}, 1000);
