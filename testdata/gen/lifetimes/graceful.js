// A server that shuts down on its own terms (issue 26): on SIGINT or
// SIGTERM it stops accepting, waits a second and a half for its requests
// to finish, prints how many signals it received and exits. It counts the
// SIGINT listeners before adding its own, as libraries such as
// signal-exit do.
//
// Expected (cmd/heapx/traceservers_linux_test.go): a Ctrl-C to the process
// group reaches it once (heapx does not pass on a signal the program got
// itself), it sees no listener of heapx's, and the trace ends with its
// process.exit after the SIGINT.
'use strict';
const http = require('http');
const before = process.listenerCount('SIGINT') + process.listeners('SIGTERM').length;
let signals = 0;
const server = http.createServer((req, res) => res.end('ok'));
function shutdown() {
  signals++;
  if (signals > 1) return;
  server.close();
  setTimeout(() => { console.log(JSON.stringify({ signals })); process.exit(0); }, 1500);
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port + ' ' + process.pid + ' ' + before));
