// heapx's trace runtime: what instrumented code calls. It numbers objects
// (a private field; MemInsight used a WeakMap), keeps the synthetic clock and
// each object's last use, models Map/Set and array mutators, and writes
// the binary records of docs/trace.md to file descriptor 3 in chunks
// (4-byte little-endian length, then whole records; the last chunk has the
// length's top bit set), which heapx reads while the program runs.
import fs from 'node:fs';
import workerThreads from 'node:worker_threads';
import { syncBuiltinESMExports } from 'node:module';
import { ChildProcess } from 'node:child_process';

const FD = Number(process.env.HEAPX_TRACE_FD || 3);

// Record kinds (formats/memtrace).
const STRING = 1, SCRIPT = 2, FREE_VARS = 3, LAST_USE = 4, END_LAST_USE = 5, UNSEEN = 6, EXIT = 7;
const DECLARE = 0x10, WRITE = 0x11, CREATE_OBJ = 0x12, CREATE_FUN = 0x13, PUTFIELD = 0x14,
  FUNCTION_ENTER = 0x15, FUNCTION_EXIT = 0x16, RETURN = 0x17, SUSPEND = 0x19,
  RESUME = 0x1a, TOP_LEVEL_FLUSH = 0x1b, UPDATE_IID = 0x1c, SCRIPT_ENTER = 0x1d, SCRIPT_EXIT = 0x1e,
  COLL_SET = 0x1f, COLL_DELETE = 0x20, COLL_CLEAR = 0x21;

// The runtime's own definitions use the original, not the model below.
const defineProperty = Object.defineProperty, hasOwn = Object.hasOwn;

const LAST_USE_PERIOD = 10000;
const CHUNK = 1 << 16;

let buf = new Uint8Array(CHUNK + 1024);
let pos = 4;
let done = false;

function flushChunk(final) {
  if (done) { pos = 4; return; }
  const n = pos - 4;
  const len = final ? (n | 0x80000000) >>> 0 : n;
  buf[0] = len & 255; buf[1] = (len >>> 8) & 255; buf[2] = (len >>> 16) & 255; buf[3] = len >>> 24;
  let off = 0;
  while (off < pos) {
    try { off += fs.writeSync(FD, buf, off, pos - off); } catch (e) {
      if (e.code === 'EAGAIN') continue;
      done = true; return; // heapx is gone: the program runs on untraced
    }
  }
  pos = 4;
}
function room(n) { if (pos + n > CHUNK) { flushChunk(false); if (pos + n > buf.length) { const b = new Uint8Array(pos + n + CHUNK); b.set(buf.subarray(0, pos)); buf = b; } } }
function u(x) {
  while (x > 0x7f) { buf[pos++] = (x & 0x7f) | 0x80; x = x > 0x7fffffff ? Math.floor(x / 128) : x >>> 7; }
  buf[pos++] = x;
}
function z(x) { u(x < 0 ? -2 * x - 1 : 2 * x); }
const enc = new TextEncoder();
function str(s) {
  const b = enc.encode(s);
  room(b.length + 10); u(b.length); buf.set(b, pos); pos += b.length;
}

// Strings: interned, a STRING record the first time.
const strings = new Map();
function sid(s) {
  let id = strings.get(s);
  if (id === undefined) {
    id = strings.size + 1; strings.set(s, id);
    room(16); buf[pos++] = STRING; u(id); str(s);
  }
  return id;
}

