// The load of `bench/trace-server.sh`: CONNECTIONS keep-alive connections
// each asking for the next of a mix of URLs as soon as the last answered
// (or, with RATE set, RATE requests a second in all), for SECONDS; prints
// requests per second each PERIOD seconds and in all.
//
//   [RATE=N] node load.js PORT SECONDS [CONNECTIONS] [PERIOD]
'use strict';
const http = require('http');
const [port, seconds, connections = 8, period = 30] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const end = Date.now() + seconds * 1000;
const gap = process.env.RATE ? connections * 1000 / Number(process.env.RATE) : 0; // ms between one connection's requests
let done = 0, errors = 0, last = 0, lastAt = Date.now(), n = 0;
function url() {
  n++;
  switch (n % 4) {
    case 0: return '/users/' + (n % 250);
    case 1: return '/pages/p' + (n % 2000) + '?v=' + (n % 3);
    case 2: return '/health';
    default: return '/pages/home';
  }
}
function one() {
  if (Date.now() >= end) return;
  http.get({ port, host: '127.0.0.1', path: url(), agent }, (res) => {
    res.resume();
    res.on('end', () => { done++; if (gap) setTimeout(one, gap); else one(); });
  }).on('error', () => { errors++; setTimeout(one, 10); });
}
for (let i = 0; i < connections; i++) one();
const tick = setInterval(() => {
  const now = Date.now();
  console.log(`${((now - lastAt) / 1000).toFixed(0)} s: ${((done - last) * 1000 / (now - lastAt)).toFixed(0)} req/s`);
  last = done; lastAt = now;
}, period * 1000);
setTimeout(() => {
  clearInterval(tick);
  console.log(`total ${done} requests, ${errors} errors, ${(done / seconds).toFixed(0)} req/s`);
  agent.destroy();
}, seconds * 1000 + 200);
