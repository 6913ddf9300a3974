// What keeps heapx invisible to the program it traces (docs/trace.md,
// "What the program observes"). The instrumenter inserts code into the
// program's lines; the program must still see its own source and columns:
//
//   * Function.prototype.toString of an instrumented function or class
//     gives its original text: the text V8 has, with the insertions that
//     instrument.mjs lists for the script removed;
//   * stack traces give original columns: the CallSite methods V8 gives
//     Node, Error.prepareStackTrace functions and Node's own users of raw
//     call sites (assert's messages) map columns through the same list;
//   * heapx's own frames (its loader hook, the runtime's models of native
//     methods) are left out of err.stack;
//   * functions heapx put in place of built-ins (Map.prototype.set for its
//     models) read as the built-ins: their text, name and length;
//   * an uncaught exception on an instrumented line prints the original
//     line: Node leaves out the lines whose text holds
//     "node-do-not-add-exception-line" (instrument.mjs puts it there), and
//     this module prints the original one in its place.
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

const defineProperty = Object.defineProperty, getDescriptor = Object.getOwnPropertyDescriptor;
const fnToString = Function.prototype.toString;
const apply = Reflect.apply;

// Scripts by key (the /*hx:KEY:N*/ markers) and by file (call sites).
// Each holds its insertions (line, column in the instrumented text,
// length), decoded from the script's __hx$map the first time it is needed.
const byKey = new Map(), byFile = new Map();

// script registers an instrumented script (the prelude calls it through
// __heapx.m before anything else of the script runs) and returns what the
// script's throw statements call (__hx$m.th).
export function script(key, file, length, map, esm) {
  // An ES module's frames and source lines name it by URL.
  const s = { key, file, name: esm ? pathToFileURL(file).href : file, length, map, lines: null, cols: null, lens: null, redirects: null };
  byKey.set(key, s);
  byFile.set(file, s);
  if (file.startsWith('/')) byFile.set(pathToFileURL(file).href, s);
  return { th(line, col, v) { return threw(file, line, col, v); } };
}

function decode(s) {
  if (s.lines === null) {
    const [m, r] = s.map();
    const n = m.length / 3;
    // Redirects: where V8 places a call or a property read of a wrapped
    // name in the instrumented text, and where it would in the original.
    s.redirects = new Map();
    for (let i = 0; i < r.length; i += 3) s.redirects.set(r[i] + ':' + r[i + 1], r[i + 2]);
    s.lines = new Int32Array(n); s.cols = new Int32Array(n); s.lens = new Int32Array(n);
    let line = 1;
    for (let i = 0; i < n; i++) { line += m[3 * i]; s.lines[i] = line; s.cols[i] = m[3 * i + 1]; s.lens[i] = m[3 * i + 2]; }
    s.map = null;
  }
  return s;
}

// firstOnLine is the index of the first insertion on line (or after it).
function firstOnLine(s, line) {
  let lo = 0, hi = s.lines.length;
  while (lo < hi) { const m = (lo + hi) >>> 1; if (s.lines[m] < line) lo = m + 1; else hi = m; }
  return lo;
}

// originalColumn maps a 1-based column of the instrumented text to the
// original's; a column inside inserted code maps to where it was inserted.
export function originalColumn(file, line, col) {
  const s = byFile.get(file);
  if (s === undefined || typeof line !== 'number' || typeof col !== 'number') return col;
  decode(s);
  const c = col - 1;
  const to = s.redirects.get(line + ':' + c);
  if (to !== undefined) return to;
  let shift = 0;
  for (let i = firstOnLine(s, line); i < s.lines.length && s.lines[i] === line; i++) {
    const at = s.cols[i];
    if (at > c) break;
    if (c < at + s.lens[i]) return at - shift + 1;
    shift += s.lens[i];
  }
  return col - shift;
}

// hasInsertions says whether line of file was changed by the instrumenter.
function hasInsertions(s, line) {
  decode(s);
  const i = firstOnLine(s, line);
  return i < s.lines.length && s.lines[i] === line;
}

