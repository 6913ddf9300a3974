'use strict';
// Allocates at known lines until killed, for the tests that run `heapx capture --sampling/--timeline` on it: the
// capture attaches after the program starts, so the allocations repeat. Each round keeps only its own objects.
let kept = [];
function makeOrder(i) {
  return {id: i, note: 'order-' + i, lines: new Array(8).fill(i)};
}
setInterval(function allocateRound() {
  kept = [];
  for (let i = 0; i < 2000; i++) kept.push(makeOrder(i));
}, 20);
