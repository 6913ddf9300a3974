// An HTTP server without a leak (issue 26): it keeps the last 20
// requests' records in a ring (a bounded cache, line 18), a per-route
// counter object made once per route (line 21), and per-request objects
// that die with the request. It prints its port and serves until a signal
// ends it.
//
// Expected (cmd/heapx/traceservers_linux_test.go): no leak found, though
// the ring fills up over the first 20 requests and the route table over
// the first few.
'use strict';
const http = require('http');
const ring = new Array(20).fill(null);
const routes = new Map();
let served = 0;
const server = http.createServer((req, res) => {
  const url = req.url;
  const route = url.split('?')[0];
  ring[served % ring.length] = { url, at: Date.now() };
  served++;
  let counter = routes.get(route);
  if (counter === undefined) { counter = { route, hits: 0 }; routes.set(route, counter); }
  counter.hits++;
  const body = { ok: true, route, hits: counter.hits };
  res.end(JSON.stringify(body));
});
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port + ' ' + process.pid));
