// Case study 1 (MemInsight §2, the "shopping list" app): a framework
// caches the event-handler closures of elements; the app removes the
// elements by dropping its list (innerHTML = "" instead of
// $(...).empty()), so the handlers stay cached, and each keeps its element
// through its closure (drag through a closure).
//
// Expected (cmd/heapx/casestudies_test.go): the handlers (line 16) and the
// elements (line 15) are leaks: 10 more stale at each of the 5 idle
// points before the end (0 10 20 30 40), 50 of each alive at the end; an element's
// access path goes through its handler's closure scope and the cache.
'use strict';
const handlers = new Map(); // the framework's handler cache, by element id
let list = []; // the elements on the page
function addItem(id) {
  const element = { id, label: 'item ' + id };
  const onClick = () => { element.label += ' (clicked)'; };
  handlers.set(id, onClick);
  list.push(element);
}

function render(round) {
  for (let i = 0; i < 10; i++) addItem(round * 10 + i);
  return list.length;
}

function clearList() {
  list = []; // the bug: the handlers stay in the cache
}

let round = 0;
function frame() {
  render(round);
  clearList();
  round++;
  if (round < 5) setImmediate(frame);
}
setImmediate(frame);
