#!/usr/bin/env node
// Writes the fixtures of the paths a person reads (testdata/paths): real servers under real requests, each
// captured from outside by heapx capture (so nothing of the snapshot's own making is on the stack, and each
// snapshot has its scripts side file), three snapshots per run, memlab's baseline, target and final.
//
// Usage (from the repo root; see testdata/gen/README.md):
//   go build -o /tmp/heapx ./cmd/heapx
//   node testdata/gen/make-paths-fixtures.js /tmp/heapx testdata/paths [--node=PATH] [--only=http-map,...]
//
// Writes OUT/<program>-node<major>-{1,2,3}.heapsnapshot.gz and their .scripts.jsonl side files. The programs
// are testdata/gen/paths/<program>.js; each prints its port first. Between snapshots this process (the client,
// another process) sends WARM requests before the baseline, then REQUESTS before each of the other two, one at
// a time over fresh connections, and asks heapx for each snapshot with SIGUSR1.
'use strict';
const {spawn, execFileSync} = require('child_process');
const http = require('http');
const path = require('path');
const readline = require('readline');

const PROGRAMS = ['http-map', 'emitter-listeners'];
const WARM = 100;
const REQUESTS = 600;

const args = process.argv.slice(2);
const heapx = args[0];
const out = args[1];
const opt = name => (args.find(a => a.startsWith('--' + name + '=')) || '').split('=')[1];
const node = opt('node') || process.execPath;
const only = opt('only') ? opt('only').split(',') : PROGRAMS;
if (!heapx || !out) {
  console.error('usage: make-paths-fixtures.js HEAPX OUT_DIR [--node=PATH] [--only=' + PROGRAMS.join(',') + ']');
  process.exit(2);
}
const major = execFileSync(node, ['-p', 'process.versions.node.split(".")[0]']).toString().trim();

function get(port, i) {
  return new Promise((resolve, reject) => {
    const req = http.get({host: '127.0.0.1', port, path: '/items/' + i + '?q=' + (i * 7919 % 1000), agent: false,
      headers: {'user-agent': 'paths-fixture/1.0'}}, res => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
  });
}

async function requests(port, from, n) {
  for (let i = from; i < from + n; i++) await get(port, i);
}

async function run(program) {
  const file = path.join(out, `${program}-node${major}.heapsnapshot.gz`);
  const child = spawn(heapx, ['capture', '--count', '3', '-o', file, '--', node, path.join(__dirname, 'paths', program + '.js')],
    {stdio: ['ignore', 'pipe', 'pipe']});
  const lines = [];
  let waiting = null;
  const onLine = line => {
    lines.push(line);
    if (waiting && waiting.test(line)) {
      const w = waiting;
      waiting = null;
      w.resolve(line);
    }
  };
  readline.createInterface({input: child.stdout}).on('line', onLine);
  readline.createInterface({input: child.stderr}).on('line', onLine);
  const expect = re => new Promise(resolve => {
    const seen = lines.find(l => re.test(l));
    if (seen) return resolve(seen);
    waiting = {test: l => re.test(l), resolve};
  });
  const port = Number(await expect(/^\d+$/));
  let sent = 0;
  for (const [i, n] of [WARM, REQUESTS, REQUESTS].entries()) {
    await requests(port, sent, n);
    sent += n;
    child.kill('SIGUSR1');
    const wrote = await expect(new RegExp(`wrote .*-${i + 1}\\.heapsnapshot\\.gz`));
    console.log(JSON.stringify({program, node: major, snapshot: i + 1, requests: sent, wrote}));
  }
  const code = await new Promise(resolve => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${program}: heapx capture exited with ${code}:\n${lines.join('\n')}`);
}

(async () => {
  for (const p of only) await run(p);
})().catch(e => {
  console.error(e);
  process.exit(1);
});
