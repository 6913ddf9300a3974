// ES module load hook (module.register): instruments each module's source
// as it loads. It runs on Node's loader thread; the instrumented code
// reports to the runtime on the main thread through the __heapx global.
import { fileURLToPath } from 'node:url';
import { instrument } from './instrument.mjs';
import { selector, tooBig } from './select.mjs';

let instrumented = selector([]);
let scripts = 0; // keys of the scripts instrumented here: m0, m1, ... (CommonJS ones are c0, c1, ...)

export function initialize(data) { instrumented = selector(data.include); }

// suffix puts code after a module's last line, on a line of its own: no
// line or column of the module moves (a prefix would move every column of
// a minified module's one line).
function suffix(source, code) { return `${source}\n;${code}`; }

export async function load(url, context, next) {
  const r = await next(url, context);
  if (r.format !== 'module' || r.source == null) return r; // CommonJS goes through Module.prototype._compile
  const which = instrumented(url);
  if (which === null) return r;
  const file = fileURLToPath(url);
  const source = typeof r.source === 'string' ? r.source : new TextDecoder().decode(r.source);
  if (!which) return { ...r, source: suffix(source, `__heapx.n(3,${JSON.stringify(file)});`) };
  const big = tooBig(source);
  if (big) return { ...r, source: suffix(source, `__heapx.n(3,${JSON.stringify(file)},${JSON.stringify(big)});`) };
  try {
    return { ...r, source: instrument(source, file, 'esm', 'm' + scripts++) };
  } catch (e) {
    return { ...r, source: suffix(source, `__heapx.n(4,${JSON.stringify(file)},${JSON.stringify(String(e.message))});`) };
  }
}
