// Case study 4 (MemInsight §6, esprima): the parser gives every node a
// [start, end] range array that only that node ever points to, made with
// it and dying with it: the two numbers could be fields of the node
// (object inlining).
//
// Expected (cmd/heapx/casestudies_test.go): the range arrays (line 14,
// the `[`) number 50, all inlinable into the nodes (line 14, the `{`).
'use strict';
function parse(src) {
  const tokens = [];
  let pos = 0;
  for (const word of src.split(' ')) {
    const end = pos + word.length;
    const node = { type: 'Identifier', name: word, range: [pos, end] };
    tokens.push(node);
    pos = end + 1;
  }
  return tokens;
}

const words = [];
for (let i = 0; i < 50; i++) words.push('w' + i);
const ast = parse(words.join(' '));
let width = 0;
for (const node of ast) width += node.range[1] - node.range[0];
module.exports = width;
