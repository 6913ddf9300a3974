// An HTTP server that leaks one object per request (issue 26): every
// request's RequestRecord (line 16) is kept in a module-level list no one
// reads, while the response body (line 17) dies with its request. It
// prints its port and serves until a signal ends it.
//
// Expected (cmd/heapx/traceservers_linux_test.go): traced under real
// requests and then interrupted (Ctrl-C to the process group, or SIGTERM
// to node), the trace holds every request; line 16 is a leak, one more
// stale object per request, held by the module's records; line 17 is not.
'use strict';
const http = require('http');
const records = [];
class RequestRecord { constructor(url, at) { this.url = url; this.at = at; this.headers = {}; } }
const server = http.createServer((req, res) => {
  const url = req.url;
  records.push(new RequestRecord(url, Date.now()));
  const body = { ok: true, url, served: records.length };
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
});
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port + ' ' + process.pid));
