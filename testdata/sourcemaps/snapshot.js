// Runs a bundle (argv[2]) and writes a heap snapshot of it (argv[3]).
require(require('node:path').resolve(process.argv[2]));
require('node:v8').writeHeapSnapshot(process.argv[3]);
