#!/usr/bin/env node
// Prints memlab's verdict (@memlab/core 2.0.5, ClusterUtils.isSimilarTrace, the test memlab's default
// TraceSimilarityStrategy clusters leak traces with) on pseudo-random pairs of leak traces, as JSON, for
// analysis.traceSimilarity's golden file.
//
// Usage: node memlab-similarity.cjs PEERS_DIR [PAIRS=2000] | gzip -9 -n > analysis/testdata/memlab-similarity.json.gz
//
// Traces alternate nodes ({kind:'node', name, type}) and edges ({kind:'edge', name_or_index, type}) from
// the root, as NormalizedTrace.pathToTrace makes them. The second trace of a pair is the first with a few
// changes (an element renamed, retyped, dropped, added, the tail cut or extended), so the pairs straddle
// memlab's 0.8 threshold. The generator is seeded: the output is the same on every run.
'use strict';
const path = require('path');
const [peers, pairsArg] = process.argv.slice(2);
const ClusterUtils = require(path.join(peers, 'node_modules', '@memlab/core/dist/trace-cluster/ClusterUtils')).default;

let seed = 12345;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = a => a[Math.floor(rand() * a.length)];
const nodeNames = ['global', 'Object', 'Array', 'Map', 'Session', 'Timeout', 'system / Context', 'onWork', 'Window / x', 'Window / y'];
const nodeTypes = ['object', 'closure', 'array', 'synthetic'];
const edgeNames = ['bus', 'cache', 'next', '_idlePrev', 'tok_a1', 'tok_b2', 0, 1, 7, '12', '3.5', '08'];
const edgeTypes = ['property', 'element', 'internal', 'context'];
const node = () => ({kind: 'node', name: pick(nodeNames), type: pick(nodeTypes)});
const edge = () => ({kind: 'edge', name_or_index: pick(edgeNames), type: pick(edgeTypes)});
function trace(n) {
  const t = [{kind: 'node', name: '', type: 'synthetic'}];
  for (let i = 0; i < n; i++) t.push(edge(), node());
  return t;
}
function mutate(t) {
  t = t.map(e => Object.assign({}, e));
  const k = 1 + Math.floor(rand() * 4);
  for (let j = 0; j < k; j++) {
    const op = Math.floor(rand() * 5);
    const i = 1 + Math.floor(rand() * (t.length - 1));
    if (op === 0) t[i] = t[i].kind === 'node' ? node() : edge();
    else if (op === 1) t[i].type = t[i].kind === 'node' ? pick(nodeTypes) : pick(edgeTypes);
    else if (op === 2 && t.length > 3) t.splice(i - (i % 2 === 0 ? 1 : 0), 2);
    else if (op === 3) t.splice(i + (i % 2), 0, edge(), node());
    else if (t.length > 3) t.length = Math.max(3, t.length - 2 * Math.floor(rand() * 3));
  }
  return t;
}
// Each trace is written as strings: "n|type|name" for a node, "e|type|name" for an edge, with "=" before
// a name that was a JS number (an element index). A changed trace need not alternate nodes and edges.
const compact = t => t.map(e => e.kind === 'node' ? 'n|' + e.type + '|' + e.name
  : 'e|' + e.type + '|' + (typeof e.name_or_index === 'number' ? '=' : '') + e.name_or_index);
const out = [];
const pairs = Number(pairsArg || 2000);
for (let p = 0; p < pairs; p++) {
  const t1 = trace(1 + Math.floor(rand() * 14));
  const t2 = mutate(t1);
  out.push({t1: compact(t1), t2: compact(t2), similar: ClusterUtils.isSimilarTrace(t1, t2)});
}
process.stdout.write('[\n' + out.map(x => JSON.stringify(x)).join(',\n') + '\n]\n');
