// heapx trace's entry (node --import): in the traced program's main
// thread it installs the runtime, instruments CommonJS modules as they are
// compiled and ES modules through a load hook. Worker threads and child
// processes are not traced (the runtime records each as UNSEEN).
import { isMainThread } from 'node:worker_threads';
import Module, { register } from 'node:module';

// A child process inherits NODE_OPTIONS (and so this import) but not the
// trace's pipe, and a worker thread shares the process: neither is
// traced, and the runtime records each as UNSEEN. HEAPX_TRACE_PID names
// the traced process once it runs.
const traced = !process.env.HEAPX_TRACE_PID || process.env.HEAPX_TRACE_PID === String(process.pid);
if (traced && isMainThread && process.env.HEAPX_TRACE_FD) {
  const { runtime } = await import('./runtime.mjs');
  const { instrument } = await import('./instrument.mjs');
  const { selector, include } = await import('./select.mjs');
  process.env.HEAPX_TRACE_PID = String(process.pid);
  const instrumented = selector(include);
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    const which = instrumented(filename);
    if (which === false) runtime.n(3, filename);
    else if (which) {
      try { content = instrument(content, filename, 'cjs'); } catch (e) { runtime.n(4, filename, e.message); }
    }
    return compile.call(this, content, filename);
  };
  register('./hooks.mjs', import.meta.url, { data: { include } });
}
