// Parses a large JavaScript file with esprima (MemInsight's esprima case
// study, whose overhead the paper measured at 8.7x), the parser itself
// instrumented with --include.
'use strict';
const fs = require('fs');
const esprima = require(process.env.ESPRIMA || 'esprima');
const src = fs.readFileSync(process.argv[2], 'utf8');
let nodes = 0;
for (let i = 0; i < Number(process.argv[3] || 3); i++) {
  const ast = esprima.parseScript(src, { range: true });
  nodes += ast.body.length;
}
console.log(nodes);
