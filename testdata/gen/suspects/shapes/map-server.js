// A server that logs every request in a module-level Map for a /stats endpoint, and never evicts an entry.
'use strict';
const http = require('http');

class RequestRecord {
  constructor(id, req) {
    this.id = id;
    this.method = req.method;
    this.url = req.url;
    this.headers = {...req.headers};
    this.at = Date.now();
    this.timings = {parse: 0, handle: 0, send: 0};
  }
}

const requestLog = new Map();
let nextId = 0;

const server = http.createServer((req, res) => {
  const id = ++nextId;
  const record = new RequestRecord(id, req);
  requestLog.set(id, record);
  if (req.url === '/stats') {
    res.end(JSON.stringify({requests: requestLog.size}));
    return;
  }
  record.timings.handle = 1;
  res.writeHead(200, {'content-type': 'text/plain'});
  res.end('ok ' + id);
});
server.listen(Number(process.env.PORT) || 0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
module.exports = {requestLog, server};
