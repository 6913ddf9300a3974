// An ES module: toString, stacks, import.meta, top-level await, and an
// unhandled rejection at the end.
import { readFileSync } from 'node:fs';
export const f = (a) => a * 2;
export default class Thing { constructor() { this.v = {}; } }
console.log(f.toString(), Thing.toString());
console.log(new Error('esm').stack.split('\n').slice(0, 2).join('\n'));
console.log(typeof import.meta.url, readFileSync.name);
await new Promise((r) => setTimeout(r, 1));
function fail() { return Promise.reject(new RangeError('rejected')); }
fail();
