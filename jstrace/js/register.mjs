// heapx trace's entry (node --import): in the traced program's main
// thread it installs the runtime, instruments CommonJS modules as they are
// compiled and ES modules through a load hook. In a worker thread it only
// says, once, that the worker's code is not traced.
import { isMainThread } from 'node:worker_threads';
import fs from 'node:fs';
import Module, { register } from 'node:module';

if (!isMainThread) {
  // One small chunk (writes under 4 KiB to a pipe are atomic) holding an
  // UNSEEN record: what 2, a worker thread.
  const text = new TextEncoder().encode(`worker thread ${process.argv[1] || ''}`.slice(0, 1000));
  const rec = [6, 0, 2];
  let n = text.length; while (n > 0x7f) { rec.push((n & 0x7f) | 0x80); n >>>= 7; } rec.push(n);
  const chunk = new Uint8Array(4 + rec.length + text.length);
  chunk.set(rec, 4); chunk.set(text, 4 + rec.length);
  new DataView(chunk.buffer).setUint32(0, rec.length + text.length, true);
  try { fs.writeSync(Number(process.env.HEAPX_TRACE_FD || process.env.HEAPX_TRACE_FD_USED || 3), chunk); } catch {}
} else if (process.env.HEAPX_TRACE_FD) {
  const { runtime } = await import('./runtime.mjs');
  const { instrument } = await import('./instrument.mjs');
  const { selector, include } = await import('./select.mjs');
  // Child processes are not traced: they must not inherit the import.
  delete process.env.NODE_OPTIONS;
  const fd = process.env.HEAPX_TRACE_FD;
  delete process.env.HEAPX_TRACE_FD;
  process.env.HEAPX_TRACE_FD_USED = fd;
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
