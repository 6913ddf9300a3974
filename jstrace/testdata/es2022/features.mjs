// ES2022+ features, each printing what it computed: heapx trace must
// leave the output unchanged.
import { helper, counter as count } from './helper.mjs';
import * as ns from './helper.mjs';

class Shape {
  #sides;
  static #made = 0;
  static registry = new Map();
  label = `shape`;
  constructor(sides) {
    this.#sides = sides;
    Shape.#made++;
    Shape.registry.set(sides, this);
  }
  get sides() { return this.#sides; }
  set sides(v) { this.#sides = v; }
  #secret() { return this.#sides * 2; }
  reveal() { return this.#secret(); }
  static made() { return Shape.#made; }
  static isShape(o) { return #sides in o; }
  static { Shape.initialised = true; }
}
class Square extends Shape {
  constructor() { super(4); this.kind = 'square'; }
  reveal() { return super.reveal() + 1; }
}
const sq = new Square();
console.log(sq.sides, sq.reveal(), Shape.made(), Shape.isShape(sq), Shape.isShape({}), Shape.initialised, sq.label, Square.name, sq.constructor.name);
sq.sides = 5;
console.log(sq.sides, [...Shape.registry.keys()]);

// Destructuring, defaults, rest, spread.
const { a, b: { c = 3 } = {}, ...rest } = { a: 1, b: {}, d: 4, e: 5 };
const [x, , y = 10, ...others] = [1, 2, undefined, 4, 5];
let p = 1, q = 2;
[p, q] = [q, p];
({ p, q = 7 } = { p: p * 10 });
console.log(a, c, rest, x, y, others, p, q, Math.max(...others, 0));
function params({ name = 'anon', tags: [first = 'none'] = [] } = {}, ...more) { return `${name}:${first}:${more.length}`; }
console.log(params(), params({ name: 'n', tags: ['t'] }, 1, 2));

// Optional chaining, nullish, logical assignment.
const deep = { l1: { l2: { fn: () => 'called' } }, arr: [{ v: 1 }] };
console.log(deep?.l1?.l2?.fn?.(), deep.nope?.l2.fn(), deep.arr?.[0]?.v, deep.arr?.[5]?.v ?? 'dflt');
let o1 = null; o1 ??= { set: true }; o1.count ||= 1; o1.count &&= o1.count + 1; o1.z ??= 'zz';
console.log(o1, 0 ?? 'never', null ?? 'null-dflt');

// Arrow names, function names, classes as values.
const arrow = () => 1, fnExpr = function () {}, obj = { m() {}, f: () => {}, g: function () {}, ['comp' + 1]: () => {} };
let later; later = () => {};
const Anon = class {};
console.log(arrow.name, fnExpr.name, obj.m.name, obj.f.name, obj.g.name, obj.comp1.name, later.name, Anon.name, (() => {}).name, helper.name);

// Generators, async, for-await, top-level await.
function* gen(n) { for (let i = 0; i < n; i++) { const got = yield i; if (got) console.log('got', got); } return 'done'; }
const g = gen(3);
console.log(g.next(), g.next('hello'), [...gen(2)], g.next(), g.next());
async function* agen() { yield 1; await null; yield 2; }
const collected = [];
for await (const v of agen()) collected.push(v);
console.log(collected);
async function waitFor(v, ms) { await new Promise((r) => setTimeout(r, ms)); return v; }
const results = await Promise.all([waitFor('a', 5), waitFor('b', 1)]);
console.log(results, await waitFor('tla', 1));
async function fails() { await null; throw new Error('boom'); }
try { await fails(); } catch (e) { console.log('caught', e.message); }
async function catches() { try { await fails(); } catch (e) { return 'inner ' + e.message; } }
console.log(await catches());

// Numbers, regexps, templates, labels, switch, closures.
console.log(1_000_000n * 2n, 0b1010, 0o17, 0xff, 1e3, /(?<year>\d{4})/d.exec('in 2024').indices.groups.year, `t${1 + 1}t`, String.raw`a\nb`);
const counters = [];
for (let i = 0; i < 3; i++) counters.push(() => i);
console.log(counters.map((f) => f()));
outer: for (const i of [1, 2, 3]) { for (const j of [1, 2]) { if (j === 2) continue outer; if (i === 3) break outer; console.log('ij', i, j); } }
function sw(v) { switch (v) { case 1: { let s = 'one'; return s; } case 2: function inCase() { return 'two'; } return inCase(); default: return 'many'; } }
console.log(sw(1), sw(2), sw(3));
const m = new Map([[1, { one: 1 }]]); const s = new Set([1]); m.set(2, { two: 2 }); m.delete(1); s.add(sq); s.clear();
const arr = [1, 2, 3]; arr.push({}, 5); arr.pop(); arr.shift(); arr.unshift(0); arr.splice(1, 1, 'x'); arr.sort(); arr.reverse();
console.log(m.size, s.size, arr.length, JSON.stringify(arr));
const holder = { list: [] }; holder.list[0] = holder; holder['key' + 1] = [1]; delete holder.key1; holder.list[holder.list.length] = 2;
console.log(Object.keys(holder), holder.list.length);
let chain = { next: null }; for (let i = 0; i < 3; i++) chain = { next: chain, i };
console.log(chain.i, chain.next.i, chain?.next?.next?.next?.next);
console.log(count(), count(), ns.counter(), import.meta.url.endsWith('features.mjs'), typeof require);
label: { console.log('block'); break label; }
var hoisted = hoistedFn(); function hoistedFn() { return 'hoisted'; }
console.log(hoisted, eval('1 + 1'), new Function('return 3')(), (0, eval)('4'));
const err = new Error('stack line'); console.log('error at line', /features\.mjs:(\d+):/.exec(err.stack)[1]);
