#!/usr/bin/env node
// Lint JavaScript files with ESLint's Node.js API, then write a heap snapshot of this process:
// a real program's heap without a leak, for testdata/suspects/node-eslint.heapsnapshot.gz
// (see testdata/gen/README.md). Needs `npm install eslint@9` in a directory on NODE_PATH or above cwd.
//   node eslint-heap.js OUT.heapsnapshot FILE_OR_DIR...
"use strict";
const v8 = require("node:v8");
const { ESLint } = require("eslint");

(async () => {
  const [out, ...targets] = process.argv.slice(2);
  const eslint = new ESLint({
    cwd: process.cwd(),
    overrideConfigFile: true, // no eslint.config.js lookup: the rules below are the whole config
    overrideConfig: {
      languageOptions: { ecmaVersion: "latest", sourceType: "commonjs" },
      rules: { "no-unused-vars": "warn", "no-undef": "off", "eqeqeq": "warn", "prefer-const": "warn", "no-var": "warn" },
    },
  });
  const results = await eslint.lintFiles(targets);
  let messages = 0;
  for (const r of results) messages += r.messages.length;
  // Keep the results alive, as an editor integration would, so the heap holds a real answer.
  globalThis.lastLint = results;
  v8.writeHeapSnapshot(out);
  // One line after the snapshot, so the stdout pipe opened by it is not in the heap.
  console.log(JSON.stringify({ out, files: results.length, messages }));
})();
