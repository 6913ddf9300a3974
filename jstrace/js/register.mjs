// heapx trace's entry (node --import): in the traced program's main
// thread it installs the runtime, instruments CommonJS modules as they are
// compiled and ES modules through a load hook. Worker threads and child
// processes are not traced (the runtime records each as UNSEEN).
import { isMainThread } from 'node:worker_threads';
import Module from 'node:module';

// A child process inherits NODE_OPTIONS (and so this import) but not the
// trace's pipe, and a worker thread shares the process: neither is
// traced, and the runtime records each as UNSEEN. HEAPX_TRACE_PID names
// the traced process once it runs.
const traced = !process.env.HEAPX_TRACE_PID || process.env.HEAPX_TRACE_PID === String(process.pid);
if (traced && isMainThread && process.env.HEAPX_TRACE_FD) {
  // What the program sees of the built-ins before the runtime replaces
  // some of them (its models): each replacement then reads as the
  // built-in it stands for (transparent.mjs).
  const { EventEmitter } = await import('node:events');
  const timers = await import('node:timers');
  const childProcess = await import('node:child_process');
  const workerThreads = await import('node:worker_threads');
  const holders = [globalThis, Object, Function.prototype, Array.prototype, Map.prototype, Set.prototype, WeakMap.prototype,
    Promise, Promise.prototype, EventEmitter.prototype, timers.default, process, childProcess.ChildProcess.prototype, workerThreads.default];
  const before = holders.map((o) => new Map(Reflect.ownKeys(o).map((k) => [k, Object.getOwnPropertyDescriptor(o, k)?.value])));
  const transparent = await import('./transparent.mjs');
  const { runtime } = await import('./runtime.mjs');
  const { instrument } = await import('./instrument.mjs');
  const { selector, include } = await import('./select.mjs');
  runtime.m = transparent.script;
  await import('node:child_process'); // the runtime's patch of it is made by now
  holders.forEach((o, i) => {
    for (const [k, was] of before[i]) {
      const now = Object.getOwnPropertyDescriptor(o, k)?.value;
      if (typeof was === 'function' && typeof now === 'function' && now !== was) transparent.disguise(now, was);
    }
  });
  process.env.HEAPX_TRACE_PID = String(process.pid);
  const instrumented = selector(include);
  const compile = Module.prototype._compile;
  let scripts = 0;
  Module.prototype._compile = function _compile(content, filename) {
    const which = instrumented(filename);
    if (which === false) runtime.n(3, filename);
    else if (which) {
      try { content = instrument(content, filename, 'cjs', 'c' + scripts++); } catch (e) { runtime.n(4, filename, e.message); }
    }
    return Reflect.apply(compile, this, [content, ...Array.prototype.slice.call(arguments, 1)]);
  };
  transparent.disguise(Module.prototype._compile, compile);
  // module.register came with node 20.6 (and 18.19): without it ES
  // modules run uninstrumented, and the trace says so.
  if (typeof Module.register === 'function') Module.register('./hooks.mjs', import.meta.url, { data: { include } });
  else runtime.n(3, 'every ES module', `node ${process.version} has no module.register`);
}
