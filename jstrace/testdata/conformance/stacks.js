// Stack traces: positions, frames, the program's own prepareStackTrace,
// captureStackTrace, stackTraceLimit, eval origins, async frames.
function a(x) { return b(x); }
function b(x) { const o = { f() { return c(x); } }; return o.f(); }
function c(x) { if (x) throw new Error('deep ' + x); return new Error('made').stack; }
console.log(c(0));
try { a(1); } catch (e) { console.log(e.stack); }
try { null.prop; } catch (e) { console.log(e.stack); }
try { undefinedName + 1; } catch (e) { console.log(e.stack); }
try { [3, 1, 2].sort(() => { throw new Error('in sort'); }); } catch (e) { console.log(e.stack); }
try { JSON.parse('{'); } catch (e) { console.log(e.stack); }
try { eval('\n  (function () { throw new Error("in eval"); })()'); } catch (e) { console.log(e.stack); }
try { new Function('x', 'return x.y.z')({}); } catch (e) { console.log(e.stack); }
const holder = {}; Error.captureStackTrace(holder); console.log(holder.stack);
function hidden() { const h = {}; Error.captureStackTrace(h, hidden); return h.stack; }
console.log(hidden());
const saved = Error.prepareStackTrace;
Error.prepareStackTrace = (err, sites) => sites.map((s) => `${s.getFunctionName()}@${s.getLineNumber()}:${s.getColumnNumber()}`).join(' < ');
console.log(new Error('custom').stack, typeof saved);
Error.prepareStackTrace = saved;
const limit = Error.stackTraceLimit;
Error.stackTraceLimit = 2; console.log(new Error('two').stack);
Error.stackTraceLimit = Infinity; console.log(new Error('all').stack.split('\n').length);
Error.stackTraceLimit = limit;
console.log(Object.getOwnPropertyNames(Error).sort().join(','), typeof Error.prepareStackTrace, Error.prepareStackTrace === saved);
async function later() { await null; throw new Error('async'); }
later().catch((e) => console.log(e.stack));
setTimeout(function timer() { console.log(new Error('in timer').stack); }, 1);
process.nextTick(() => console.log(new Error('in tick').stack));
