// heapx's trace runtime: what instrumented code calls. It numbers objects
// (a private field; MemInsight used a WeakMap), keeps the synthetic clock and
// the objects' last uses, models Map/Set, array mutators, event emitters'
// listener lists and timers, marks the returns to the event loop (IDLE),
// and writes the binary records of docs/trace.md to file descriptor 3 in
// chunks (docs/trace.md, "Transport"), which heapx reads while the program
// runs. It writes as it goes: a chunk when 64 KiB are buffered, at most
// FLUSH_MS after the last one while the program runs or idles, and at
// every ending it can see (the event loop running out, process.exit, an
// uncaught exception, SIGINT, SIGTERM, SIGHUP), so a program killed
// outright loses only its last fraction of a second.
import fs from 'node:fs';
import { EventEmitter } from 'node:events';
import timers from 'node:timers';
import workerThreads from 'node:worker_threads';
import { syncBuiltinESMExports } from 'node:module';
import { ChildProcess } from 'node:child_process';

const FD = Number(process.env.HEAPX_TRACE_FD || 3);

// Record kinds (formats/memtrace).
const STRING = 1, SCRIPT = 2, FREE_VARS = 3, LAST_USE = 4, END_LAST_USE = 5, UNSEEN = 6, EXIT = 7, IDLE = 9, SIGNAL = 10;
const DECLARE = 0x10, WRITE = 0x11, CREATE_OBJ = 0x12, CREATE_FUN = 0x13, PUTFIELD = 0x14,
  FUNCTION_ENTER = 0x15, FUNCTION_EXIT = 0x16, RETURN = 0x17, SUSPEND = 0x19,
  RESUME = 0x1a, TOP_LEVEL_FLUSH = 0x1b, UPDATE_IID = 0x1c, SCRIPT_ENTER = 0x1d, SCRIPT_EXIT = 0x1e,
  COLL_SET = 0x1f, COLL_DELETE = 0x20, COLL_CLEAR = 0x21;
// EXIT's how: the event loop ran out, process.exit, uncaught, a signal.
const EXIT_SIGNAL = 3;

// The runtime's own definitions and timers use the originals, not the
// models below.
const defineProperty = Object.defineProperty, hasOwn = Object.hasOwn;
const setImmediate_ = setImmediate, setTimeout_ = setTimeout, now = () => performance.now();

const LAST_USE_PERIOD = 10000;
const CHUNK = 1 << 16;
const FLUSH_MS = 100;
// The chunk length's top bits (docs/trace.md, "Transport"): the last
// chunk, and a control message for heapx (JSON, not trace records).
const FINAL = 0x80000000, CONTROL = 0x40000000;

let buf = new Uint8Array(CHUNK + 1024);
let pos = 4;
let done = false;
let lastFlush = now();

