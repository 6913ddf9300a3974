// with bodies, eval, new Function, getters and setters, Proxies, mapped
// arguments: what the program observes.
var w = { t() { return this === w; }, n: 1 };
with (w) { console.log(t(), n, typeof t); }
const seen = [];
const scope = new Proxy({ x: 1 }, { has(t, k) { seen.push(String(k)); return k in t; }, get(t, k) { if (k !== Symbol.unscopables) seen.push('get ' + String(k)); return t[k]; } });
with (scope) { x; (function () { return typeof console; })(); var made = { y: 2 }; }
console.log(seen.join(','));
function sloppy(a, b) { arguments[0] = 9; b = 7; return [a, arguments[1], arguments.length, Object.prototype.toString.call(arguments)]; }
function strict(a) { 'use strict'; arguments[0] = 9; return [a, arguments.length]; }
console.log(sloppy(1, 2), strict(1));
const x = 'outer';
function ev() { const x = 'inner'; return [eval('x'), (0, eval)('typeof x'), new Function('return typeof x')()]; }
console.log(ev(), eval('var evalDeclared = { v: 1 }; evalDeclared.v'), typeof evalDeclared);
const log = [];
const target = {};
const p = new Proxy(target, { set(t, k, v) { log.push('set ' + String(k)); t[k] = v; return true; }, get(t, k) { log.push('get ' + String(k)); return t[k]; }, defineProperty(t, k, d) { log.push('define ' + String(k)); return Reflect.defineProperty(t, k, d); } });
p.a = { v: 1 }; p.b = p.a; const holder = { p }; holder.p.c = [p.b]; p['d' + 1] = 2; delete p.a;
console.log(log.join(','), Object.keys(target));
let calls = 0;
const acc = { get v() { calls++; return { n: calls }; }, set v(x) { this._v = x; } };
acc.v = acc.v; const copy = { ...acc }; Object.assign({}, acc);
console.log(calls, acc._v, copy.v);
const frozen = Object.freeze({ inner: Object.freeze({ k: 1 }) });
const box = { frozen };
box.frozen.inner.k = 2; box.frozen['x'] = 3; // sloppy: silently ignored
console.log(box.frozen.inner.k, box.frozen.x);
(function () { 'use strict'; try { box.frozen.inner.k = 2; } catch (e) { console.log(e.constructor.name, e.message); } })();
const order = [];
const o2 = { get a() { order.push('a'); return { b: {} }; } };
o2.a.b.c = (order.push('rhs'), 1);
console.log(order.join(','));
console.log(Object.keys(globalThis).join(','));
const own = []; for (const k in globalThis) own.push(k);
console.log(own.join(','));
console.log(Object.keys(require.cache).map((f) => require('path').basename(f)), Object.keys(process.env).filter((k) => /HEAPX/.test(k)), process.env.NODE_OPTIONS);
