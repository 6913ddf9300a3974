'use strict';
// heapx trace's entry, a preload (node --require): in the traced
// program's main thread it installs the runtime, instruments CommonJS
// modules as they are compiled and ES modules through a load hook. Worker
// threads and child processes are not traced (the runtime records each as
// UNSEEN).
//
// A preload and not an --import: with --import Node runs a CommonJS main
// module through its ES module loader, which the program would see (its
// stack traces' last frames, its top-level throws reported as
// rejections). The runtime and the instrumenter are ES modules without
// top-level await, which require() loads (Node 20.19, 22.12 and later);
// an older Node loads them with import() and starts the main module once
// they are there.
const { isMainThread } = require('node:worker_threads');
const Module = require('node:module');
const { pathToFileURL } = require('node:url');

// A child process inherits NODE_OPTIONS (and so this preload) but not the
// trace's pipe, and a worker thread shares the process: neither is
// traced, and the runtime records each as UNSEEN. HEAPX_TRACE_PID names
// the traced process once it runs.
const traced = !process.env.HEAPX_TRACE_PID || process.env.HEAPX_TRACE_PID === String(process.pid);
if (traced && isMainThread && process.env.HEAPX_TRACE_FD) {
  // What the program sees of the built-ins before the runtime replaces
  // some of them (its models): each replacement then reads as the
  // built-in it stands for (transparent.mjs).
  const { EventEmitter } = require('node:events');
  const timers = require('node:timers');
  const { ChildProcess } = require('node:child_process');
  const workerThreads = require('node:worker_threads');
  const holders = [globalThis, Object, Function.prototype, Array.prototype, Map.prototype, Set.prototype, WeakMap.prototype,
    Promise, Promise.prototype, EventEmitter.prototype, timers, process, ChildProcess.prototype, workerThreads, Module.prototype];
  const before = holders.map((o) => new Map(Reflect.ownKeys(o).map((k) => [k, Object.getOwnPropertyDescriptor(o, k)?.value])));
  const ours = new Set([__filename]);
  const load = (name) => { const p = require.resolve('./' + name); ours.add(p); return require(p); };
  const setup = (transparent, { runtime }, { instrument }, { selector, include, tooBig }) => {
    runtime.m = transparent.script;
    process.env.HEAPX_TRACE_PID = String(process.pid);
    const instrumented = selector(include);
    const compile = Module.prototype._compile;
    let scripts = 0;
    Module.prototype._compile = function _compile(content, filename) {
      const which = instrumented(filename);
      if (which === false) runtime.n(3, filename);
      else if (which) {
        const big = tooBig(content);
        if (big) runtime.n(3, filename, big);
        else try { content = instrument(content, filename, 'cjs', 'c' + scripts++); } catch (e) { runtime.n(4, filename, e.message); }
      }
      const args = Array.prototype.slice.call(arguments);
      args[0] = content;
      transparent.loading(_compile, filename);
      return Reflect.apply(compile, this, args);
    };
    // module.register came with node 20.6 (and 18.19): without it ES
    // modules run uninstrumented, and the trace says so.
    if (typeof Module.register === 'function') Module.register('./hooks.mjs', pathToFileURL(__filename), { data: { include } });
    else runtime.n(3, 'every ES module', `node ${process.version} has no module.register`);
    const disguise = () => holders.forEach((o, i) => {
      for (const [k, was] of before[i]) {
        const now = Object.getOwnPropertyDescriptor(o, k)?.value;
        if (typeof was === 'function' && typeof now === 'function' && now !== was) transparent.disguise(now, was);
      }
    });
    disguise();
    for (const p of ours) delete require.cache[p];
    // The program's environment as untraced: heapx's variables go, and its
    // preload leaves NODE_OPTIONS (a child process, which is not traced,
    // then does not load it either).
    for (const k of ['HEAPX_TRACE_FD', 'HEAPX_TRACE_INCLUDE', 'HEAPX_TRACE_PID']) delete process.env[k];
    const options = (process.env.NODE_OPTIONS || '').replace(`--require="${__filename}"`, '').trim();
    if (options) process.env.NODE_OPTIONS = options; else delete process.env.NODE_OPTIONS;
  };
  const names = ['transparent.mjs', 'runtime.mjs', 'instrument.mjs', 'select.mjs'];
  let modules;
  try { modules = names.map(load); } catch (e) {
    if (e.code !== 'ERR_REQUIRE_ESM' && e.code !== 'ERR_REQUIRE_ASYNC_MODULE') throw e;
  }
  if (modules) setup(...modules);
  else {
    // No require() of ES modules: the main module starts once they are
    // loaded (Module.runMain is Node's documented place for a preload).
    const ready = Promise.all(names.map((n) => import(pathToFileURL(require.resolve('./' + n)).href)));
    const runMain = Module.runMain;
    Module.runMain = function () {
      const args = arguments;
      // From an immediate, not the promise's callback: a throw of the
      // main module is then an uncaught exception, not a rejection.
      ready.then((m) => { setup(...m); Module.runMain = runMain; setImmediate(() => Reflect.apply(runMain, this, args)); });
    };
  }
}
