// A server for `bench/trace-server.sh` (docs/benchmarks.md, "heapx trace on
// a server"): express-style routing through a middleware chain, a bounded
// LRU cache of rendered pages keyed by URL, JSON bodies, per-request
// emitters and closures, and no leak, so that its memory, traced or not,
// should stay flat however long it runs. It prints its port and pid.
'use strict';
const http = require('http');
const { EventEmitter } = require('events');

class LRU {
  constructor(max) { this.max = max; this.map = new Map(); }
  get(k) { const v = this.map.get(k); if (v !== undefined) { this.map.delete(k); this.map.set(k, v); } return v; }
  set(k, v) { this.map.set(k, v); if (this.map.size > this.max) this.map.delete(this.map.keys().next().value); }
}

const cache = new LRU(500);
const stats = { requests: 0, byRoute: new Map() };
const users = new Map();
for (let i = 0; i < 200; i++) users.set(String(i), { id: i, name: 'user ' + i, tags: ['a', 'b', String(i % 7)] });

function router() {
  const routes = [];
  const app = (req, res) => {
    const ctx = { req, res, params: {}, query: {}, events: new EventEmitter(), started: Date.now() };
    const [path, qs = ''] = req.url.split('?');
    for (const kv of qs.split('&')) { if (kv) { const [k, v] = kv.split('='); ctx.query[k] = v; } }
    let i = 0;
    const next = () => {
      while (i < routes.length) {
        const r = routes[i++];
        const m = r.pattern.exec(path);
        if (m) { ctx.params = m.groups || {}; return r.handler(ctx, next); }
      }
      res.statusCode = 404; res.end('{}');
    };
    ctx.events.once('done', () => { stats.requests++; });
    next();
  };
  app.use = (pattern, handler) => routes.push({ pattern, handler });
  return app;
}

const app = router();
app.use(/^/, (ctx, next) => { const r = ctx.req.url.split('/')[1]; stats.byRoute.set(r, (stats.byRoute.get(r) || 0) + 1); next(); });
app.use(/^\/users\/(?<id>\d+)$/, (ctx) => {
  const u = users.get(ctx.params.id);
  send(ctx, u ? { user: u, friends: u.tags.map((t) => ({ tag: t, n: t.length })) } : { error: 'no such user' });
});
app.use(/^\/pages\/(?<name>\w+)$/, (ctx) => {
  const key = ctx.req.url;
  let page = cache.get(key);
  if (page === undefined) { page = { name: ctx.params.name, body: 'page ' + ctx.params.name + ' '.repeat(64), q: ctx.query }; cache.set(key, page); }
  send(ctx, page);
});
app.use(/^\/health$/, (ctx) => send(ctx, { ok: true, requests: stats.requests }));

function send(ctx, body) {
  ctx.res.setHeader('content-type', 'application/json');
  ctx.res.end(JSON.stringify(body));
  ctx.events.emit('done');
}

const server = http.createServer(app);
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port + ' ' + process.pid));
