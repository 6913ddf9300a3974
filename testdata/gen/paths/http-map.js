'use strict';
// An HTTP server that keeps a context per request in a module-scope Map and never deletes it: the leak of
// testdata/paths/http-map-*. make-paths-fixtures.js runs it under heapx capture and sends it real requests from
// another process. It prints its port on its first line.
const http = require('http');

class RequestContext {
  constructor(req, id) {
    this.id = id;
    this.method = req.method;
    this.url = req.url;
    this.userAgent = req.headers['user-agent'];
    this.receivedAt = Date.now();
  }
}

const requestLog = new Map();
let nextId = 0;

function handle(req, res) {
  const ctx = new RequestContext(req, nextId++);
  requestLog.set(ctx.id, ctx);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({id: ctx.id, logged: requestLog.size}));
}

const server = http.createServer(handle);
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
