// Shapes found in real code (npm's own bundle) that instrumentation must
// not change: statements without semicolons before ones it wraps, return
// and throw of a sequence, keywords followed directly by parentheses,
// directives without semicolons.
function noSemicolons() {
  "use strict"
  const box = { inner: {} }
  let out = []
  out.push(1)
  box.inner.value = [2]
  out.push(box.inner.value[0])
  box.inner['k' + 1] = 3
  eval('1')
  return out.concat(box.inner.k1)
}
function sequence(o) { let flag; return flag = true, o.x = 1, [flag, o] }
function* keywords(x) { yield(x); yield[x]; const t = typeof(x); void(x); return(x) }
function thrower() { try { throw(new Error('a')), new Error('b') } catch (e) { return e.message } }
class Stack { static #made = false; static create() { Stack.#made = true; const s = new Stack(); return Stack.#made = false, s } push(v) { this.items = this.items || []; this.items[this.items.length] = v } }
const s = Stack.create(); s.push(4)
console.log(noSemicolons(), sequence({}), [...keywords(5)], thrower(), s instanceof Stack, s.items)
