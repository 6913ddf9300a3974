// What `heapx capture` costs the program it captures (bench/capture-overhead.sh).
//
//   node capture-overhead.js work N      allocation-heavy loop: N objects, 1 in 100 kept
//                                        (a ring of 20,000), then prints its wall and CPU ms
//   node capture-overhead.js pause N S READY
//                                        keeps N objects, writes READY, then for S seconds
//                                        runs a 1 ms timer and prints the longest gap
//                                        between two ticks: a snapshot's pause
'use strict';
const fs = require('node:fs');
const [mode, nArg, sArg, ready] = process.argv.slice(2);
const n = Number(nArg);

if (mode === 'work') {
  const ring = new Array(20000);
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const o = { id: i, name: 'item ' + i, tags: [i & 7, i & 15] };
    sum += o.tags.length;
    if (i % 100 === 0) ring[(i / 100) % ring.length] = o;
  }
  const c = process.cpuUsage(c0);
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  console.log(`work wall_ms=${wall.toFixed(0)} cpu_ms=${((c.user + c.system) / 1000).toFixed(0)} sum=${sum}`);
  process.exit(0);
} else if (mode === 'pause') {
  globalThis.kept = [];
  for (let i = 0; i < n; i++) globalThis.kept.push({ id: i, name: 'kept ' + i });
  fs.writeFileSync(ready, String(process.pid));
  let last = process.hrtime.bigint();
  let worst = 0;
  const timer = setInterval(() => {
    const now = process.hrtime.bigint();
    worst = Math.max(worst, Number(now - last) / 1e6);
    last = now;
  }, 1);
  setTimeout(() => {
    clearInterval(timer);
    console.log(`pause max_gap_ms=${worst.toFixed(0)}`);
    process.exit(0);
  }, Number(sArg) * 1000);
} else {
  console.error('usage: capture-overhead.js work N | pause N SECONDS READYFILE');
  process.exit(2);
}
