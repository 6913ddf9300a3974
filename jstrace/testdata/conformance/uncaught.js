// An uncaught exception deep in a module loaded by require: what node
// prints to stderr (the source line, its caret, the stack) and the exit
// status.
const { load } = require('./uncaught-lib.js');
console.log('before');
load({ items: [{ name: 'a' }, null] });