// originalText is the original text of a function or class whose
// instrumented text is t, or t itself when it holds no marker.
const markerRe = /\/\*hx:([^:*]+):(\d+)\*\//;
function originalText(t) {
  const m = markerRe.exec(t);
  if (m === null) return t;
  const s = byKey.get(m[1]);
  if (s === undefined) return t;
  decode(s);
  let j = Number(m[2]);
  // The marker is the first thing of the first insertion inside the
  // function (after a space): the text before it is original.
  let at = m.index - 1;
  let out = t.slice(0, at);
  let line = s.lines[j], col = s.cols[j];
  while (at < t.length) {
    if (j < s.lines.length && s.lines[j] === line && s.cols[j] === col) {
      at += s.lens[j]; col += s.lens[j]; j++;
      continue;
    }
    const c = t.charCodeAt(at);
    out += t[at]; at++; col++;
    if (c === 10 || c === 0x2028 || c === 0x2029 || (c === 13 && t.charCodeAt(at) !== 10)) { line++; col = 0; }
  }
  return out;
}

// heapx's replacements of built-ins, with the built-in each stands for.
const standsFor = new WeakMap();

// disguise makes fn, which heapx put in place of original, read as the
// original: Function.prototype.toString, name and length.
export function disguise(fn, original) {
  if (typeof fn !== 'function' || typeof original !== 'function' || fn === original) return;
  standsFor.set(fn, original);
  for (const k of ['name', 'length']) {
    const d = getDescriptor(original, k);
    if (d && getDescriptor(fn, k)?.value !== d.value) { try { defineProperty(fn, k, d); } catch { /* not configurable */ } }
  }
}

// Function.prototype.toString, seen by the program.
const toString = {
  toString() {
    const orig = typeof this === 'function' ? standsFor.get(this) : undefined;
    if (orig !== undefined) return apply(fnToString, orig, []);
    const t = apply(fnToString, this, []);
    return t.includes('/*hx:') ? originalText(t) : t;
  },
}.toString;
disguise(toString, fnToString);
defineProperty(Function.prototype, 'toString', { ...getDescriptor(Function.prototype, 'toString'), value: toString });

// heapx's own files: their frames are left out of stack traces.
const ownDir = new URL('.', import.meta.url);
const ownPath = decodeURIComponent(ownDir.pathname);
const isOwn = (file) => typeof file === 'string' && (file.startsWith(ownPath) || file.startsWith(ownDir.href));

