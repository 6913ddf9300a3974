// Case study 5 (MemInsight §6, escodegen's SourceNodeMock): the code
// generator wraps every piece of output in a node object with an array of
// children, only to flatten them into a string at once: most of its
// allocations are garbage within the statement (over-allocation, churn).
//
// Expected (cmd/heapx/casestudies_test.go): the two `new SourceNode`
// sites top the churn table: line 20 (leaves) with 640 objects and line
// 21 (operators) with 630, ten generations of a tree of 64 leaves; none
// is alive at the end.
'use strict';
class SourceNode {
  constructor(chunks) { this.children = chunks; }
  toString() {
    let s = '';
    for (const c of this.children) s += String(c);
    return s;
  }
}
function generate(expr) {
  if (typeof expr === 'number') return new SourceNode([String(expr)]);
  return new SourceNode(['(', generate(expr.left), ' ', expr.op, ' ', generate(expr.right), ')']);
}

function build(depth) {
  if (depth === 0) return depth + 1;
  return { op: '+', left: build(depth - 1), right: build(depth - 1) };
}

const program = build(6);
let out = '';
for (let i = 0; i < 10; i++) out = generate(program).toString();
module.exports = out;
