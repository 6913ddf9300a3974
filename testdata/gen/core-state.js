// core-state.js: a Node program that reaches a known state for the
// core-dump tests (formats/nodecore, cmd/heapx), writes a heap snapshot of
// that state, prints what a reader of its core must find, and blocks in the
// deepest frame of a recursion so that gcore catches its JavaScript stack.
//
//     node testdata/gen/core-state.js OUTDIR
//
// Writes OUTDIR/core-state.heapsnapshot, then prints one JSON line (the
// expectations, "ready": true) on stdout and spins until it is killed.
// internal/coretest runs it, gcores it on that line and kills it; the tests
// read the JSON instead of repeating its constants. Runs unchanged under
// Node 18, 20, 22 and 24. The state, all reachable from globalThis.coreState:
//
//   - tickets: a Map of N Ticket instances, key "ticket-<i>", each with
//     id = i (Smi), name = "ticket-<i>", price = i + 0.25 (heap number),
//     owner = one of three Owner objects (round robin);
//   - counters: closures made by makeCounter(label, start), each capturing
//     label (a string), start (a Smi) and count (a Smi);
//   - strings: one of every V8 string representation (seq one-byte, seq
//     two-byte, cons, sliced, thin, external);
//   - arrays: one array per elements kind named in expect.arrays;
//   - the main thread's stack: main -> descend(DEPTH-1, ...) -> ... ->
//     descend(0, ...) -> block(), where descend(n, label, weight) has
//     label = "level-<n>" and weight = n + 0.5, and descend's closure
//     captures SECRET = "open-sesame" (a module-level const).
'use strict';

const fs = require('fs');
const path = require('path');
const v8 = require('v8');

const N = 1000;
const DEPTH = 7;
const SECRET = 'open-sesame';

class Owner {
  constructor(name) {
    this.name = name;
  }
}

class Ticket {
  constructor(i, owner) {
    this.id = i;
    this.name = 'ticket-' + i;
    this.price = i + 0.25;
    this.owner = owner;
  }
}

function makeCounter(label, start) {
  let count = start;
  return function counterTick() {
    count++;
    return label + count;
  };
}

// externalSource returns the source of one of Node's own modules, which
// Node hands to V8 as an external one-byte string (the resource is Node's,
// so a reader needs nodedbg_offset_ExternalString__data__uintptr_t).
function externalSource() {
  try {
    const natives = process.binding('natives');
    if (typeof natives.events === 'string') return { module: 'events', source: natives.events };
  } catch (e) {
    // process.binding may be gone in a future Node; the fallback below is
    // a sliced string whose parent is the same external source.
  }
  const src = Function.prototype.toString.call(require('events'));
  return { module: 'events', source: src };
}

function buildState() {
  const owners = [new Owner('ada'), new Owner('grace'), new Owner('linus')];
  const tickets = new Map();
  for (let i = 0; i < N; i++) tickets.set('ticket-' + i, new Ticket(i, owners[i % owners.length]));

  const counters = [makeCounter('alpha-', 10), makeCounter('beta-', 20), makeCounter('gamma-', 30)];

  // A long literal is an internalized sequential one-byte string; slices of
  // 13 characters or more of a flat string are SlicedStrings.
  const longFlat = 'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs.';
  const external = externalSource();
  const strings = {
    seqOneByte: 'seq-one-byte-literal',
    seqTwoByte: 'seq-two-byte-\u4e16\u754c-\u00e9t\u00e9',
    // Concatenating runtime strings of 13 characters or more makes a
    // ConsString (never flattened here: it is only ever stored).
    cons: longFlat.substring(0, 19) + '|' + String(N) + '-cons-tail',
    sliced: longFlat.substring(4, 40),
    thin: null, // made after the snapshot (a GC replaces thin strings)
    external: external.source,
  };

  const sparse = [];
  sparse[100000] = 'far';
  const arrays = {
    packedSmi: [1, 2, 3, 4, 5],
    packedDouble: [1.5, 2.5, 3.5],
    packedElements: ['a', 'b', 'c'],
    holeySmi: [1, , 3], // eslint-disable-line no-sparse-arrays
    holeyElements: ['x', , 'z'], // eslint-disable-line no-sparse-arrays
    dictionary: sparse,
  };
  return { owners, tickets, counters, strings, arrays, external };
}

