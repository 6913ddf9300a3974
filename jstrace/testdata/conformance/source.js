// Function.prototype.toString of every kind of function and class, and
// of the built-ins heapx replaces, gives what it gives untraced.
function declared(a, b = {}) { return a + b; }
const arrow = (x) => ({ x });
const asyncArrow = async (x) => { await x; return [x]; };
async function asyncFn() { await null; }
function* gen() { yield {}; }
async function* agen() { yield* [1, 2]; }
class Base { #p = {}; static s = []; constructor() { this.o = {}; } m() { return this.#p; } get g() { return 1; } set g(v) { this.o.v = v; } static sm() {} }
class Derived extends Base { constructor() { super(); this.d = [1]; } async *am() {} }
const obj = { method() { return {}; }, get acc() { return []; }, set acc(v) {}, ['comp' + 1]() {}, async am() {}, *gm() {} };
const nested = function outer(f = () => ({ inner: 1 })) { return function inner() { return f(); }; };
console.log([declared, arrow, asyncArrow, asyncFn, gen, agen, Base, Derived, nested, nested()].map(String).join('\n'));
console.log([Base.prototype.m, Object.getOwnPropertyDescriptor(Base.prototype, 'g').get, Object.getOwnPropertyDescriptor(Base.prototype, 'g').set, Base.sm, Derived.prototype.am].map(String).join('\n'));
console.log(Object.values(Object.getOwnPropertyDescriptors(obj)).map((d) => String(d.value || d.get) + (d.set ? ' ' + d.set : '')).join('\n'));
console.log(Function.prototype.toString.call(class {}), (function () {}).toString(), (() => {}).toString());
console.log(String(Map.prototype.set), String(Set.prototype.add), String(Array.prototype.push), String(Object.assign), String(Function.prototype.toString), String(setTimeout).slice(0, 30), String(process.exit).slice(0, 30));
console.log([declared, arrow, asyncFn, gen, Base, obj.method, nested].map((f) => `${f.name}/${f.length}`).join(' '));
console.log([Map.prototype.set, Set.prototype.add, Array.prototype.push, Array.prototype.splice, Object.assign, Object.defineProperty].map((f) => `${f.name}/${f.length}`).join(' '));
const named = { f: function () {}, g: () => {}, h: class {} };
let inferred = (function () {}), inferred2; inferred2 = (() => {});
console.log(named.f.name, named.g.name, named.h.name, inferred.name, inferred2.name);
console.log(new Function('a', 'return a').toString());
