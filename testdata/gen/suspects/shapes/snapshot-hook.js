// Preloaded (node --require) into a shape's server by make-shapes.js: writes a heap snapshot when the driver asks
// over the IPC channel, so the servers themselves carry no test code. The channel exists from the start, so its
// objects are in every snapshot alike.
'use strict';
const v8 = require('v8');
process.on('message', msg => {
  if (msg && msg.snapshot) {
    v8.writeHeapSnapshot(msg.snapshot);
    process.send({written: msg.snapshot});
  }
});