function expectations(state, snapshot) {
  const owners = state.owners.map((o) => o.name);
  return {
    ready: true,
    pid: process.pid,
    node: process.version,
    v8: process.versions.v8,
    snapshot,
    tickets: {
      class: 'Ticket',
      count: N,
      map_key_prefix: 'ticket-',
      // ticket i: {id: i, name: "ticket-<i>", price: i + 0.25, owner: owners[i % 3]}
      id: 'i',
      name: 'ticket-<i>',
      price: 'i + 0.25',
      owner_class: 'Owner',
      owners,
      samples: [0, 1, N - 1].map((i) => ({
        id: i, name: 'ticket-' + i, price: i + 0.25, owner: owners[i % owners.length],
      })),
    },
    counters: [
      { function: 'counterTick', label: 'alpha-', start: 10, count: 10 },
      { function: 'counterTick', label: 'beta-', start: 20, count: 20 },
      { function: 'counterTick', label: 'gamma-', start: 30, count: 30 },
    ],
    strings: {
      seq_one_byte: state.strings.seqOneByte,
      seq_two_byte: state.strings.seqTwoByte,
      cons: state.strings.cons,
      sliced: state.strings.sliced,
      thin: state.strings.thin,
      external_module: state.external.module,
      external_length: state.strings.external.length,
      external_prefix: state.strings.external.slice(0, 64),
    },
    arrays: {
      packedSmi: { kind: 'PACKED_SMI_ELEMENTS', values: state.arrays.packedSmi },
      packedDouble: { kind: 'PACKED_DOUBLE_ELEMENTS', values: state.arrays.packedDouble },
      packedElements: { kind: 'PACKED_ELEMENTS', values: state.arrays.packedElements },
      holeySmi: { kind: 'HOLEY_SMI_ELEMENTS', length: 3, values: { 0: 1, 2: 3 } },
      holeyElements: { kind: 'HOLEY_ELEMENTS', length: 3, values: { 0: 'x', 2: 'z' } },
      dictionary: { kind: 'DICTIONARY_ELEMENTS', length: 100001, values: { 100000: 'far' } },
    },
    stack: {
      script: path.basename(__filename),
      script_path: __filename,
      // Frames from the innermost: block, then descend(0) .. descend(DEPTH-1), then main.
      block: { function: 'block', line: lineOf('function block(') },
      recursion: {
        function: 'descend',
        line: lineOf('function descend('),
        depth: DEPTH,
        // the first three arguments of each descend frame, innermost first:
        // [n, label, weight] (the fourth is this report object)
        args: Array.from({ length: DEPTH }, (_, n) => [n, 'level-' + n, n + 0.5]),
        closure: { SECRET },
      },
      caller: { function: 'main', line: lineOf('function main(') },
      // A frame of Node's own code below them, whose source is an
      // external string in the binary.
      internal: internalFrame(),
    },
  };
}

// internalFrame is where Module.prototype._compile, which runs this
// module, starts in Node's own source: the line and column of the '(' of
// its parameters, V8's start position of a function; null when the source
// is not at hand.
function internalFrame() {
  const Module = require('module');
  let src;
  try {
    src = process.binding('natives')['internal/modules/cjs/loader'];
  } catch (e) {
    return null;
  }
  const fn = Function.prototype.toString.call(Module.prototype._compile);
  const at = typeof src === 'string' && fn.startsWith('function') ? src.indexOf(fn) : -1;
  if (at < 0) return null;
  const pos = at + src.slice(at).indexOf('(');
  const before = src.slice(0, pos).split('\n');
  return {
    function: 'Module._compile',
    script: 'node:internal/modules/cjs/loader',
    line: before.length,
    column: before[before.length - 1].length + 1,
  };
}

// lineOf is the 1-based line of the first line of this file containing
// text, so the expected lines follow edits of this file.
function lineOf(text) {
  const lines = fs.readFileSync(__filename, 'utf8').split('\n');
  return lines.findIndex((l) => l.startsWith(text)) + 1;
}

let spinning = true;

// block never returns: it spins in the deepest frame so that a core of the
// process shows the whole recursion on the main thread's stack. A loop
// without calls keeps the frame pointer on this frame wherever gcore stops
// the thread.
function block(report) {
  let spins = 0;
  // Spin a while first, so that V8 has compiled this loop (on-stack
  // replacement) and the core shows an optimized frame among interpreted
  // ones.
  for (const until = Date.now() + 500; Date.now() < until;) spins++;
  process.stdout.write(JSON.stringify(report) + '\n');
  while (spinning) spins++;
  return spins;
}

function main(outDir) {
  const state = buildState();
  globalThis.coreState = state;
  const snapshot = path.join(outDir, 'core-state.heapsnapshot');
  v8.writeHeapSnapshot(snapshot);

  // A ThinString: a fresh flat string equal to an internalized one becomes
  // thin when it is internalized (here as a property key). The snapshot's
  // GC would have removed it, so it is made after the snapshot.
  const thinInternalized = 'thin-target-string';
  const thin = ['thin', 'target', 'string'].join('-');
  const keyed = {};
  keyed[thin] = thinInternalized.length;
  state.strings.thin = thin;
  state.keyed = keyed;

  const report = expectations(state, snapshot);
  return descend(DEPTH - 1, 'level-' + (DEPTH - 1), DEPTH - 1 + 0.5, report);
}

function descend(n, label, weight, report) {
  if (n === 0) return block(report) + SECRET.length;
  return descend(n - 1, 'level-' + (n - 1), n - 1 + 0.5, report) + weight;
}

main(process.argv[2] || '.');