function writeAll(b, n) {
  let off = 0;
  while (off < n) {
    try { off += fs.writeSync(FD, b, off, n - off); } catch (e) {
      if (e.code === 'EAGAIN') continue;
      done = true; return; // heapx is gone: the program runs on untraced
    }
  }
}
function header(b, len) { b[0] = len & 255; b[1] = (len >>> 8) & 255; b[2] = (len >>> 16) & 255; b[3] = len >>> 24; }
function flushChunk(final) {
  if (done) { pos = 4; return; }
  const n = pos - 4;
  header(buf, final ? (n | FINAL) >>> 0 : n);
  if (n > 0 || final) writeAll(buf, pos);
  pos = 4;
  lastFlush = now();
}
// control tells heapx something about the run (a signal seen, how the
// program ended), outside the trace.
function control(msg) {
  if (done) return;
  const b = enc.encode(JSON.stringify(msg));
  const out = new Uint8Array(b.length + 4);
  header(out, (b.length | CONTROL) >>> 0); out.set(b, 4);
  writeAll(out, out.length);
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

// Objects: ids from 2 (1 is globalThis).
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
// holds has bit id set once the trace showed an object stored in one of
// object id's properties: a primitive stored in an object that never held
// one removes no edge, and is not recorded. It covers the HOLDS_WINDOW
// latest ids, a ring, so the runtime's memory does not grow with the
// objects a program makes: older objects count as holding one (their
// primitive stores are recorded, which costs a record and loses nothing).
const HOLDS_WINDOW = 1 << 24, HOLDS_PAGE = 1 << 16;
const holds = new Int32Array(HOLDS_WINDOW >>> 5);
let holdsFloor = 0; // ids below it are out of the window
function newId(o) {
  const id = nextId++; setId(o, id);
  if (id - holdsFloor >= HOLDS_WINDOW) {
    // The oldest page leaves the window; its bits are the new ids'.
    const from = (holdsFloor % HOLDS_WINDOW) >>> 5;
    holds.fill(0, from, from + (HOLDS_PAGE >>> 5));
    holdsFloor += HOLDS_PAGE;
  }
  return id;
}
function holdsObject(id) { if (id < holdsFloor) return true; const i = id % HOLDS_WINDOW; return (holds[i >>> 5] & (1 << (i & 31))) !== 0; }
function setHolds(id) { if (id >= holdsFloor) { const i = id % HOLDS_WINDOW; holds[i >>> 5] |= 1 << (i & 31); } }
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

// Last uses: a direct-mapped table of the objects used in the open block
// (slot id & MASK), so the runtime's memory does not grow with the
// objects the program makes. An object used while another holds its slot
// evicts it: the other's LAST_USE is written then (an object may have
// several in a block; the largest time counts).
const SLOTS = 1 << 16, MASK = SLOTS - 1;
const slotId = new Float64Array(SLOTS), slotT = new Float64Array(SLOTS), slotI = new Float64Array(SLOTS);
const slotB = new Int32Array(SLOTS).fill(-1); // the block a slot was listed dirty in
const dirty = new Int32Array(SLOTS);
let nDirty = 0, block = 0;
function lastUse(s) { room(32); buf[pos++] = LAST_USE; u(slotId[s]); u(slotT[s]); u(slotI[s]); }
function use(v, iid) {
  const id = val(v);
  if (id === 0) return;
  const s = id & MASK;
  if (slotId[s] !== id) {
    if (slotB[s] === block) lastUse(s);
    else { slotB[s] = block; dirty[nDirty++] = s; }
    slotId[s] = id;
  } else if (slotB[s] !== block) { slotB[s] = block; dirty[nDirty++] = s; }
  slotT[s] = clock; slotI[s] = iid;
}

let clock = 0;
let lastIid = 0; // the last place instrumented code reported, for native models
// tick advances the clock for a program event. Its slow path, every
// few thousand ticks and after each idle point, writes the last uses,
// arms the next idle point and flushes a chunk FLUSH_MS after the last.
let nextSlow = 0, nextLastUse = LAST_USE_PERIOD, idleArmed = false;
function tick() {
  if (clock >= nextSlow) slow();
  return ++clock;
}
function slow() {
  if (clock >= nextLastUse) lastUses(clock - 1);
  if (!idleArmed) { idleArmed = true; setImmediate_(idle).unref(); }
  if (now() - lastFlush >= FLUSH_MS) flush();
  nextSlow = Math.min(nextLastUse, clock + 4096);
}
// lastUses writes the open block of LAST_USE records: uses up to upto
// are complete.
function lastUses(upto) {
  for (let k = 0; k < nDirty; k++) lastUse(dirty[k]);
  nDirty = 0; block++;
  room(12); buf[pos++] = END_LAST_USE; u(upto);
  nextLastUse = clock + LAST_USE_PERIOD;
}
// flush writes what is buffered, last uses included (they would be lost
// with the process).
function flush() {
  if (nDirty > 0) lastUses(clock - 1);
  flushChunk(false);
}
// idle runs when the program returns to the event loop with an empty
// stack (the check phase after the events that armed it, their
// microtasks done): an idle point, where leaks are judged.
let flushTimer = null;
function idle() {
  idleArmed = false; nextSlow = clock;
  sweepTimers(false);
  room(12); buf[pos++] = IDLE; u(Math.round(now()));
  if (now() - lastFlush >= FLUSH_MS) flush();
  else if (flushTimer === null) flushTimer = setTimeout_(timedFlush, FLUSH_MS).unref();
}
function timedFlush() { flushTimer = null; flush(); }

// put records a PUTFIELD of object o's key (encoded) to value v (an id).
function put(at, o, key, v) {
  if (v === 0) { if (!holdsObject(o)) return; } else setHolds(o);
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
// Function.prototype.bind makes a function that holds its target, its
// this and its arguments: a bound function of a traced function is an
// allocation where bind was called, with those three as its properties
// ([[BoundTargetFunction]], [[BoundThis]], [[BoundArguments]][i]).
patch(Function.prototype, 'bind', (orig) => function bind(thisArg) {
  const b = orig.apply(this, arguments);
  if (getId(this) === undefined || getId(b) !== undefined) return b;
  const id = newId(b);
  ev3(CREATE_OBJ, lastIid, id, 2);
  put(lastIid, id, 2 * sid('[[BoundTargetFunction]]'), val(this));
  const t = val(thisArg);
  if (t !== 0) put(lastIid, id, 2 * sid('[[BoundThis]]'), t);
  for (let i = 1; i < arguments.length; i++) {
    const a = val(arguments[i]);
    if (a !== 0) put(lastIid, id, 2 * sid(`[[BoundArguments]][${i - 1}]`), a);
  }
  return b;
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
      if (vid !== 0 || holdsObject(id)) put(base + iid, id, keyOf(k), vid);
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

// Event emitters hold their listeners: a listener the program made is
// reported as a property of its emitter, on('NAME') (on('NAME')#k for
// the k-th one held at once), removed when it is; once listeners from
// the time they are added to the time they run.
const listenerSlots = new WeakMap(); // emitter -> Map(event name -> listeners by slot)
function listenerKey(ev, k) {
  const name = typeof ev === 'symbol' ? '@@' + (ev.description || '') : String(ev);
  return 2 * sid(k === 0 ? `on('${name}')` : `on('${name}')#${k}`);
}
let processHeld = false;
function holdListener(em, ev, fn) {
  if (typeof fn !== 'function' || getId(fn) === undefined || em === null || typeof em !== 'object') return;
  if (em === process && !processHeld) {
    // process lives as long as the program: globalThis.process, made
    // before any traced code (at no place, iid 0).
    processHeld = true;
    put(0, 1, 2 * sid('process'), val(process));
  }
  let byEvent = listenerSlots.get(em);
  if (byEvent === undefined) { byEvent = new Map(); listenerSlots.set(em, byEvent); }
  let slots = byEvent.get(ev);
  if (slots === undefined) { slots = []; byEvent.set(ev, slots); }
  let k = slots.indexOf(null);
  if (k < 0) k = slots.length;
  slots[k] = fn;
  put(lastIid, val(em), listenerKey(ev, k), val(fn));
}
// dropListener reports listener fn (or a once wrapper of it) of event ev
// gone from em.
function dropListener(em, ev, fn) {
  const slots = em !== null && typeof em === 'object' ? listenerSlots.get(em)?.get(ev) : undefined;
  if (slots === undefined || typeof fn !== 'function') return;
  let k = slots.lastIndexOf(fn);
  if (k < 0 && typeof fn.listener === 'function') k = slots.lastIndexOf(fn.listener);
  if (k < 0) return;
  slots[k] = null;
  put(lastIid, val(em), listenerKey(ev, k), 0);
}
function dropAllListeners(em, ev) {
  const byEvent = em !== null && typeof em === 'object' ? listenerSlots.get(em) : undefined;
  if (byEvent === undefined) return;
  for (const [name, slots] of byEvent) {
    if (ev !== undefined && name !== ev) continue;
    for (let k = 0; k < slots.length; k++) if (slots[k] !== null) { slots[k] = null; put(lastIid, val(em), listenerKey(name, k), 0); }
  }
}
{
  const EE = EventEmitter.prototype;
  for (const name of ['on', 'addListener', 'prependListener', 'once', 'prependOnceListener']) {
    patch(EE, name, (orig) => ({ [name](ev, fn) { const r = orig.apply(this, arguments); holdListener(this, ev, fn); return r; } })[name]);
  }
  for (const name of ['off', 'removeListener']) {
    patch(EE, name, (orig) => ({ [name](ev, fn) { const r = orig.apply(this, arguments); dropListener(this, ev, fn); return r; } })[name]);
  }
  patch(EE, 'removeAllListeners', (orig) => function removeAllListeners(ev) { const r = orig.apply(this, arguments); dropAllListeners(this, ev); return r; });
}

// Timers hold their callbacks: one the program made is reported as a
// property of globalThis, setTimeout()#k (setInterval()#k,
// setImmediate()#k), until it has run (a timeout or an immediate) or is
// cleared. The callback is given to Node unwrapped, so that the
// program's stack traces name its frames as untraced ("Timeout.f [as
// _onTimeout]"); a one-shot timer is seen to have run by Node's own mark
// (_destroyed, set once it ran or was cleared, Node 18 to 24) at the next
// idle point, which follows the callback.
const timerOf = new WeakMap(); // Timeout or Immediate -> [slots, k]
const timerSlots = { setTimeout: [], setInterval: [], setImmediate: [] };
const oneShots = new Set(); // one-shot timers not yet seen to have run
let lastSweep = 0;
// sweepTimers releases the one-shot timers that have run. With many
// timers pending it runs at most every 20 ms, so an idle point stays cheap.
function sweepTimers(force) {
  if (oneShots.size === 0 || (!force && oneShots.size > 64 && now() - lastSweep < 20)) return;
  lastSweep = now();
  for (const t of oneShots) if (t._destroyed) { oneShots.delete(t); releaseTimer(t); }
}
function releaseTimer(t) {
  const e = t !== null && typeof t === 'object' ? timerOf.get(t) : undefined;
  if (e === undefined || e[0][e[1]] === false) return;
  e[0][e[1]] = false;
  put(lastIid, 1, 2 * sid(`${e[2]}()#${e[1]}`), 0);
}
// patchOwn replaces obj[name] with wrap(original), keeping the
// original's own properties (util.promisify.custom).
function patchOwn(obj, name, fn) {
  const orig = obj[name];
  for (const k of Reflect.ownKeys(orig)) if (k !== 'name' && k !== 'length' && k !== 'prototype') defineProperty(fn, k, Object.getOwnPropertyDescriptor(orig, k));
  defineProperty(obj, name, { ...Object.getOwnPropertyDescriptor(obj, name), value: fn });
}
for (const kind of ['setTimeout', 'setInterval', 'setImmediate']) {
  const orig = timers[kind], slots = timerSlots[kind], repeats = kind === 'setInterval';
  const replacement = ({ [kind](fn) {
    if (typeof fn !== 'function' || getId(fn) === undefined) return orig.apply(this, arguments);
    let k = slots.indexOf(false);
    if (k < 0) k = slots.length;
    slots[k] = true;
    put(lastIid, 1, 2 * sid(`${kind}()#${k}`), val(fn));
    const t = orig.apply(this, arguments);
    timerOf.set(t, [slots, k, kind]);
    if (!repeats && t !== null && typeof t === 'object') oneShots.add(t);
    return t;
  } })[kind];
  patchOwn(timers, kind, replacement);
  patchOwn(globalThis, kind, replacement);
}
for (const kind of ['clearTimeout', 'clearInterval', 'clearImmediate']) {
  const orig = timers[kind];
  const replacement = ({ [kind](t) { releaseTimer(t); oneShots.delete(t); return orig.apply(this, arguments); } })[kind];
  patchOwn(timers, kind, replacement);
  patchOwn(globalThis, kind, replacement);
}

// Ending. Every way out the runtime can see writes the last uses and the
// EXIT record in the last chunk, then tells heapx how the program ended.
let exitHow = 0, exitDetail = '';
function end(code) {
  if (done) return;
  sweepTimers(true);
  lastUses(clock);
  room(32); buf[pos++] = EXIT; z(code); u(exitHow); str(exitDetail);
  flushChunk(true);
  control({ exit: { code, how: exitHow, detail: exitDetail } });
  done = true;
}
process.on('uncaughtExceptionMonitor', (err) => {
  // A throw at a module's top level reaches Node as a rejection when a
  // loader hook is active, so exceptions and rejections are one kind.
  exitHow = 2;
  exitDetail = err && err.stack ? String(err.stack).split('\n')[0] : String(err);
});
const reallyExit = process.exit;
process.exit = function exit(code) { if (exitHow === 0) exitHow = 1; return reallyExit.apply(this, arguments); };
process.on('exit', (code) => end(code | 0));

// Signals that end a Node program by default. The runtime's listener
// records the signal and tells heapx at once (a terminal's Ctrl-C reaches
// heapx and the program both: heapx then passes nothing on). When the
// program has no listener of its own, the signal would have ended it: the
// trace is ended as such and the signal raised again with the runtime's
// listener gone, so the program dies of it as it would have untraced.
// The runtime's listener is hidden from process.listeners and
// listenerCount, which libraries such as signal-exit count to decide
// whether to raise the signal again themselves.
const endingSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
function onSignal(sig) {
  room(24); buf[pos++] = SIGNAL; str(sig);
  flush();
  control({ signal: sig });
  if (process.listenerCount(sig) > 0) return; // the program's own listeners decide
  exitHow = EXIT_SIGNAL; exitDetail = sig;
  end(-1);
  for (const s of endingSignals) origRemove.call(process, s, onSignal);
  process.kill(process.pid, sig);
}
const origListeners = process.listeners, origRaw = process.rawListeners, origCount = process.listenerCount, origRemove = process.removeListener;
if (process.platform !== 'win32') {
  for (const sig of endingSignals) process.on(sig, onSignal);
  const ours = (ev) => endingSignals.includes(ev);
  defineProperty(process, 'listeners', { value: function listeners(ev) { const l = origListeners.apply(this, arguments); return ours(ev) ? l.filter((f) => f !== onSignal) : l; }, writable: true, configurable: true });
  defineProperty(process, 'rawListeners', { value: function rawListeners(ev) { const l = origRaw.apply(this, arguments); return ours(ev) ? l.filter((f) => f !== onSignal) : l; }, writable: true, configurable: true });
  defineProperty(process, 'listenerCount', { value: function listenerCount(ev) { const n = origCount.apply(this, arguments); return ours(ev) && origListeners.call(this, ev).includes(onSignal) ? n - 1 : n; }, writable: true, configurable: true });
}

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
