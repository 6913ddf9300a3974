#!/usr/bin/env node
// Summarizes memlab-find-leaks.cjs outputs for testdata/golden/suspects/memlab-find-leaks.json: per series, how many
// leaked objects memlab kept, how many it dropped for a trace longer than 100 steps, and its three largest clusters
// (count, retained size, the four commonest leaked classes, the last 12 steps of the trace), without the ids.
//
// Usage: node memlab-summary.cjs OUT.json... > SUMMARY.json   (each OUT.json named SHAPE-nodeV.json)
'use strict';
const fs = require('fs');
const path = require('path');
const out = {};
for (const file of process.argv.slice(2)) {
  const d = JSON.parse(fs.readFileSync(file, 'utf8'));
  out[path.basename(file, '.json')] = {
    leaked_after_filter: d.leaked_after_filter, traces: d.traces, too_long: d.too_long, clusters: d.clusters.length,
    largest: d.clusters.slice(0, 3).map(c => ({
      count: c.count, retained_size: c.retained_size,
      classes: Object.entries(c.leaked_classes).sort((a, b) => b[1] - a[1]).slice(0, 4),
      trace_end: c.trace.slice(-12).map(s => s.edge !== undefined ? '.' + s.edge : s.node.slice(0, 40)).join(' '),
    })),
  };
}
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
