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