// Objects: ids from 2 (1 is globalThis), last-use time and place per id.
// An object's id is a private field added to it (the "return override"
// of a base class returning the object): invisible to the program (no
// property, no symbol, not in util.inspect), and measured 15-25x faster
// than a WeakMap when millions of short-lived objects get ids, which is
// what a WeakMap's ephemeron tables are slow at. Objects that refuse a
// private field, and globalThis, are in a WeakMap.
const fallback = new WeakMap();
fallback.set(globalThis, 1);
class Returns { constructor(o) { return o; } }
let getId, setId;
class Stamp extends Returns {
  #id;
  constructor(o, id) { super(o); this.#id = id; }
  static {
    getId = (o) => (#id in o ? o.#id : fallback.get(o));
    setId = (o, id) => { try { new Stamp(o, id); } catch { fallback.set(o, id); } };
  }
}
let nextId = 2;
let lastT = new Float64Array(1 << 16).fill(-1);
let lastI = new Float64Array(1 << 16);
// holds[id] is 1 once the trace showed an object stored in one of the
// object's properties: a primitive stored in an object that never held
// one removes no edge, and is not recorded.
let holds = new Uint8Array(1 << 16);
let dirty = [];
let blockFirst = 0; // uses at times >= blockFirst belong to the open block

function grow(id) {
  let n = lastT.length; while (n <= id) n *= 2;
  const t = new Float64Array(n).fill(-1); t.set(lastT); lastT = t;
  const i = new Float64Array(n); i.set(lastI); lastI = i;
  const h = new Uint8Array(n); h.set(holds); holds = h;
}
function newId(o) {
  const id = nextId++; setId(o, id);
  if (id >= lastT.length) grow(id);
  return id;
}
// val is the id of a value, 0 for a primitive; an object seen the first
// time gets its id here (the analysis counts it allocated where it is first seen).
// A two-entry cache in front of the id lookup (a megamorphic load): code
// uses one or two objects several times in a row (this.left = left;
// this.right = right). It holds the last two objects looked up, which the
// program may have dropped, until two others are.
let cached0 = globalThis, id0 = 1, cached1 = globalThis, id1 = 1, next = 0;
function val(v) {
  if (v === cached0) return id0;
  if (v === cached1) return id1;
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return 0;
  let id = getId(v);
  if (id === undefined) id = newId(v);
  if (next === 0) { cached0 = v; id0 = id; next = 1; } else { cached1 = v; id1 = id; next = 0; }
  return id;
}
function use(v, iid) {
  const id = val(v);
  if (id === 0) return;
  if (lastT[id] < blockFirst) dirty.push(id);
  lastT[id] = clock; lastI[id] = iid;
}

let clock = 0;
let nextLastUse = LAST_USE_PERIOD;
let lastIid = 0; // the last place instrumented code reported, for native models
function tick() {
  if (clock >= nextLastUse) lastUses(clock - 1);
  return ++clock;
}
// lastUses writes the open block of LAST_USE records: uses up to upto
// are complete.
function lastUses(upto) {
  for (const id of dirty) {
    room(32); buf[pos++] = LAST_USE; u(id); u(lastT[id]); u(lastI[id]);
  }
  dirty = [];
  room(12); buf[pos++] = END_LAST_USE; u(upto);
  blockFirst = upto + 1;
  nextLastUse = clock + LAST_USE_PERIOD;
}

// put records a PUTFIELD of object o's key (encoded) to value v (an id).
function put(at, o, key, v) {
  if (v === 0) { if (holds[o] === 0) return; } else holds[o] = 1;
  ev4(PUTFIELD, at, o, key, v);
}
// keyOf encodes a property key: an array index or a name.
function keyOf(k) {
  return typeof k === 'number' && k >= 0 && Number.isInteger(k) ? 2 * k + 1 : 2 * sid(typeof k === 'symbol' ? '@@' + (k.description || '') : String(k));
}
function ev2(kind, a, b) { tick(); room(30); buf[pos++] = kind; u(a); u(b); }
function ev3(kind, a, b, c) { tick(); room(40); buf[pos++] = kind; u(a); u(b); u(c); }
function ev4(kind, a, b, c, d) { tick(); room(50); buf[pos++] = kind; u(a); u(b); u(c); u(d); }

// Contexts: 1 is the global one.
let nextCtx = 2;
let threw = 0;
const suspended = new Set();
let scripts = 0, nextIID = 0;

function unseen(iid, what, detail) { room(16); buf[pos++] = UNSEEN; u(iid); u(what); str(String(detail)); }

// Native models: Map/Set contents and array mutators of objects the trace
// has seen, reported where instrumented code last was.
function collKey(k) {
  if (k !== null && (typeof k === 'object' || typeof k === 'function')) return 2 * val(k);
  return 2 * sid(typeof k === 'string' ? JSON.stringify(k) : String(k)) + 1;
}
function patch(proto, name, wrap) {
  const orig = proto[name];
  defineProperty(proto, name, { value: wrap(orig), writable: true, configurable: true, enumerable: false });
}
patch(Map.prototype, 'set', (orig) => function set(k, v) {
  const r = orig.call(this, k, v);
  if (getId(this) !== undefined) { const key = collKey(k); ev4(COLL_SET, lastIid, getId(this), key, val(v)); }
  return r;
});
patch(Set.prototype, 'add', (orig) => function add(v) {
  const r = orig.call(this, v);
  if (getId(this) !== undefined) { const key = collKey(v); ev4(COLL_SET, lastIid, getId(this), key, val(v)); }
  return r;
});
for (const C of [Map, Set]) {
  patch(C.prototype, 'delete', (orig) => function (k) {
    const r = orig.call(this, k);
    if (r && getId(this) !== undefined) { const key = collKey(k); ev3(COLL_DELETE, lastIid, getId(this), key); }
    return r;
  });
  patch(C.prototype, 'clear', (orig) => function clear() {
    const r = orig.call(this);
    if (getId(this) !== undefined) ev2(COLL_CLEAR, lastIid, getId(this));
    return r;
  });
}
const mapEntries = Map.prototype.entries, setValues = Set.prototype.values;
// Object.assign and Object.defineProperty store into their target: the
// stored values are read back as data descriptors (no getter runs twice).
function putOwn(o, keys) {
  const id = getId(o);
  if (id === undefined) return;
  for (const k of keys) {
    const d = Object.getOwnPropertyDescriptor(o, k);
    if (d && 'value' in d) put(lastIid, id, keyOf(k), val(d.value));
  }
}
patch(Object, 'assign', (orig) => function assign(target) {
  const r = orig.apply(this, arguments);
  for (let i = 1; i < arguments.length; i++) {
    const s = arguments[i];
    if (s !== null && s !== undefined) putOwn(r, Reflect.ownKeys(Object(s)).filter((k) => Object.prototype.propertyIsEnumerable.call(s, k)));
  }
  return r;
});
patch(Object, 'defineProperty', (orig) => function defineProperty(o, k) {
  const r = orig.apply(this, arguments);
  putOwn(r, [k]);
  return r;
});
// putRange reports elements from..to-1 of array a, and removed ones up to
// the old length as gone.
function putRange(a, from, to, oldLength) {
  const id = getId(a);
  for (let i = from; i < to; i++) put(lastIid, id, 2 * i + 1, val(a[i]));
  for (let i = to; i < oldLength; i++) put(lastIid, id, 2 * i + 1, 0);
}
patch(Array.prototype, 'push', (orig) => function push() {
  const n = this.length;
  const r = orig.apply(this, arguments);
  if (getId(this) !== undefined) putRange(this, n, this.length, 0);
  return r;
});
patch(Array.prototype, 'pop', (orig) => function pop() {
  const r = orig.call(this);
  if (getId(this) !== undefined && r !== undefined) putRange(this, this.length, this.length, this.length + 1);
  return r;
});
for (const name of ['shift', 'unshift', 'splice', 'fill', 'reverse', 'sort', 'copyWithin']) {
  patch(Array.prototype, name, (orig) => function () {
    const n = this.length;
    const r = orig.apply(this, arguments);
    if (Array.isArray(this) && getId(this) !== undefined) putRange(this, 0, this.length, n);
    return r;
  });
}

// The runtime object of one script: its iids are base+1...
function script(file, kind, positions, names, fns) {
  const script = ++scripts, base = nextIID, n = positions.length / 2;
  nextIID += n;
  const file_ = sid(file);
  const nameIds = names.map(sid);
  room(40 + 10 * positions.length);
  buf[pos++] = SCRIPT; u(script); u(file_); u(kind); u(base); u(n);
  let line = 1;
  for (let i = 0; i < positions.length; i += 2) {
    room(24); z(positions[i] - line); line = positions[i]; u(positions[i + 1]);
  }
  for (let i = 0; i < fns.length;) {
    const at = base + fns[i], k = fns[i + 1];
    room(24 + 10 * k); buf[pos++] = FREE_VARS; u(at); u(k);
    for (let j = 1; j < k; j++) u(nameIds[fns[i + 1 + j]]);
    i += 2 + (k > 0 ? k - 1 : 0);
  }
  const objKind = (v) => Array.isArray(v) ? 1 : v instanceof Map ? 6 : v instanceof Set ? 7 : 2;
  const create = (iid, v, kind) => {
    const id = getId(v);
    if (id === undefined) ev3(CREATE_OBJ, base + iid, newId(v), kind);
    else ev2(UPDATE_IID, id, base + iid);
    return v;
  };
  const fn = (iid, ctx, v, proto) => {
    ev4(CREATE_FUN, base + iid, val(v), ctx, proto);
    return v;
  };
  return {
    // SCRIPT_ENTER: the script's top-level context.
    S(iid) { const c = nextCtx++; ev3(SCRIPT_ENTER, base + iid, script, c); return c; },
    x(ctx) { ev3(SCRIPT_EXIT, base + 1, ctx, 0); },
    t(iid) { tick(); room(12); buf[pos++] = TOP_LEVEL_FLUSH; u(base + iid); },
    E(iid, parent) { const c = nextCtx++; ev4(FUNCTION_ENTER, base + iid, c, parent, 0); return c; },
    T(ctx) { threw = ctx; },
    X(iid, ctx) {
      if (suspended.size !== 0 && suspended.delete(ctx)) ev2(RESUME, base + iid, ctx);
      ev3(FUNCTION_EXIT, base + iid, ctx, threw === ctx ? 1 : 0);
      if (threw === ctx) threw = 0;
    },
    // A primitive return value needs no record: it holds nothing.
    rt(iid, ctx, v) { const id = val(v); if (id !== 0) ev3(RETURN, base + iid, ctx, id); return v; },
    d(iid, ctx, name, v) { ev4(DECLARE, base + iid, ctx, nameIds[name], val(v)); return v; },
    // A parameter's binding is new with its context: a primitive one
    // removes no edge and needs no record.
    dp(iid, ctx, name, v) { const id = val(v); if (id !== 0) ev4(DECLARE, base + iid, ctx, nameIds[name], id); },
    w(iid, ctx, name, v) { ev4(WRITE, base + iid, ctx, nameIds[name], val(v)); return v; },
    wa(v) {
      for (let i = 1; i < arguments.length; i += 4) ev4(WRITE, base + arguments[i], arguments[i + 1], nameIds[arguments[i + 2]], val(arguments[i + 3]));
      return v;
    },
    F(iid, ctx, name, f) { fn(iid, ctx, f, 0); ev4(DECLARE, base + iid, ctx, nameIds[name], val(f)); },
    CL(iid, ctx, name, c) { fn(iid, ctx, c, val(c.prototype)); ev4(DECLARE, base + iid, ctx, nameIds[name], val(c)); },
    f(iid, ctx, name, f) {
      if (name >= 0) defineProperty(f, 'name', { value: names[name], configurable: true });
      return fn(iid, ctx, f, 0);
    },
    cl(iid, ctx, name, c) {
      if (name >= 0 && c.name === '') defineProperty(c, 'name', { value: names[name], configurable: true });
      return fn(iid, ctx, c, val(c.prototype));
    },
    o(iid, mode, o) {
      create(iid, o, 0);
      // for-in would also list (and read) inherited enumerable properties,
      // such as a getter the program put on Object.prototype: own ones only.
      if (mode === 1) { for (const k in o) { if (!hasOwn(o, k)) continue; const v = o[k]; if (v !== null && (typeof v === 'object' || typeof v === 'function')) put(base + iid, getId(o), 2 * sid(k), val(v)); } }
      else if (mode === 2) {
        for (const k of Reflect.ownKeys(o)) {
          const d = Object.getOwnPropertyDescriptor(o, k);
          if (d && 'value' in d && d.value !== null && (typeof d.value === 'object' || typeof d.value === 'function')) put(base + iid, getId(o), keyOf(k), val(d.value));
        }
      }
      return o;
    },
    a(iid, a) {
      create(iid, a, 1);
      const id = getId(a);
      for (let i = 0; i < a.length; i++) { const v = a[i]; if (v !== null && (typeof v === 'object' || typeof v === 'function')) put(base + iid, id, 2 * i + 1, val(v)); }
      return a;
    },
    n(iid, v) {
      lastIid = base + iid;
      const kind = objKind(v);
      create(iid, v, kind);
      // new Map(entries) and new Set(values) filled themselves before
      // they had an id: their contents are reported now.
      if ((kind === 6 || kind === 7) && v.size > 0) {
        const id = getId(v);
        if (kind === 6) for (const [k, x] of mapEntries.call(v)) ev4(COLL_SET, base + iid, id, collKey(k), val(x));
        else for (const x of setValues.call(v)) ev4(COLL_SET, base + iid, id, collKey(x), val(x));
      }
      return v;
    },
    re(iid, v) { return create(iid, v, 3); },
    p(iid, o, name, v) { lastIid = base + iid; put(base + iid, val(o), 2 * nameIds[name], val(v)); use(o, base + iid); return v; },
    pk(iid, o, k, v) {
      lastIid = base + iid;
      const id = val(o), vid = val(v);
      if (vid !== 0 || holds[id] !== 0) put(base + iid, id, keyOf(k), vid);
      use(o, base + iid);
      return v;
    },
    P(iid, o, k, v) { o[k] = v; return this.pk(iid, o, k, v); },
    del(iid, o, name, r) { put(base + iid, val(o), 2 * nameIds[name], 0); use(o, base + iid); return r; },
    delk(iid, o, k, r) { return this.pk(iid, o, k, undefined), r; },
    u(iid, o) { lastIid = base + iid; use(o, base + iid); return o; },
    // A call is a use of the function; the call itself is in the trace
    // as the callee's FUNCTION_ENTER.
    c(iid, f) { lastIid = base + iid; use(f, base + iid); return f; },
    ev(iid) { unseen(base + iid, 1, `${file}: eval or new Function`); },
    W(iid, ctx, v) { suspended.add(ctx); ev2(SUSPEND, base + iid, ctx); return v; },
    U(iid, ctx, v) { if (suspended.delete(ctx)) ev2(RESUME, base + iid, ctx); return v; },
    K(ctx) { if (suspended.delete(ctx)) ev2(RESUME, 0, ctx); },
  };
}

// Ending: the last uses, then EXIT, in the last chunk.
let exitHow = 0, exitDetail = '';
process.on('uncaughtExceptionMonitor', (err) => {
  // A throw at a module's top level reaches Node as a rejection when a
  // loader hook is active, so exceptions and rejections are one kind.
  exitHow = 2;
  exitDetail = err && err.stack ? String(err.stack).split('\n')[0] : String(err);
});
const reallyExit = process.exit;
process.exit = function exit(code) { if (exitHow === 0) exitHow = 1; return reallyExit.apply(this, arguments); };
process.on('exit', (code) => {
  lastUses(clock);
  room(32); buf[pos++] = EXIT; z(code | 0); u(exitHow); str(exitDetail);
  flushChunk(true);
  done = true;
});

// Not seen: child processes (their own code is not traced).
patch(ChildProcess.prototype, 'spawn', (orig) => function spawn(options) {
  unseen(lastIid, 5, options && options.file ? [options.file].concat(options.args ? options.args.slice(1) : []).join(' ') : 'child process');
  return orig.apply(this, arguments);
});

// Not seen: worker threads (started by file or by eval, where Node runs
// no --require). The module has no top-level await: heapx's preload
// loads it with require().
{
  const Base = workerThreads.Worker;
  workerThreads.Worker = class Worker extends Base {
    constructor(what, options) {
      super(what, options);
      unseen(lastIid, 2, `worker thread ${options && options.eval ? 'eval' : String(what)}`);
    }
  };
  syncBuiltinESMExports();
}

export const runtime = {
  s: script,
  // n reports a module left uninstrumented, or one that did not parse.
  n(what, file, detail) { unseen(0, what, detail ? `${file}: ${detail}` : file); },
};
defineProperty(globalThis, '__heapx', { value: runtime, enumerable: false, configurable: false, writable: false });
