// A price service that reloads its price table on POST /reload and answers GET /price?sku=. reload() keeps the
// table it replaces in `previous` for a change summary that only its own closure `changes` reads; but the closures
// made in one call share one context, so the new table's `describe` keeps `previous` too, and every table ever
// loaded stays reachable from `current` (the V8 shared-context closure leak).
'use strict';
const http = require('http');

class PriceTable {
  constructor(version, rows) {
    this.version = version;
    this.loadedAt = Date.now();
    this.rows = rows;
    this.describe = null;
  }
}

function loadRows(version) {
  const rows = [];
  for (let i = 0; i < 40; i++) rows.push({sku: 'SKU-' + i, price: 10 + ((i * 7 + version) % 90), currency: 'EUR'});
  return rows;
}

let current = null;
function reload(version) {
  const previous = current;
  const table = new PriceTable(version, loadRows(version));
  const changes = () => (previous ? table.rows.length - previous.rows.length : table.rows.length);
  table.describe = () => `prices v${table.version}, ${table.rows.length} rows`;
  current = table;
  return changes();
}

let version = 0;
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  if (req.method === 'POST' && url.pathname === '/reload') {
    const delta = reload(++version);
    res.end(JSON.stringify({version, delta}));
    return;
  }
  const row = current && current.rows.find(r => r.sku === url.searchParams.get('sku'));
  res.writeHead(row ? 200 : 404, {'content-type': 'application/json'});
  res.end(JSON.stringify(row ? {price: row.price, table: current.describe()} : {}));
});
server.listen(Number(process.env.PORT) || 0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
module.exports = {reload, server};
