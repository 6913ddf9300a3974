// A Node.js program that leaks through an event listener, for the tests of
// `heapx capture` (cmd/heapx/capture_test.go). Every 50 ms it handles 100
// requests; each request registers a listener on a long-lived emitter
// whose closure keeps the request alive, so LeakedRequest objects pile up
// at 2,000 a second, allocated at the line marked ALLOCATION. It also
// churns: 2,000 short-lived objects each time, dead at once, allocated at
// the line marked CHURN.
//
//     node listener-leak.js [PIDFILE] [BALLAST]
//
// PIDFILE, when given, receives the process id once the program runs;
// BALLAST (a count, default 0) allocates that many long-lived objects
// first, for a heap whose snapshot takes a while.
'use strict';
const fs = require('node:fs');
const { EventEmitter } = require('node:events');

const bus = new EventEmitter();
bus.setMaxListeners(0);

class LeakedRequest {
  constructor(id) {
    this.id = id;
    this.body = 'request body ' + id;
  }
}

function handle(id) {
  const req = new LeakedRequest(id); // ALLOCATION
  bus.on('shutdown', () => req.id);
}

function churn(n) {
  const scratch = [];
  for (let k = 0; k < n; k++) scratch.push({ k, tag: 'scratch' }); // CHURN
  return scratch.length;
}

globalThis.ballast = [];
for (let i = 0; i < Number(process.argv[3] || 0); i++) globalThis.ballast.push({ i, name: 'ballast ' + i });

let next = 0;
setInterval(() => {
  for (let k = 0; k < 100; k++) handle(next++);
  churn(2000);
}, 50);

if (process.argv[2]) fs.writeFileSync(process.argv[2], String(process.pid));
