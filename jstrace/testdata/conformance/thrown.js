// A thrown error made elsewhere, at the top level: the source line printed
// is the throw's.
function make(kind) { const e = new TypeError(kind); e.code = 'E_' + kind; return e; }
const err = make('bad');
if (err) { console.error('about to throw'); throw err; }
