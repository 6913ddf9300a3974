// Writes function-prototype.heapsnapshot.gz: a heap where plain objects
// have Function.prototype as their prototype, as esbuild's ESM interop
// makes them, next to many closures. V8 names both kinds "Function", and
// DevTools' Summary then shows only one of the two classes (see
// README.md). Run with Node v20 from this directory:
//
//     node make-function-prototype.js
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const zlib = require('node:zlib');

// esbuild's helpers, as a bundle of CommonJS modules imported from ESM
// code carries them (`__toESM`): the namespace object of a module whose
// exports is a function gets that function's prototype, Function.prototype.
const __create = Object.create;
const __getProtoOf = Object.getPrototypeOf;
const __defProp = Object.defineProperty;
const __getOwnPropNames = Object.getOwnPropertyNames;
const __hasOwnProp = Object.prototype.hasOwnProperty;
const __copyProps = (to, from, except) => {
  if ((from && typeof from === 'object') || typeof from === 'function') {
    for (const key of __getOwnPropNames(from)) {
      if (!__hasOwnProp.call(to, key) && key !== except) {
        __defProp(to, key, { get: () => from[key], enumerable: true });
      }
    }
  }
  return to;
};
const __toESM = (mod, isNodeMode, target) => (
  (target = mod != null ? __create(__getProtoOf(mod)) : {}),
  __copyProps(isNodeMode || !mod || !mod.__esModule ? __defProp(target, 'default', { value: mod, enumerable: true }) : target, mod)
);

// Eight CommonJS modules whose exports are functions (debug, ms, depd...),
// each imported once: eight namespace objects.
const modules = [];
for (let i = 0; i < 8; i++) {
  const exported = function moduleExport() { return i; };
  exported.version = '1.0.' + i;
  modules.push(__toESM(exported, 1));
}

// Application closures: 4,000 handlers, each capturing its own state.
const handlers = [];
for (let i = 0; i < 4000; i++) {
  const state = { id: i };
  handlers.push(function handler() { return state.id; });
}
globalThis.fixture = { modules, handlers };

const out = path.join(__dirname, 'function-prototype.heapsnapshot');
v8.writeHeapSnapshot(out);
fs.writeFileSync(out + '.gz', zlib.gzipSync(fs.readFileSync(out), { level: 9 }));
fs.unlinkSync(out);
console.log('wrote', out + '.gz', 'with Node', process.version);
