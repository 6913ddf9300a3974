// An API server whose handlers wait for its configuration, which a config service was to deliver at start-up: the
// service never answers, so `configReady` never settles. Every request parses its body into a RequestContext and
// then awaits authorize() -> loadConfig() -> configReady; the client gives up after a while, but the suspended
// handlers, and their contexts, stay chained on the promise forever.
'use strict';
const http = require('http');

class RequestContext {
  constructor(id, req, body) {
    this.id = id;
    this.method = req.method;
    this.url = req.url;
    this.user = req.headers['x-user'] || 'anonymous';
    this.receivedAt = Date.now();
    this.body = body;            // the parsed JSON payload
    this.log = [];
  }
}

let deliverConfig;               // the config service's callback, never called
const configReady = new Promise(resolve => { deliverConfig = resolve; });

async function loadConfig() {
  const config = await configReady;
  return config;
}

async function authorize(ctx) {
  const config = await loadConfig();
  ctx.log.push('authorized');
  return config.allowedUsers.includes(ctx.user);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', chunk => { data += chunk; });
    req.on('end', () => resolve(data ? JSON.parse(data) : null));
    req.on('error', reject);
  });
}

let nextId = 0;
async function handle(req, res) {
  const ctx = new RequestContext(++nextId, req, await readBody(req));
  if (!(await authorize(ctx))) {
    res.writeHead(403).end();
    return;
  }
  res.writeHead(200, {'content-type': 'application/json'}).end(JSON.stringify({id: ctx.id}));
}

const server = http.createServer((req, res) => {
  handle(req, res).catch(err => { res.writeHead(500).end(String(err)); });
});
server.listen(Number(process.env.PORT) || 0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
module.exports = {deliverConfig, server};