// Call sites: V8 makes them with one prototype; its methods are Node's
// and the program's only way to a frame's position.
function rawSites() {
  const saved = getDescriptor(Error, 'prepareStackTrace'), limit = Error.stackTraceLimit;
  defineProperty(Error, 'prepareStackTrace', { value: (_, s) => s, configurable: true, writable: true });
  Error.stackTraceLimit = 1;
  const holder = {};
  Error.captureStackTrace(holder);
  const sites = holder.stack;
  Error.stackTraceLimit = limit;
  if (saved) defineProperty(Error, 'prepareStackTrace', saved); else delete Error.prepareStackTrace;
  return sites;
}
const CallSite = Object.getPrototypeOf(rawSites()[0]);
const site = {
  getColumnNumber: CallSite.getColumnNumber, getLineNumber: CallSite.getLineNumber,
  getFileName: CallSite.getFileName, getScriptNameOrSourceURL: CallSite.getScriptNameOrSourceURL,
  toString: CallSite.toString, getEvalOrigin: CallSite.getEvalOrigin,
};
function mappedColumn(cs) {
  const col = apply(site.getColumnNumber, cs, []);
  if (byFile.size === 0 || col === null) return col;
  const file = apply(site.getScriptNameOrSourceURL, cs, []) ?? apply(site.getFileName, cs, []);
  return file === undefined || file === null ? col : originalColumn(file, apply(site.getLineNumber, cs, []), col);
}
// positionsIn maps every "file:line:col" of an instrumented file in text
// (a frame's text, an eval origin) to its original column.
const positionRe = /([^\s()]+):(\d+):(\d+)/g;
function positionsIn(text) {
  return text.replace(positionRe, (all, file, line, col) => {
    if (!byFile.has(file)) return all;
    return `${file}:${line}:${originalColumn(file, Number(line), Number(col))}`;
  });
}
// A call site's methods are V8's, read-only: a call site in an
// instrumented file gets its own, which map (not enumerable; only
// Object.getOwnPropertyNames of a call site shows them).
const ownSite = {
  getColumnNumber() { return mappedColumn(this); },
  toString() { return positionsIn(apply(site.toString, this, [])); },
  getEvalOrigin() {
    const t = apply(site.getEvalOrigin, this, []);
    return typeof t === 'string' ? positionsIn(t) : t;
  },
};
if (typeof CallSite.getEnclosingColumnNumber === 'function') {
  const orig = CallSite.getEnclosingColumnNumber;
  ownSite.getEnclosingColumnNumber = {
    getEnclosingColumnNumber() {
      const col = apply(orig, this, []);
      const file = apply(site.getScriptNameOrSourceURL, this, []) ?? apply(site.getFileName, this, []);
      return typeof file === 'string' ? originalColumn(file, this.getEnclosingLineNumber(), col) : col;
    },
  }.getEnclosingColumnNumber;
}
for (const k of Object.keys(ownSite)) disguise(ownSite[k], CallSite[k]);
const siteKeys = Object.keys(ownSite);
function mapSite(cs) {
  const file = apply(site.getScriptNameOrSourceURL, cs, []) ?? apply(site.getFileName, cs, []);
  const evalOrigin = apply(site.getEvalOrigin, cs, []);
  if (!byFile.has(file) && !(typeof evalOrigin === 'string' && evalOrigin.includes('/'))) return cs;
  if (Object.isExtensible(cs)) for (const k of siteKeys) defineProperty(cs, k, { value: ownSite[k], writable: true, configurable: true, enumerable: false });
  return cs;
}

