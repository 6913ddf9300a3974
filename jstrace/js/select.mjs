// Which files heapx instruments: everything outside node_modules, and
// what matches an --include glob (HEAPX_TRACE_INCLUDE, a JSON array).
import { fileURLToPath } from 'node:url';

// globRegExp turns a path glob into a RegExp: ** any path, * any name
// part, ? one character.
function globRegExp(g) {
  let r = '';
  for (let i = 0; i < g.length; i++) {
    const c = g[i];
    if (c === '*' && g[i + 1] === '*') { r += '.*'; i++; if (g[i + 1] === '/') i++; }
    else if (c === '*') r += '[^/]*';
    else if (c === '?') r += '[^/]';
    else r += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp('^' + r + '$');
}

export function selector(include) {
  const globs = (include || []).map(globRegExp);
  // instrumented says whether file (a path or file: URL) gets instrumented;
  // null for what is not a file.
  return (file) => {
    if (file.startsWith('file:')) file = fileURLToPath(file);
    else if (/^[a-z]+:/.test(file)) return null;
    if (globs.some((g) => g.test(file))) return true;
    return !/[\\/]node_modules[\\/]/.test(file);
  };
}

export const include = JSON.parse(process.env.HEAPX_TRACE_INCLUDE || '[]');

// maxSource is the size of the largest file heapx instruments (bytes of
// UTF-16 source, HEAPX_TRACE_MAX_SOURCE, default 4 MiB): instrumenting
// costs about a CPU second and 200 MB per megabyte of source (acorn's
// tree, the instrumented text V8 compiles, seven times the original), so
// a bundle of tens of MB would take the program's start minutes and
// gigabytes (docs/benchmarks.md). A larger file runs as it is, and the
// trace says so (UNSEEN): its objects are seen where traced code uses them.
export const maxSource = Number(process.env.HEAPX_TRACE_MAX_SOURCE) > 0 ? Number(process.env.HEAPX_TRACE_MAX_SOURCE) : 4 << 20;

// tooBig is the UNSEEN detail of a source heapx does not instrument for
// its size, or ''.
export function tooBig(source) {
  if (source.length <= maxSource) return '';
  const mb = (n) => (n / (1 << 20)).toFixed(1);
  return `${mb(source.length)} MB is over the ${mb(maxSource)} MB heapx instruments (HEAPX_TRACE_MAX_SOURCE); it ran uninstrumented`;
}
