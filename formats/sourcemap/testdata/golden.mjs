// Writes golden/NAME.json for each map below: Mozilla's source-map
// (npm source-map@0.8.0) answering originalPositionFor at every
// generated line and column of a grid covering the map, and the
// generated positions that have several mappings. Run from this
// directory, with source-map installed where Node finds it:
//
//	npm install --prefix /tmp/sm source-map@0.8.0
//	NODE_PATH=/tmp/sm/node_modules node golden.mjs
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';

const require = createRequire(import.meta.url);
const { SourceMapConsumer } = require('source-map');

const maps = {
  'esbuild': ['esbuild/bundle.js.map', 'https://example.com/dist/bundle.js.map'],
  'rollup': ['rollup/bundle.js.map', 'https://example.com/dist/bundle.js.map'],
  'terser': ['rollup/bundle.min.js.map', 'https://example.com/dist/bundle.min.js.map'],
  'edge': ['crafted/edge.js.map', 'https://example.com/edge.js.map'],
  'unsorted': ['crafted/unsorted.js.map', 'https://example.com/u.js.map'],
  'index': ['crafted/index.js.map', 'https://example.com/dist/app.js.map'],
};

mkdirSync('golden', { recursive: true });
for (const [name, [file, url]] of Object.entries(maps)) {
  const raw = JSON.parse(readFileSync(file, 'utf8'));
  const c = await new SourceMapConsumer(raw, url);
  // Every mapping by generated position: where a position has several,
  // Mozilla returns any of them (a binary search), so the test accepts
  // each of them there.
  let lines = 0, cols = 0;
  const at = new Map();
  c.eachMapping((m) => {
    lines = Math.max(lines, m.generatedLine); cols = Math.max(cols, m.generatedColumn);
    const k = `${m.generatedLine - 1}:${m.generatedColumn}`;
    if (!at.has(k)) at.set(k, []);
    at.get(k).push([m.source, m.originalLine === null ? -1 : m.originalLine - 1, m.originalColumn === null ? -1 : m.originalColumn, m.name]);
  });
  const ties = [...at].filter(([, v]) => v.length > 1).map(([k, v]) => [...k.split(':').map(Number), v]);
  const out = [];
  for (let line = 1; line <= lines + 1; line++) {
    for (let col = 0; col <= cols + 2; col++) {
      const o = c.originalPositionFor({ line, column: col });
      if (o.source === null && o.line === null) continue;
      out.push([line - 1, col, o.source, o.line === null ? -1 : o.line - 1, o.column === null ? -1 : o.column, o.name]);
    }
  }
  c.destroy();
  writeFileSync(`golden/${name}.json`, JSON.stringify({ map: file, url, lines: lines + 1, columns: cols + 3, found: out, ties }) + '\n');
  console.log(name, out.length);
}
