// Parses a large JavaScript file with acorn (the parser heapx vendors for
// its instrumenter), instrumented like the program's own code.
import { parse } from '../../jstrace/js/acorn.mjs';
import fs from 'node:fs';
const src = fs.readFileSync(process.argv[2], 'utf8');
let nodes = 0;
for (let i = 0; i < Number(process.argv[3] || 3); i++) nodes += parse(src, { ecmaVersion: 'latest', locations: true }).body.length;
console.log(nodes);
