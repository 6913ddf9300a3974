#!/usr/bin/env node
// Runs memlab's leak detection (what `memlab find-leaks --baseline B --target T --final F --trace-all-objects`
// does, @memlab/core 2.0.5 HeapAnalyzer.diffSnapshots + filterLeakPaths + NormalizedTrace.clusterPaths) on three
// snapshots of one process and prints the clusters as JSON, for leak.Leaks' golden file.
//
// Usage: node memlab-find-leaks.cjs PEERS_DIR BASELINE TARGET FINAL > OUT.json
//
// The steps are called one by one instead of through the memlab CLI (not installed with the peers) because
// the CLI reads its snapshots from a work directory layout; the calls and the configuration are the CLI's:
// --trace-all-objects sets oversizeObjectAsLeak with threshold 0, so every leaked object that is not trivial
// (number, string, hidden) and has a retained size above 0 is a leak. Without it memlab reports only detached
// DOM elements, React fibers and a few browser objects, so nothing on a Node.js heap.
'use strict';
const path = require('path');
const [peers, baseline, target, final] = process.argv.slice(2);
const req = m => require(path.join(peers, 'node_modules', m));
const {utils, analysis, config, NormalizedTrace} = req('@memlab/core');
const {LeakTraceFilter} = req('@memlab/core/dist/lib/trace-filters/LeakTraceFilter');

(async () => {
  config.verbose = false;
  config.muteConsole = true;
  config.oversizeObjectAsLeak = true; // --trace-all-objects
  config.oversizeThreshold = 0;
  const baseIds = await utils.getSnapshotNodeIdsFromFile(baseline, {});
  const targetIds = await utils.getSnapshotNodeIdsFromFile(target, {});
  const snapshot = await utils.getSnapshotFromFile(final, {buildNodeIdIndex: true});
  const allocated = new Set();
  for (const id of targetIds) if (!baseIds.has(id)) allocated.add(id);
  const leaked = new Set();
  snapshot.nodes.forEach(n => { if (allocated.has(n.id)) leaked.add(n.id); });
  const leakedBeforeFilter = leaked.size;

  // HeapAnalyzer.filterLeakPaths, without its console and file output.
  const finder = analysis.preparePathFinder(snapshot);
  analysis.filterLeakedObjects(leaked, snapshot);
  const traceFilter = new LeakTraceFilter();
  const paths = [];
  const tooLong = [];
  utils.applyToNodes(leaked, snapshot, node => {
    const p = finder.getPathToGCRoots(snapshot, node);
    if (p == null || !traceFilter.filter(p, {config, leakedNodeIds: leaked, snapshot})) return;
    if (utils.getLeakTracePathLength(p) > 100) {
      tooLong.push(node.id);
      return;
    }
    paths.push(p);
  }, {reverse: true});
  const clusters = NormalizedTrace.clusterPaths(paths, snapshot, utils.aggregateDominatorMetrics);

  const trace = p => {
    const out = [];
    for (; p; p = p.next) {
      if (p.node) out.push({node: p.node.name.slice(0, 200), type: p.node.type, id: p.node.id});
      if (p.edge) out.push({edge: String(p.edge.name_or_index), edge_type: p.edge.type});
    }
    return out;
  };
  const histogram = ids => {
    const h = {};
    for (const id of ids) {
      const n = snapshot.getNodeById(id);
      const k = n.name + ' (' + n.type + ')';
      h[k] = (h[k] || 0) + 1;
    }
    return h;
  };
  const out = {
    memlab_core: req('@memlab/core/package.json').version,
    baseline: path.basename(baseline), target: path.basename(target), final: path.basename(final),
    allocated_in_target: allocated.size,
    leaked_before_filter: leakedBeforeFilter,
    leaked_after_filter: leaked.size,
    traces: paths.length,
    // Leaked objects memlab drops because their trace is longer than 100 steps (in no cluster).
    too_long: tooLong.length,
    too_long_classes: histogram(tooLong),
    too_long_ids: tooLong.sort((a, b) => a - b),
    clusters: clusters.map(c => ({
      count: c.count,
      retained_size: c.retainedSize,
      leaked_classes: histogram(c.leakedNodeIds || []),
      leaked_ids: Array.from(c.leakedNodeIds || []).sort((a, b) => a - b),
      trace: trace(c.path),
    })),
  };
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
})().catch(e => { console.error(e); process.exit(1); });
