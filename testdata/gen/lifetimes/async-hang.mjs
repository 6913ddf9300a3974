// An async/await service whose requests to /slow await a promise that
// never settles (issue 26): a lookup waits for a reply that never comes,
// and nothing holds the promise. Each such request's context (line 15)
// stays with its suspended call; the other requests finish. It prints its
// port and serves until a signal ends it.
//
// Expected (cmd/heapx/traceservers_linux_test.go): line 15 is a leak held
// by the calls suspended at line 16's await, with a warning that the
// trace cannot see the promise (V8 frees such calls when nothing holds
// their promise); the idle points are the returns to the event loop, not
// the awaits.
import http from 'node:http';
const neverReplies = () => new Promise(() => {});
async function handle(req, res) {
  const ctx = { url: req.url, started: Date.now(), trail: [] };
  if (req.url.startsWith('/slow')) await neverReplies();
  ctx.trail.push('answered');
  await Promise.resolve();
  res.end(JSON.stringify({ ok: true, trail: ctx.trail.length }));
}
const server = http.createServer((req, res) => { handle(req, res); });
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port + ' ' + process.pid));