// Error.prepareStackTrace: heapx's frames are left out of the call sites
// a stack trace is made of. Node formats a stack with the function it
// reads there; heapx's is read by Node only: the program reads and sets
// its own (Node's default, or undefined on older Nodes, until it sets
// one), and heapx's calls it.
const errorToString = Error.prototype.toString;
let nodeErrorSymbol;
try { Buffer.alloc(-1); } catch (e) { nodeErrorSymbol = Object.getOwnPropertySymbols(e).find((y) => y.description === 'kIsNodeError'); }
const initial = getDescriptor(Error, 'prepareStackTrace');
let programs = initial?.value; // the program's Error.prepareStackTrace
let programSet = initial !== undefined; // a property exists (an assignment makes one, enumerable)
function prepare(error, trace) {
  remember(error, trace);
  let sites = trace;
  if (Array.isArray(trace)) {
    for (const cs of trace) if (apply(site.getFileName, cs, []) === 'node:internal/modules/cjs/loader') renamed(cs);
    if (trace.some((cs) => isOwn(apply(site.getFileName, cs, [])))) {
      sites = complete(trace, trace.filter((cs) => !isOwn(apply(site.getFileName, cs, []))));
    }
    if (byFile.size !== 0) for (const cs of sites) mapSite(cs);
  }
  if (typeof programs === 'function') return programs(error, sites);
  // Node's own default (lib/internal/errors.js).
  let head;
  if (nodeErrorSymbol !== undefined && error !== null && typeof error === 'object' && nodeErrorSymbol in error) head = `${error.name} [${error.code}]: ${error.message}`;
  else head = apply(errorToString, error, []);
  if (sites.length === 0) return head;
  return `${head}\n    at ${sites.join('\n    at ')}`;
}
// renamed gives the frame of Node's Module.prototype._compile, which heapx
// replaced, its name: V8 names the frame of an anonymous function (Node
// 22's) by the property of its receiver that holds it, which now holds
// heapx's. The loader's only such frame of a Module is _compile's.
function renamed(cs) {
  const name = '_compile';
  if (apply(CallSite.getFunctionName, cs, []) || apply(CallSite.getMethodName, cs, []) || apply(CallSite.getTypeName, cs, []) !== 'Module') return;
  if (!Object.isExtensible(cs)) return;
  const method = { getMethodName() { return name; } }.getMethodName;
  const text = { toString() { return apply(ownSite.toString, this, []).replace(/^([\w$]+)\.<anonymous> \(/, `$1.${name} (`); } }.toString;
  disguise(method, CallSite.getMethodName); disguise(text, CallSite.toString);
  defineProperty(cs, 'getMethodName', { value: method, writable: true, configurable: true, enumerable: false });
  defineProperty(cs, 'toString', { value: text, writable: true, configurable: true, enumerable: false });
}

// A stack trace holds at most Error.stackTraceLimit frames: one cut there
// that had heapx's frames has lost as many of the program's at its end.
// heapx's loader records the frames below it as a module loads (loading);
// complete appends the lost ones from the latest record that continues
// the trace's last frames.
const loads = [];
export function loading(wrapper, file) {
  const limit = Error.stackTraceLimit;
  if (typeof limit !== 'number' || !(limit > 0)) return;
  probing = true;
  const holder = {};
  Error.captureStackTrace(holder, wrapper);
  const below = holder.stack;
  probing = false;
  if (Array.isArray(below)) { loads.push([file, below]); if (loads.length > 64) loads.shift(); }
}
function complete(trace, sites) {
  const limit = Error.stackTraceLimit, lost = trace.length - sites.length;
  if (typeof limit !== 'number' || trace.length < limit || lost === 0) return sites;
  let last = trace.length - 1;
  while (last >= 0 && !isOwn(apply(site.getFileName, trace[last], []))) last--;
  const tail = trace.slice(last + 1).map(String);
  // The module being loaded is the frame above Node's _compile, above heapx's.
  const module = last >= 2 ? apply(site.getFileName, trace[last - 2], []) : undefined;
  for (let i = loads.length - 1; i >= 0; i--) {
    const [file, below] = loads[i];
    if (file !== module || below.length < tail.length || !tail.every((t, k) => String(below[k]) === t)) continue;
    return sites.concat(below.slice(tail.length, tail.length + lost).filter((cs) => !isOwn(apply(site.getFileName, cs, []))));
  }
  return sites;
}

// readByNode says whether the getter of Error.prepareStackTrace was called
// by Node's stack formatting (node:internal/errors) rather than by the
// program: the frame below the getter is Node's. Inside Node's
// formatting V8 formats the probe's stack itself (a string); otherwise
// Node asks the getter again, which gives the raw call sites.
let probing = false;
function readByNode(getter) {
  probing = true;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  const holder = {};
  Error.captureStackTrace(holder, getter);
  Error.stackTraceLimit = limit;
  const sites = holder.stack;
  probing = false;
  if (typeof sites === 'string') return /^\s*at [^\n]*node:internal\//.test(sites.slice(sites.indexOf('\n') + 1));
  if (!Array.isArray(sites) || sites.length === 0) return false;
  const f = apply(site.getFileName, sites[0], []);
  return typeof f === 'string' && f.startsWith('node:internal/');
}
const accessor = {
  get prepareStackTrace() {
    if (probing) return (_, s) => s;
    if (readByNode(getPrepare)) return prepare;
    return programs;
  },
  set prepareStackTrace(v) {
    programs = v === prepare ? undefined : v;
    if (!programSet) { programSet = true; defineProperty(Error, 'prepareStackTrace', { ...getDescriptor(Error, 'prepareStackTrace'), enumerable: true }); }
  },
};
const getPrepare = getDescriptor(accessor, 'prepareStackTrace').get;
const setPrepare = getDescriptor(accessor, 'prepareStackTrace').set;
if (initial === undefined || (initial.configurable && 'value' in initial)) {
  defineProperty(Error, 'prepareStackTrace', { get: getPrepare, set: setPrepare, enumerable: initial?.enumerable ?? false, configurable: true });
}

// The source line of an uncaught exception on an instrumented line:
// Node leaves it out (the marker) and heapx prints the original, with
// Node's layout (src/node_errors.cc, GetErrorSource): file:line, the
// line, a caret under the column (counted in the line's UTF-8 bytes, as
// Node does). Where V8 says the exception was thrown is not visible to
// JavaScript: heapx takes the place of the last throw statement it saw
// throw that value (instrument.mjs's th), else the first frame of the
// error's stack that has a place, unless that place is a `new` expression
// (an error made there and thrown by code heapx does not see: no line).
let lastThrown, lastThrowFile = '', lastThrowLine = 0, lastThrowCol = 0;
function threw(file, line, col, v) {
  lastThrown = v; lastThrowFile = file; lastThrowLine = line; lastThrowCol = col;
  return v;
}
const firstPlace = new WeakMap(); // error -> [file, line, col] of its first frame with one
function sourceLine(s, line) {
  let text;
  try { text = fs.readFileSync(s.file.startsWith('file:') ? new URL(s.file) : s.file, 'utf8'); } catch { return null; }
  if (text.length !== s.length) return null;
  const lines = text.split(/\r\n?|[\n\u2028\u2029]/);
  return line - 1 < lines.length ? lines[line - 1] : null;
}
function arrow(file, line, col) {
  const s = byFile.get(file);
  if (s === undefined || !hasInsertions(s, line)) return null;
  const text = sourceLine(s, line);
  if (text === null || text.includes('node-do-not-add-exception-line')) return null;
  const bytes = Buffer.from(text, 'utf8');
  let under = '';
  const start = col - 1;
  if (start >= 0 && start + 1 <= bytes.length) {
    for (let i = 0; i < start && bytes[i] !== 0; i++) under += bytes[i] === 9 ? '\t' : ' ';
    under += '^';
  }
  return `${s.name}:${line}\n${text}\n${under}${under ? '\n' : ''}`;
}
function placeOf(err, fromPromise) {
  if (!fromPromise && err === lastThrown && lastThrowFile !== '') return [lastThrowFile, lastThrowLine, lastThrowCol, false];
  if (err === null || typeof err !== 'object') return null;
  let place = firstPlace.get(err);
  if (place === undefined) {
    try { void err.stack; } catch { /* a getter of the program's */ }
    place = firstPlace.get(err);
  }
  if (place === undefined) return null;
  return [place[0], place[1], place[2], !fromPromise];
}
const fatal = process._fatalException;
if (typeof fatal === 'function') {
  process._fatalException = function (er, fromPromise) {
    const handled = apply(fatal, this, arguments);
    if (handled === false) {
      try {
        const p = placeOf(er, fromPromise);
        if (p !== null) {
          const [file, line, col, mustNotBeNew] = p;
          const text = arrow(file, line, col);
          if (text !== null && !(mustNotBeNew && /^new\b/.test(text.split('\n')[1].slice(col - 1)))) {
            const isError = er !== null && typeof er === 'object' && Object.prototype.toString.call(er) === '[object Error]';
            fs.writeSync(2, isError ? text + '\n' : '\n' + text);
          }
        }
      } catch { /* printing the line is best effort */ }
    }
    return handled;
  };
  disguise(process._fatalException, fatal);
}
// remember keeps the first placed frame of each error formatted: where
// Node says an error was made.
function remember(error, trace) {
  if (error !== null && typeof error === 'object' && Array.isArray(trace)) {
    for (const cs of trace) {
      const file = apply(site.getFileName, cs, []);
      if (typeof file === 'string' && !isOwn(file)) {
        firstPlace.set(error, [file, apply(site.getLineNumber, cs, []), mappedColumn(cs)]);
        break;
      }
    }
  }
}
