// A quote service that memoizes its price computation. The memo is keyed by the argument object, but every request
// parses its query into a fresh QuoteRequest, so the memo never hits and keeps every request and its Quote: the
// memory splits evenly between the Map's keys and its values.
'use strict';
const http = require('http');

class QuoteRequest {
  constructor(params) {
    this.sku = params.get('sku');
    this.quantity = Number(params.get('qty')) || 1;
    this.currency = params.get('currency') || 'EUR';
    this.customer = params.get('customer') || 'guest';
    this.tags = ['web', this.currency.toLowerCase()];
  }
}

class Quote {
  constructor(request, unitPrice) {
    this.sku = request.sku;
    this.unitPrice = unitPrice;
    this.total = unitPrice * request.quantity;
    this.currency = request.currency;
    this.lines = [{label: 'base', amount: this.total}];
  }
}

function memoize(fn) {
  const cache = new Map();
  return function memoized(arg) {
    if (cache.has(arg)) return cache.get(arg);
    const value = fn(arg);
    cache.set(arg, value);
    return value;
  };
}

const computeQuote = memoize(function computeQuote(request) {
  let h = 0;
  for (const c of request.sku) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return new Quote(request, 5 + (h % 200) / 4);
});

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const quote = computeQuote(new QuoteRequest(url.searchParams));
  res.writeHead(200, {'content-type': 'application/json'});
  res.end(JSON.stringify(quote));
});
server.listen(Number(process.env.PORT) || 0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
module.exports = {computeQuote, server};
